"""ClusterTokenIssuer: the owner-token RPCs, their refusals and its one connection,
over a fake connection (the real brokers: test_token_issuer_real_brokers.py)."""

from __future__ import annotations

from typing import Any
from typing import cast

import pytest

from sasl_scram.admin import ClusterTokenIssuer
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import KafkaConnectionError
from sasl_scram.admin._token_issuer import IDLE_RECONNECT_S
from sasl_scram.config import ClientConfig
from sasl_scram.config import ClientConfigError
from sasl_scram.frontdoor import OwnerTokenError
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode
from tests.support.clock import FakeClock

PASSWORD = "svc-secret-Zq9"
CONFIG = ClientConfig.from_properties(
    {
        "bootstrap.servers": "127.0.0.1:9092",
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
        f'required username="svc" password="{PASSWORD}";',
    }
)
HMAC = bytes(range(64))


class FakeConnection:
    """Answers each request with the next scripted response (or raises it)."""

    def __init__(self, answers: list[dict[str, Any] | Exception], create_version: int = 3) -> None:
        self.answers = answers
        self.create_version = create_version
        self.sent: list[tuple[int, dict[str, Any], int]] = []
        self.session_lifetime_ms = 0
        self.closed = False

    def version_for(self, api_key: int) -> int:
        return self.create_version if api_key == ApiKey.CREATE_DELEGATION_TOKEN else 2

    def request(
        self, api_key: int, body: dict[str, Any], version: int | None = None
    ) -> dict[str, Any]:
        assert version is not None
        self.sent.append((api_key, body, version))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def close(self) -> None:
        self.closed = True


def created(owner: str = "alice", error: int = 0) -> dict[str, Any]:
    return {
        "error_code": error,
        "principal_type": "User",
        "principal_name": owner,
        "token_id": "tok-1",
        "hmac": HMAC,
        "expiry_timestamp_ms": 2000,
        "max_timestamp_ms": 9000,
    }


def issuer_over(
    *connections: FakeConnection, clock: FakeClock[float] | None = None
) -> ClusterTokenIssuer:
    pending = list(connections)
    return ClusterTokenIssuer(
        CONFIG,
        connect=lambda: cast(KafkaConnection, pending.pop(0)),
        clock=clock or FakeClock(0.0),
    )


def test_create_names_the_owner_and_the_login_as_renewer() -> None:
    conn = FakeConnection([created()])
    token = issuer_over(conn).create("alice")
    assert (token.token_id, token.hmac, token.expiry_ms, token.max_ms) == (
        "tok-1",
        HMAC,
        2000,
        9000,
    )
    [(api_key, body, version)] = conn.sent
    assert (api_key, version) == (ApiKey.CREATE_DELEGATION_TOKEN, 3)
    assert body == {
        "owner_principal_type": "User",
        "owner_principal_name": "alice",
        "renewers": [{"principal_type": "User", "principal_name": "svc"}],
        "max_lifetime_ms": -1,
    }


def test_renew_and_expire_use_the_clusters_periods() -> None:
    conn = FakeConnection([{"error_code": 0, "expiry_timestamp_ms": 5000}] * 2)
    issuer = issuer_over(conn)
    assert issuer.renew(HMAC) == 5000
    issuer.expire(HMAC)
    assert [(k, b) for k, b, _ in conn.sent] == [
        (ApiKey.RENEW_DELEGATION_TOKEN, {"hmac": HMAC, "renew_period_ms": -1}),
        (ApiKey.EXPIRE_DELEGATION_TOKEN, {"hmac": HMAC, "expiry_time_period_ms": -1}),
    ]


