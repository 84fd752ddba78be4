"""Every successful login writes one line of the audit trail, where its verdict
becomes final: the first login and each KIP-368 re-authentication, a user's
and a delegation token's (named by its id, never its HMAC), over real sockets
against a real endpoint. A failed login writes none."""

from __future__ import annotations

import logging
import re

import pytest

from sasl_scram.audit import AUDIT_LOGGER_NAME
from sasl_scram.config import ClientConfig
from tests.sasl_scram.endpoint.test_metrics import Client
from tests.support.endpoint_harness import ALICE
from tests.support.endpoint_harness import RunningEndpoint
from tests.support.endpoint_harness import token_extension

REAUTH = {"connections.max.reauth.ms": "60000", "connection.failed.authentication.delay.ms": "0"}


def audit_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == AUDIT_LOGGER_NAME]


def login_line(principal: str, resource: str, port: int, reauthentication: bool) -> str:
    """The expected line, as a pattern: the connection's id is the server's."""
    return (
        re.escape(
            f"Principal = {principal} is Allowed Operation = Authenticate from host = 127.0.0.1 "
            f"on resource = {resource} for request = SaslAuthenticate with "
            f"mechanism = SCRAM-SHA-256, reauthentication = {str(reauthentication).lower()}, "
            "listener = SASL_PLAINTEXT, connectionId = "
        )
        + r"SASL_PLAINTEXT-\d+"
        + re.escape(f", peerPort = {port}")
    )


def test_a_login_and_its_reauthentication_are_each_a_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with (
        caplog.at_level(logging.INFO, logger=AUDIT_LOGGER_NAME),
        RunningEndpoint(properties=REAUTH) as ep,
    ):
        client = Client(ep.port)
        port = client.sock.getsockname()[1]
        assert client.login(*ALICE)
        assert client.login(*ALICE)  # KIP-368, in band on the same connection
        # An answer after the last login: its line is written.
        client.roundtrip(18, 3, {"client_software_name": "t", "client_software_version": "1"})
        client.sock.close()
    first, again = audit_lines(caplog)
    assert re.fullmatch(login_line("User:alice", "User:LITERAL:alice", port, False), first)
    assert re.fullmatch(login_line("User:alice", "User:LITERAL:alice", port, True), again)
    assert first.split("connectionId = ")[1] == again.split("connectionId = ")[1]
    assert all(r.levelno == logging.INFO for r in caplog.records if r.name == AUDIT_LOGGER_NAME)


def test_a_token_login_names_the_token_by_its_id_never_its_hmac(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from tokenauth import DelegationTokenClient

    extension, _ = token_extension()
    with RunningEndpoint(properties=REAUTH, extensions=[extension]) as ep:
        owner = ClientConfig.from_properties(
            {
                "bootstrap.servers": ep.bootstrap,
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "SCRAM-SHA-256",
                "sasl.jaas.config": (
                    "org.apache.kafka.common.security.scram.ScramLoginModule required "
                    f'username="{ALICE[0]}" password="{ALICE[1]}";'
                ),
            }
        )
        with DelegationTokenClient.connect(owner) as tokens:
            token = tokens.create_token([], 600_000)
        with caplog.at_level(logging.DEBUG):
            client = Client(ep.port)
            port = client.sock.getsockname()[1]
            assert client.login(token.token_id, token.hmac_base64, token=True)
            client.roundtrip(18, 3, {"client_software_name": "t", "client_software_version": "1"})
            client.sock.close()
    (line,) = audit_lines(caplog)
    resource = f"DelegationToken:LITERAL:{token.token_id}"
    assert re.fullmatch(login_line("User:alice", resource, port, False), line)
    for secret in (token.hmac_base64, token.hmac.hex()):
        assert secret not in caplog.text


def test_a_failed_login_writes_no_login_line(caplog: pytest.LogCaptureFixture) -> None:
    with (
        caplog.at_level(logging.INFO, logger=AUDIT_LOGGER_NAME),
        RunningEndpoint(properties=REAUTH) as ep,
    ):
        client = Client(ep.port)
        assert not client.login("alice", "not-the-password")
        client.sock.close()
    assert audit_lines(caplog) == []


def test_with_the_audit_logger_off_nothing_is_written(caplog: pytest.LogCaptureFixture) -> None:
    with (
        caplog.at_level(logging.WARNING, logger=AUDIT_LOGGER_NAME),
        RunningEndpoint(properties=REAUTH) as ep,
    ):
        client = Client(ep.port)
        assert client.login(*ALICE)
        client.roundtrip(18, 3, {"client_software_name": "t", "client_software_version": "1"})
        client.sock.close()
    assert audit_lines(caplog) == []
