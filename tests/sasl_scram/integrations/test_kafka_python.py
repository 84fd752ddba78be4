"""kafka-python 3.x with our SCRAM mechanism, against the endpoint on loopback."""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaAdminClient
from kafka import KafkaConsumer
from kafka.errors import KafkaConfigurationError
from kafka.errors import KafkaTimeoutError
from kafka.errors import SaslAuthenticationFailedError

import jaas
from sasl_scram import SCRAM_SHA_256
from sasl_scram import AuthenticationFailed
from sasl_scram import Grant
from sasl_scram import ScramCredential
from sasl_scram import ScramServer
from sasl_scram.integrations import IntegrationError
from sasl_scram.integrations import PropertiesFileCredentials
from sasl_scram.integrations import StaticCredentials
from sasl_scram.integrations import kafka_python
from sasl_scram.store import ScramUpsertion

from .conftest import ENDPOINT_LOGGER
from .conftest import MECHS
from .conftest import RotatingTokens
from .conftest import TokenEndpoint
from .conftest import client_properties
from .conftest import own_scram_kwargs
from .conftest import token_credentials
from .conftest import user_line
from .conftest import write_properties

# kafka-python waits 30 s for a bootstrap by default; refused logins should fail fast.
FAIL_FAST_MS = 1500
AUTH_LINE = re.compile(r"\[(?P<conn>[^\]]+)\] (?P<re>re-)?authenticated User:(?P<user>\S+) with")


@pytest.fixture
def installed() -> Iterator[None]:
    import kafka.net.sasl as sasl

    own = dict(sasl.SASL_MECHANISMS)
    kafka_python.install()
    yield
    kafka_python.uninstall()
    assert own == sasl.SASL_MECHANISMS


def admin_topics(kwargs: dict[str, Any]) -> list[str]:
    with KafkaAdminClient(**kwargs) as admin:  # closes on the way out
        return list(admin.list_topics())


def consumer_topics(kwargs: dict[str, Any]) -> set[str]:
    with KafkaConsumer(**kwargs) as consumer:
        return set(consumer.topics())


@pytest.mark.parametrize("mechanism", MECHS)
def test_user_login_admin_and_consumer(
    installed: None, token_endpoint: TokenEndpoint, mechanism: str
) -> None:
    props = client_properties(token_endpoint.ep, user_line(), mechanism)
    kwargs = kafka_python.client_kwargs(props)
    assert kwargs["sasl_mechanism"] == mechanism
    assert admin_topics(kwargs) == []
    assert consumer_topics(kwargs) == set()


@pytest.mark.parametrize("mechanism", MECHS)
def test_delegation_token_login_admin_and_consumer(
    installed: None, token_endpoint: TokenEndpoint, mechanism: str, endpoint_log: Any
) -> None:
    kwargs = kafka_python.client_kwargs(token_endpoint.token_properties(mechanism))
    assert admin_topics(kwargs) == []
    assert consumer_topics(kwargs) == set()
    token_logins = [r for r in endpoint_log.messages if "(delegation token)" in r]
    assert token_logins and all("User:alice" in m for m in token_logins)


def endpoint_auth_failures(caplog: Any, since: int = 0) -> list[str]:
    return [
        m
        for m in caplog.messages[since:]
        if m.startswith("[") and "Failed authentication with /" in m
    ]


def own_scram_admin(bootstrap: str, username: str, password: str) -> KafkaAdminClient:
    """kafka-python's own settings for SCRAM; fails fast when the login is refused."""
    return KafkaAdminClient(
        bootstrap_servers=bootstrap,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="SCRAM-SHA-256",
        sasl_plain_username=username,
        sasl_plain_password=password,
        bootstrap_timeout_ms=FAIL_FAST_MS,
    )


@pytest.mark.slow
def test_kafka_pythons_own_scram_cannot_send_tokens(
    token_endpoint: TokenEndpoint, caplog: Any
) -> None:
    """The control for the token tests: without install(), the same token is refused."""
    caplog.set_level(logging.DEBUG, logger=ENDPOINT_LOGGER)
    assert not kafka_python.is_installed()
    token = token_endpoint.create_token()
    with pytest.raises(KafkaTimeoutError, match="Unable to bootstrap"):
        own_scram_admin(token_endpoint.bootstrap, token.token_id, token.hmac_base64)
    assert endpoint_auth_failures(caplog)