def test_a_token_owned_by_someone_else_is_refused() -> None:
    with pytest.raises(OwnerTokenError, match="owned by User:svc, not User:alice"):
        issuer_over(FakeConnection([created(owner="svc")])).create("alice")


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
            "the upstream login 'svc' may not create tokens for User:alice: grant it "
            "CreateTokens on that user (kafka-acls.sh --add --allow-principal User:svc "
            "--operation CreateTokens --user-principal User:alice) or make it a super user "
            "(super.users)",
        ),
        (
            ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED,
            "the cluster has delegation tokens disabled: set delegation.token.secret.key "
            "on every broker and controller",
        ),
        (ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, "only over SASL"),
        (
            ErrorCode.INVALID_PRINCIPAL_TYPE,
            "owner token create refused by the cluster: INVALID_PRINCIPAL_TYPE "
            "(Supplied principalType is not supported.)",
        ),
    ],
)
def test_a_refusal_is_one_line_with_its_fix(error: ErrorCode, expected: str) -> None:
    with pytest.raises(OwnerTokenError) as info:
        issuer_over(FakeConnection([created(error=error)])).create("alice")
    message = str(info.value)
    assert expected in message
    assert "\n" not in message and PASSWORD not in message
    assert info.value.error_code == error


def test_a_cluster_older_than_kafka_3_3_cannot_name_an_owner() -> None:
    conn = FakeConnection([], create_version=2)
    with pytest.raises(OwnerTokenError, match=r"v3 \(KIP-373\) needs Kafka 3.3"):
        issuer_over(conn).create("alice")
    assert conn.sent == []


def test_a_refused_login_and_an_unreachable_cluster() -> None:
    refused = KafkaConnectionError("Authentication failed", ErrorCode.SASL_AUTHENTICATION_FAILED)

    def login_refused() -> KafkaConnection:
        raise refused

    issuer = ClusterTokenIssuer(CONFIG, connect=login_refused)
    with pytest.raises(OwnerTokenError, match="the cluster refused the upstream login 'svc'"):
        issuer.create("alice")
    gone = FakeConnection([KafkaConnectionError("connection failed: reset")])
    with pytest.raises(OwnerTokenError, match="renew: the cluster is unreachable"):
        issuer_over(gone).renew(HMAC)
    assert gone.closed


def test_a_request_that_fails_on_a_reused_connection_is_sent_once_more() -> None:
    first = FakeConnection([created(), KafkaConnectionError("connection failed: EOF")])
    second = FakeConnection([created()])
    issuer = issuer_over(first, second)
    issuer.create("alice")
    assert issuer.create("alice").token_id == "tok-1"
    assert first.closed and len(second.sent) == 1


def test_a_connection_unused_too_long_or_near_its_session_end_is_replaced() -> None:
    clock = FakeClock(0.0)
    first = FakeConnection([created()])
    second = FakeConnection([created(), created()])
    second.session_lifetime_ms = 100_000
    third = FakeConnection([created()])
    issuer = issuer_over(first, second, third, clock=clock)
    issuer.create("alice")
    clock.advance(IDLE_RECONNECT_S)
    issuer.create("alice")
    assert first.closed and not second.closed
    clock.advance(50.0)
    issuer.create("alice")
    clock.advance(40.0)  # 90 % of the session
    issuer.create("alice")
    assert second.closed and len(second.sent) == 2 and len(third.sent) == 1


def test_a_login_that_is_not_scram_is_refused_at_once() -> None:
    plaintext = ClientConfig.from_properties(
        {"bootstrap.servers": "127.0.0.1:9092", "security.protocol": "PLAINTEXT"}
    )
    with pytest.raises(OwnerTokenError, match="owner-token needs a SCRAM login"):
        ClusterTokenIssuer(plaintext)


def test_repr_names_the_login_only() -> None:
    issuer = issuer_over()
    assert repr(issuer) == "ClusterTokenIssuer(login='svc')" and issuer.login == "svc"


def test_a_configuration_the_connection_cannot_use_is_one_line() -> None:
    def unreadable() -> KafkaConnection:
        raise ClientConfigError("ssl.truststore.location: cannot read /nowhere.pem")

    issuer = ClusterTokenIssuer(CONFIG, connect=unreadable)
    with pytest.raises(OwnerTokenError, match=r"^upstream\.ssl\.truststore\.location: cannot read"):
        issuer.create("alice")
