"""Every client integration against real Apache Kafka brokers.

Each test runs on Kafka 4.4 in KRaft mode and on Kafka 3.9 in ZooKeeper mode
(``kafka_broker``). A user logs in with SCRAM-SHA-256 and SCRAM-SHA-512, and
with a delegation token it owns, produces records to a new topic and consumes
them back; a wrong password and an expired token are refused with Kafka's own
authentication error, as each client reports it. confluent-kafka cannot send
the ``tokenauth`` extension: that is shown on the wire.
"""

from __future__ import annotations

import re

import pytest

from sasl_scram.integrations import UnsupportedByClient
from sasl_scram.integrations import confluent
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode
from sasl_scram.kafka import FrameBuffer
from sasl_scram.kafka import decode_request
from sasl_scram.kafka import decode_request_header
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.tcp_proxy import TcpProxy
from tokenauth import DelegationTokenClient
from tokenauth import TokenRequestError

from .real_clients import INVALID_CREDENTIALS
from .real_clients import REFUSALS
from .real_clients import ROUNDTRIPS
from .real_clients import Owner
from .real_clients import librdkafka_refusal
from .real_clients import owner_on
from .real_clients import pure_sasl_connect

MECHS = ["SCRAM-SHA-256", "SCRAM-SHA-512"]
TOKEN_CLIENTS = ["kafka-python", "aiokafka"]  # librdkafka cannot send tokenauth=true


@pytest.fixture
def owner(kafka_broker: KafkaBroker) -> Owner:
    return owner_on(kafka_broker)


def records(topic: str) -> list[bytes]:
    return [f"{topic}/{i}".encode() for i in range(3)]


@pytest.mark.parametrize("mechanism", MECHS)
@pytest.mark.parametrize("client", sorted(ROUNDTRIPS))
def test_user_produces_and_consumes(owner: Owner, client: str, mechanism: str) -> None:
    topic = unique_name(client)
    values = records(topic)
    assert ROUNDTRIPS[client](owner.user_properties(mechanism), topic, values) == values


@pytest.mark.parametrize("mechanism", MECHS)
@pytest.mark.parametrize("client", TOKEN_CLIENTS)
def test_token_produces_and_consumes(owner: Owner, client: str, mechanism: str) -> None:
    topic = unique_name(client)
    values = records(topic)
    props = owner.token_properties(owner.token, mechanism)
    assert ROUNDTRIPS[client](props, topic, values) == values


@pytest.mark.parametrize("mechanism", MECHS)
def test_pure_sasl_logs_in_as_the_user_and_with_its_token(owner: Owner, mechanism: str) -> None:
    """pure-sasl makes the SASL messages; the session is the user's, then the
    token's: Kafka answers DescribeDelegationToken for the user and refuses it
    on a token-authenticated session (KafkaApis: no token requests over tokens)."""
    token = owner.token
    conn = pure_sasl_connect(owner.user_properties(mechanism))
    with conn:
        assert conn.sasl.complete  # the server-final's signature checked out
        described = DelegationTokenClient(conn).describe_tokens()
        assert token.token_id in {t.token_id for t in described}
    conn = pure_sasl_connect(owner.token_properties(token, mechanism))
    with conn:
        assert conn.sasl.complete
        with pytest.raises(TokenRequestError) as refused:
            DelegationTokenClient(conn).describe_tokens()
        assert refused.value.error_code == ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED


@pytest.mark.parametrize("client", sorted(REFUSALS))
def test_wrong_password_is_the_brokers_authentication_error(
    kafka_broker: KafkaBroker, owner: Owner, client: str, caplog: pytest.LogCaptureFixture
) -> None:
    props = owner.user_properties("SCRAM-SHA-512", password="not-the-password")
    reason = REFUSALS[client](kafka_broker, props, caplog)
    assert reason == INVALID_CREDENTIALS.format(mechanism="SCRAM-SHA-512")
    assert "not-the-password" not in caplog.text


@pytest.mark.parametrize("client", [*TOKEN_CLIENTS, "pure-sasl"])
def test_expired_token_is_the_brokers_authentication_error(
    kafka_broker: KafkaBroker, owner: Owner, client: str, caplog: pytest.LogCaptureFixture
) -> None:
    token = owner.create_token()
    owner.expire_token(token)
    props = owner.token_properties(token, "SCRAM-SHA-256")
    reason = REFUSALS[client](kafka_broker, props, caplog)
    assert reason == INVALID_CREDENTIALS.format(mechanism="SCRAM-SHA-256")
    assert token.hmac_base64 not in caplog.text


def client_first_messages(sent: bytes) -> list[bytes]:
    """The first SaslAuthenticate payload of a connection: SCRAM's client-first."""
    frames = FrameBuffer(1 << 20)
    frames.feed(sent)
    messages = []
    while (payload := frames.next_frame()) is not None:
        header, _ = decode_request_header(payload)
        if header.api_key == ApiKey.SASL_AUTHENTICATE:
            messages.append(decode_request(payload)[2]["auth_bytes"])
    return messages[:1]


def test_confluent_kafka_cannot_log_in_with_a_token(
    kafka_broker: KafkaBroker, owner: Owner
) -> None:
    """The token logs in with our client (``create_token`` waited for that), but
    librdkafka's client-first message has no place for ``tokenauth=true``: given
    the token as a user name, it sends ``n,,n=<id>,r=<nonce>`` and the broker
    looks for a user; an extension smuggled into the name is escaped (RFC 5802
    ``=2C``, ``=3D``) and stays part of the name."""
    token = owner.token
    with pytest.raises(UnsupportedByClient, match="librdkafka"):
        confluent.client_config(owner.token_properties(token, "SCRAM-SHA-256"))
    smuggled = token.token_id + ",tokenauth=true"
    with TcpProxy("127.0.0.1", kafka_broker.port, record=True) as proxy:
        for name in (token.token_id, smuggled):
            config = {
                "bootstrap.servers": proxy.address,
                "security.protocol": "sasl_plaintext",
                "sasl.mechanism": "SCRAM-SHA-256",
                "sasl.username": name,
                "sasl.password": token.hmac_base64,
            }
            reason = librdkafka_refusal(config)
            assert reason == INVALID_CREDENTIALS.format(mechanism="SCRAM-SHA-256")
        sent = [first for data in proxy.recorded for first in client_first_messages(bytes(data))]
    names = [re.fullmatch(rb"n,,n=([^,]*),r=[^,]+", first) for first in sent]
    assert all(names) and len(names) >= 2, sent
    escaped = (token.token_id + "=2Ctokenauth=3Dtrue").encode()
    assert {m[1] for m in names if m} == {token.token_id.encode(), escaped}
