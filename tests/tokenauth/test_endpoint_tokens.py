"""Delegation tokens end to end on the endpoint: Kafka's Java AdminClient and
clients, our DelegationTokenClient and CLI, expiry, rotation."""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

import jaas
from sasl_scram import KafkaPrincipal
from sasl_scram.admin import KafkaConnectionError
from sasl_scram.cli import main
from sasl_scram.config import ClientConfig
from tests.support.clock import FakeClock
from tests.support.endpoint_harness import ADMIN
from tests.support.endpoint_harness import ALICE
from tests.support.endpoint_harness import RunningEndpoint
from tests.support.endpoint_harness import token_extension
from tests.support.javaharness import JavaHarness
from tests.support.javaharness import b64
from tests.support.javaharness import unb64
from tokenauth import DelegationTokenClient
from tokenauth import TokenConfig
from tokenauth import TokenRequestError

_ids = itertools.count()


@pytest.fixture(scope="module")
def java() -> Iterator[JavaHarness]:
    harness = JavaHarness("EndpointClientHarness")
    yield harness
    harness.close()


@pytest.fixture
def clock() -> FakeClock[int]:
    return FakeClock.wall_ms()


@pytest.fixture
def served(clock: FakeClock[int]) -> Iterator[tuple[RunningEndpoint, object]]:
    ext, manager = token_extension(
        ("secret-one",), clock_ms=clock, max_lifetime_ms=3_600_000, expiry_time_ms=600_000
    )
    with RunningEndpoint(
        extensions=[ext], clock_ms=clock, properties={"connections.max.reauth.ms": "60000"}
    ) as ep:
        yield ep, manager


def jaas_line(user: str, password: str, token: bool) -> str:
    return (
        jaas.scram_token_login_line(user, password)
        if token
        else jaas.scram_login_line(user, password)
    )


def props(
    ep: RunningEndpoint, user: str, password: str, token: bool = False, mech: str = "SCRAM-SHA-512"
) -> dict[str, str]:
    return {
        "bootstrap.servers": ep.bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": mech,
        "sasl.jaas.config": jaas_line(user, password, token),
    }


def java_admin(
    java: JavaHarness, ep: RunningEndpoint, user: str, password: str, token: bool = False
) -> str:
    aid = f"t{next(_ids)}"
    text = "".join(f"{k}={v}\n" for k, v in props(ep, user, password, token).items())
    text += "request.timeout.ms=10000\ndefault.api.timeout.ms=15000\n"
    assert java.call("admin", aid, b64(text)) == ["ok"]
    return aid


def parse_token(fields: list[str]) -> dict[str, object]:
    tid, hmac, owner, requester, renewers, issue, expiry, maximum = fields
    return {
        "token_id": unb64(tid).decode(),
        "hmac": hmac,
        "owner": unb64(owner).decode(),
        "requester": unb64(requester).decode(),
        "renewers": unb64(renewers).decode() if renewers != "-" else "",
        "issue": int(issue),
        "expiry": int(expiry),
        "max": int(maximum),
    }


@pytest.mark.jvm
def test_java_admin_token_lifecycle_and_token_login(
    served: tuple[RunningEndpoint, object], java: JavaHarness, clock: FakeClock[int]
) -> None:
    ep, _ = served
    alice = java_admin(java, ep, *ALICE)
    try:
        status, *fields = java.call("createToken", alice, "-1", b64("User:bob"))
        assert status == "ok", unb64(fields[0])
        token = parse_token(fields)
        assert token["owner"] == "User:alice" and token["requester"] == "User:alice"
        assert token["renewers"] == "User:bob"
        assert token["issue"] == clock.now and token["expiry"] == clock.now + 600_000
        assert token["max"] == clock.now + 3_600_000
        # A Java client logs in with the token and acts as the owner.
        tok = java_admin(java, ep, str(token["token_id"]), str(token["hmac"]), token=True)
        try:
            assert java.call("describeCluster", tok)[0] == "ok"
            status, message = java.call("createToken", tok, "-1", "-")
            assert status == "err"
            # DELEGATION_TOKEN_REQUEST_NOT_ALLOWED (64) from a token-authenticated session.
            assert unb64(message).decode() == (
                "UnsupportedByAuthenticationException: "
                "Delegation Token requests are not allowed on "
                "PLAINTEXT/1-way SSL channels and on delegation token authenticated channels."
            )
        finally:
            java.call("close", tok)
        status, count, *described = java.call("describeTokens", alice)
        assert (status, count) == ("ok", "1")
        assert parse_token(unb64(described[0]).decode().split(" "))["token_id"] == token["token_id"]
        clock.now += 1000
        assert java.call("renewToken", alice, str(token["hmac"]), "5000") == [
            "ok",
            str(clock.now + 5000),
        ]
        # Our client sees exactly what Java sees.
        with DelegationTokenClient.connect(ClientConfig.from_properties(props(ep, *ALICE))) as ours:
            [mine] = ours.describe_tokens()
            assert mine.token_id == token["token_id"] and mine.hmac_base64 == token["hmac"]
            assert mine.info.expiry_timestamp_ms == clock.now + 5000
            assert [str(r) for r in mine.info.renewers] == ["User:bob"]
        assert java.call("expireToken", alice, str(token["hmac"]), "-1") == ["ok", str(clock.now)]
        assert java.call("describeTokens", alice) == ["ok", "0"]
        # After the expire the token cannot open a new connection.
        tok = java_admin(java, ep, str(token["token_id"]), str(token["hmac"]), token=True)
        try:
            status, message = java.call("describeCluster", tok)
            assert status == "err" and "SaslAuthenticationException" in unb64(message).decode()
        finally:
            java.call("close", tok)
    finally:
        java.call("close", alice)