@pytest.mark.slow
def test_username_escaping(token_endpoint: TokenEndpoint, caplog: Any) -> None:
    """kafka-python's own client sends ``n=odd,name=x`` unescaped; ours sends ``odd=2Cname=3Dx``."""
    caplog.set_level(logging.DEBUG, logger=ENDPOINT_LOGGER)
    user = ("odd,name=x", "odd-secret")
    store = token_endpoint.ep.store
    store.alter([], [ScramUpsertion.from_password(user[0], SCRAM_SHA_256, user[1])])
    with pytest.raises(KafkaTimeoutError):
        own_scram_admin(token_endpoint.bootstrap, *user)
    assert endpoint_auth_failures(caplog)
    with kafka_python.installed():
        admin = own_scram_admin(token_endpoint.bootstrap, *user)  # same settings, our mechanism
        try:
            assert admin.list_topics() == []
        finally:
            admin.close()
        kwargs = kafka_python.client_kwargs(client_properties(token_endpoint.ep, user_line(user)))
        assert admin_topics(kwargs) == []


def test_wrong_password_fails_without_leaking(
    installed: None, token_endpoint: TokenEndpoint, caplog: Any
) -> None:
    caplog.set_level(logging.DEBUG)
    line = jaas.scram_login_line("alice", "wrong-secret-123")
    kwargs = kafka_python.client_kwargs(client_properties(token_endpoint.ep, line))
    mark = len(caplog.messages)
    # The refusal itself, at once (tests/.../test_fail_fast.py), not a bootstrap timeout.
    with pytest.raises(SaslAuthenticationFailedError) as info:
        KafkaAdminClient(**kwargs)
    assert endpoint_auth_failures(caplog, mark)
    assert "wrong-secret-123" not in str(info.value)
    assert not [m for m in caplog.messages if "wrong-secret-123" in m]


class Client:
    """A KafkaAdminClient or a KafkaConsumer, and a call that goes over the wire."""

    def __init__(self, kind: str, kwargs: dict[str, Any]) -> None:
        self.kind = kind
        self.client: Any = (
            KafkaAdminClient(**kwargs) if kind == "admin" else KafkaConsumer(**kwargs)
        )

    def topics(self) -> list[str]:
        if self.kind == "admin":
            return list(self.client.list_topics())
        return sorted(self.client.topics())  # KafkaConsumer.topics() fetches metadata

    def close(self) -> None:
        self.client.close()


def wait_for_reauth(
    client: Client, caplog: Any, since: int, timeout: float = 8.0
) -> list[re.Match[str]]:
    """Keep the client busy until the endpoint logs a re-authentication."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        client.topics()
        matches = [m for m in map(AUTH_LINE.search, caplog.messages[since:]) if m and m["re"]]
        if matches:
            return matches
        time.sleep(0.1)
    raise AssertionError("no re-authentication within the deadline")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["admin", "consumer"])
def test_reauthentication_picks_up_a_rotated_token(
    installed: None, reauth_endpoint: TokenEndpoint, reauth_token: Any, caplog: Any, kind: str
) -> None:
    old = reauth_token
    provider = RotatingTokens(old)
    props = client_properties(reauth_endpoint.ep, None)  # no JAAS line: the provider decides
    client = Client(kind, kafka_python.client_kwargs(props, credentials=provider))
    try:
        client.topics()
        first_logins = {m["conn"] for m in map(AUTH_LINE.search, caplog.messages) if m}
        assert first_logins and set(provider.handed_out) == {old.token_id}

        new = reauth_endpoint.create_token()
        provider.current = new
        # The old token is gone before any re-authentication: only the new one can succeed.
        reauth_endpoint.expire_token(old)
        mark = len(caplog.messages)
        reauths = wait_for_reauth(client, caplog, mark)

        # Same connection, re-authenticated as the token owner, with the new token.
        assert {m["conn"] for m in reauths} <= first_logins
        assert all(m["user"] == "alice" for m in reauths)
        assert provider.handed_out[-1] == new.token_id
        assert not [m for m in caplog.messages[mark:] if "failed" in m or "closing" in m]
        assert client.topics() == []
    finally:
        client.close()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["admin", "consumer"])
def test_reauthentication_picks_up_a_rotated_token_file(
    installed: None,
    reauth_endpoint: TokenEndpoint,
    reauth_token: Any,
    caplog: Any,
    tmp_path: Path,
    kind: str,
) -> None:
    """The token file is rewritten (as a renewer would) and the old token expired:
    the open connection re-authenticates with the file's new token."""
    old = reauth_token
    path = tmp_path / "token.properties"

    def rotate_to(token: Any) -> None:
        line = jaas.scram_token_login_line(token.token_id, token.hmac_base64)
        write_properties(path.with_suffix(".tmp"), {"sasl.jaas.config": line})
        path.with_suffix(".tmp").replace(path)

    rotate_to(old)
    props = client_properties(reauth_endpoint.ep, None)
    provider = PropertiesFileCredentials(path)
    client = Client(kind, kafka_python.client_kwargs(props, credentials=provider))
    try:
        client.topics()
        first_logins = {m["conn"] for m in map(AUTH_LINE.search, caplog.messages) if m}
        new = reauth_endpoint.create_token()
        rotate_to(new)
        reauth_endpoint.expire_token(old)
        mark = len(caplog.messages)
        reauths = wait_for_reauth(client, caplog, mark)
        # Same connection, still alice: only the file's new token can have logged in.
        assert {m["conn"] for m in reauths} <= first_logins
        assert all(m["user"] == "alice" for m in reauths)
        assert not [m for m in caplog.messages[mark:] if "failed" in m or "closing" in m]
        assert client.topics() == []
    finally:
        client.close()