@pytest.mark.jvm
def test_java_admin_errors(served: tuple[RunningEndpoint, object], java: JavaHarness) -> None:
    ep, _ = served
    alice = java_admin(java, ep, *ALICE)
    try:
        # Creating for another owner needs CreateTokens on that user (super users only here).
        status, message = java.call("createToken", alice, "-1", "-", b64("User:carol"))
        assert (
            status == "err" and "DelegationTokenAuthorizationException" in unb64(message).decode()
        )
        status, message = java.call("renewToken", alice, b64("no such token"), "1000")
        assert status == "err" and "DelegationTokenNotFoundException" in unb64(message).decode()
        status, message = java.call("createToken", alice, "-1", b64("Group:ops"))
        assert status == "err" and "InvalidPrincipalTypeException" in unb64(message).decode()
    finally:
        java.call("close", alice)
    admin = java_admin(java, ep, *ADMIN)
    try:
        status, *fields = java.call("createToken", admin, "60000", "-", b64("User:carol"))
        assert status == "ok"
        token = parse_token(fields)
        assert token["owner"] == "User:carol" and token["requester"] == "User:admin"
    finally:
        java.call("close", admin)


def test_expired_token_is_refused_before_the_sweep(
    served: tuple[RunningEndpoint, object], clock: FakeClock[int]
) -> None:
    ep, _ = served
    with DelegationTokenClient.connect(ClientConfig.from_properties(props(ep, *ALICE))) as client:
        token = client.create_token(max_lifetime_ms=10_000)
    token_config = ClientConfig.from_properties(
        props(ep, token.token_id, token.hmac_base64, token=True)
    )
    with DelegationTokenClient.connect(token_config) as conn:
        assert conn._conn.session_lifetime_ms == 10_000
    clock.now += 10_001
    with pytest.raises(KafkaConnectionError) as info:
        DelegationTokenClient.connect(token_config)
    assert info.value.error_code == 58


def test_a_server_maximum_lifetime_of_long_max_gives_tokens_that_work() -> None:
    """``delegation.token.max.lifetime.ms=9223372036854775807`` is a valid Kafka setting:
    the timestamps saturate at Long.MAX_VALUE (Kafka 4.x's
    ``DelegationTokenControlManager.sum``), so the answer encodes as INT64 and the
    token can be described, renewed and logged in with over real sockets."""
    long_max = 2**63 - 1
    ext, _ = token_extension(max_lifetime_ms=long_max, expiry_time_ms=long_max)
    with (
        RunningEndpoint(extensions=[ext]) as ep,
        DelegationTokenClient.connect(ClientConfig.from_properties(props(ep, *ALICE))) as client,
    ):
        token = client.create_token()
        assert (token.info.max_timestamp_ms, token.info.expiry_timestamp_ms) == (long_max,) * 2
        assert client.renew_token(token.hmac, long_max) == long_max
        [seen] = client.describe_tokens()
        assert seen.info == token.info
        cfg = ClientConfig.from_properties(props(ep, token.token_id, token.hmac_base64, token=True))
        DelegationTokenClient.connect(cfg).close()


def test_secret_rotation_on_a_running_endpoint(served: tuple[RunningEndpoint, object]) -> None:
    ep, manager = served
    with DelegationTokenClient.connect(ClientConfig.from_properties(props(ep, *ALICE))) as client:
        old = client.create_token()
        manager.update_config(TokenConfig.of("secret-two", "secret-one"))  # type: ignore[attr-defined]
        new = client.create_token()
    for token in (old, new):
        cfg = ClientConfig.from_properties(
            props(ep, token.token_id, token.hmac_base64, token=True, mech="SCRAM-SHA-256")
        )
        DelegationTokenClient.connect(cfg).close()
    manager.update_config(TokenConfig.of("secret-two"))  # type: ignore[attr-defined]
    cfg = ClientConfig.from_properties(props(ep, old.token_id, old.hmac_base64, token=True))
    with pytest.raises(KafkaConnectionError):
        DelegationTokenClient.connect(cfg)
    cfg = ClientConfig.from_properties(props(ep, new.token_id, new.hmac_base64, token=True))
    DelegationTokenClient.connect(cfg).close()


def test_our_client_error_codes(served: tuple[RunningEndpoint, object]) -> None:
    ep, _ = served
    with DelegationTokenClient.connect(ClientConfig.from_properties(props(ep, *ALICE))) as alice:
        token = alice.create_token(renewers=[KafkaPrincipal.user("bob")])
    with DelegationTokenClient.connect(
        ClientConfig.from_properties(props(ep, "admin", "admin-secret"))
    ) as admin:
        # admin is a super user but neither owner nor renewer: renew is refused (63).
        with pytest.raises(TokenRequestError) as info:
            admin.renew_token(token.hmac, 1000)
        assert info.value.error_code == 63


def test_disabled_tokens_answer_61() -> None:
    ext, _ = token_extension(())
    with (
        RunningEndpoint(extensions=[ext]) as ep,
        DelegationTokenClient.connect(ClientConfig.from_properties(props(ep, *ALICE))) as client,
    ):
        with pytest.raises(TokenRequestError) as info:
            client.create_token()
        assert info.value.error_code == 61


def test_cli_matches_client(served: tuple[RunningEndpoint, object], tmp_path: Path) -> None:
    ep, _ = served
    config = tmp_path / "client.properties"
    config.write_text("".join(f"{k}={v}\n" for k, v in props(ep, *ALICE).items()))
    base = [
        "delegation-tokens",
        "--bootstrap-server",
        ep.bootstrap,
        "--command-config",
        str(config),
    ]

    def run(*argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        code = main([*base, *argv], stdin=io.StringIO(), stdout=out, stderr=err)
        return code, out.getvalue(), err.getvalue()

    code, out, _ = run(
        "--create", "--max-life-time-period", "-1", "--renewer-principal", "User:bob"
    )
    assert code == 0
    lines = out.split("\n")
    assert (
        lines[0]
        == "Calling create token operation with renewers :[User:bob] , max-life-time-period :-1"
    )
    token_id = lines[1].removeprefix("Created delegation token with tokenId : ")
    header = "TOKENID HMAC OWNER REQUESTER RENEWERS ISSUEDATE EXPIRYDATE MAXDATE"
    assert lines[2] == "" and lines[3].split() == header.split()
    row = lines[5].split()
    assert row[0] == token_id and row[2:5] == ["User:alice", "User:alice", "[User:bob]"]
    hmac = row[1]
    code, out, _ = run("--describe")
    assert code == 0 and out.startswith(
        "Calling describe token operation for current user.\nTotal number of tokens : 1\n"
    )
    assert hmac not in out and "[hidden]" in out
    code, out, _ = run("--describe", "--show-hmac")
    assert hmac in out
    with DelegationTokenClient.connect(ClientConfig.from_properties(props(ep, *ALICE))) as client:
        assert [t.hmac_base64 for t in client.describe_tokens()] == [hmac]
    code, out, _ = run("--renew", "--hmac", hmac, "--renew-time-period", "1000")
    assert code == 0 and "Completed renew operation. New expiry date : " in out and hmac not in out
    code, out, _ = run("--expire", "--hmac", hmac, "--expiry-time-period", "-1")
    assert code == 0 and out.endswith("\n")  # Kafka's tool leaves the line open; ours ends it
    code, _, err = run("--renew", "--hmac", hmac, "--renew-time-period", "1000")
    assert (code, err) == (
        1,
        "kafka-scram delegation-tokens: error: "
        "org.apache.kafka.common.errors.DelegationTokenNotFoundException: "
        "Delegation Token is not found on server. (no live token has this HMAC: it is "
        "mistyped, or its token expired and was removed; --describe --show-hmac lists the "
        "live tokens with their HMACs)\n",
    )
    code, _, err = run("--create")
    assert code == 2 and "Missing required argument --max-life-time-period for --create" in err
    code, _, err = run("--describe", "--hmac", hmac)
    assert code == 2 and "can't be used with --describe" in err