@pytest.mark.slow
def test_static_token_cannot_survive_its_expiry(
    installed: None, reauth_endpoint: TokenEndpoint, reauth_token: Any, caplog: Any
) -> None:
    """The control for the test above: without rotation the re-authentication fails."""
    old = reauth_token
    credentials = StaticCredentials(token_credentials(old))
    props = client_properties(reauth_endpoint.ep, None)
    admin = KafkaAdminClient(**kafka_python.client_kwargs(props, credentials=credentials))
    try:
        admin.list_topics()
        reauth_endpoint.expire_token(old)
        mark = len(caplog.messages)
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            failed = [m for m in caplog.messages[mark:] if "re-authentication failed" in m]
            if failed:
                break
            with contextlib.suppress(Exception):  # reconnects with the dead token fail too
                admin.list_topics()
            time.sleep(0.1)
        else:
            raise AssertionError("the expired token kept working")
    finally:
        admin.close()


def test_uninstall_restores_kafka_pythons_mechanism(token_endpoint: TokenEndpoint) -> None:
    import kafka.net.sasl as sasl
    from kafka.net.sasl.scram import SaslMechanismScram

    assert sasl.get_sasl_mechanism("SCRAM-SHA-256") is SaslMechanismScram
    with kafka_python.installed():
        assert kafka_python.is_installed()
        assert sasl.get_sasl_mechanism("SCRAM-SHA-512") is kafka_python.ScramSaslMechanism
        kafka_python.install()  # idempotent
    assert not kafka_python.is_installed()
    for name in kafka_python.MECHANISM_NAMES:
        assert sasl.get_sasl_mechanism(name) is SaslMechanismScram
    kafka_python.uninstall()  # a no-op now
    # kafka-python's own mechanism still logs users in.
    admin = KafkaAdminClient(**own_scram_kwargs(token_endpoint.bootstrap))
    try:
        assert admin.list_topics() == []
    finally:
        admin.close()


def test_client_kwargs_needs_install(token_endpoint: TokenEndpoint) -> None:
    with pytest.raises(IntegrationError, match=r"install\(\)"):
        kafka_python.client_kwargs(client_properties(token_endpoint.ep, user_line()))


def test_mechanism_reports_configuration_errors() -> None:
    with pytest.raises(KafkaConfigurationError, match="sasl_plain_username"):
        kafka_python.ScramSaslMechanism(sasl_mechanism="SCRAM-SHA-256", host="h")
    with pytest.raises(KafkaConfigurationError, match="SCRAM-SHA-1"):
        kafka_python.ScramSaslMechanism(sasl_mechanism="SCRAM-SHA-1", sasl_plain_username="u")


def test_server_error_reply_is_reported() -> None:
    """An RFC 5802 ``e=`` server-final (Kafka never sends one) fails cleanly, not with KeyError."""
    credential = ScramCredential.from_password(SCRAM_SHA_256, "right-password")
    server = ScramServer(SCRAM_SHA_256, lookup=lambda r: Grant.of(credential), rfc_mode=True)
    mech = kafka_python.ScramSaslMechanism(
        sasl_mechanism="SCRAM-SHA-256", sasl_plain_username="alice", sasl_plain_password="wrong"
    )
    assert not mech.receive(server.step(mech.auth_bytes()))
    client_final = mech.auth_bytes()
    with pytest.raises(AuthenticationFailed) as refused:
        server.step(client_final)
    server_final = refused.value.server_final
    assert server_final == b"e=invalid-proof"
    with pytest.raises(SaslAuthenticationFailedError, match="e=invalid-proof"):
        mech.receive(server_final)
    assert mech.is_done() and not mech.is_authenticated()
