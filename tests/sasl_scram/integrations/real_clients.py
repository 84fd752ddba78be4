"""The client integrations against real Apache Kafka brokers: shared pieces.

An :class:`Owner` is a SCRAM user on one broker (both mechanisms) who creates
delegation tokens there with ``tokenauth.DelegationTokenClient``. The
``*_roundtrip`` functions produce records with one client library through our
integration and consume them back; the ``*_refusal`` functions log in with
credentials the broker refuses and return the broker's error message as that
client reports it. :func:`established_ports` counts this process's TCP
connections to a port, from the kernel's socket table, to show that a
re-authentication happened on the connection the client already had.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import pytest

import jaas
from sasl_scram import ScramMechanism
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import KafkaConnectionError
from sasl_scram.admin import SaslCredentials
from sasl_scram.config import ClientConfig
from sasl_scram.integrations import ScramCredentials
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.proc_tcp import established_to
from tokenauth import DelegationToken
from tokenauth import DelegationTokenClient

__all__ = [
    "DELIVERY_S",
    "INVALID_CREDENTIALS",
    "REFUSALS",
    "ROUNDTRIPS",
    "BrokerLog",
    "LogLines",
    "Owner",
    "PureSaslConnection",
    "established_ports",
    "librdkafka_refusal",
    "owner_on",
    "pure_sasl_connect",
]

#: Kafka's SaslAuthenticate error message for a refused SCRAM proof
#: (``SaslServerAuthenticator``), for a wrong password and an unknown or expired token alike.
INVALID_CREDENTIALS = (
    "Authentication failed during authentication due to invalid credentials "
    "with SASL mechanism {mechanism}"
)
# Refused logins must fail fast: kafka-python retries a bootstrap until this deadline.
FAIL_FAST_MS = 1500
# A record reaches a consumer within this (auto topic creation included).
DELIVERY_S = 20.0
_SECRET = "-owner-secret"


@dataclass
class Owner:
    """A SCRAM user on ``broker`` (SCRAM-SHA-256 and -512), owner of the tokens it creates."""

    broker: KafkaBroker
    user: str
    password: str
    _token: DelegationToken | None = field(default=None, repr=False)

    def properties(
        self,
        login: tuple[str, str, bool] | None,
        mechanism: str,
        bootstrap: str | None = None,
    ) -> dict[str, str]:
        """``client.properties`` for ``(name, password, token)``; no JAAS line for ``None``."""
        props = {
            "bootstrap.servers": bootstrap or self.broker.bootstrap,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": mechanism,
        }
        if login is not None:
            name, secret, token = login
            line = jaas.scram_token_login_line if token else jaas.scram_login_line
            props["sasl.jaas.config"] = str(line(name, secret))
        return props

    def user_properties(self, mechanism: str, password: str | None = None) -> dict[str, str]:
        return self.properties((self.user, password or self.password, False), mechanism)

    def token_properties(self, token: DelegationToken, mechanism: str) -> dict[str, str]:
        return self.properties((token.token_id, token.hmac_base64, True), mechanism)

    def token_client(self) -> DelegationTokenClient:
        """Our token client, logged in as this user over SCRAM-SHA-256."""
        credentials = self.broker.credentials(self.user, self.password)
        return DelegationTokenClient(self.broker.connect(credentials))

    def create_token(self, max_lifetime_ms: int = -1) -> DelegationToken:
        """A new token of this user's, once the broker logs it in (both mechanisms)."""
        with self.token_client() as client:
            token = client.create_token([], max_lifetime_ms)
        assert token.info.owner.name == self.user
        for mechanism in ScramMechanism:
            self.broker.wait_login(self.token_credentials(token, mechanism))
        return token

    @property
    def token(self) -> DelegationToken:
        """One token shared by the tests that only log in with it."""
        if self._token is None:
            self._token = self.create_token()
        return self._token

    def token_credentials(
        self, token: DelegationToken, mechanism: ScramMechanism = ScramMechanism.SCRAM_SHA_256
    ) -> SaslCredentials:
        return self.broker.credentials(token.token_id, token.hmac_base64, mechanism, True)

    def expire_token(self, token: DelegationToken, timeout: float = 20.0) -> None:
        """Expire ``token`` now and wait until the broker refuses it (the cache
        update reaches the authenticator asynchronously)."""
        with self.token_client() as client:
            client.expire_token(token.hmac, -1)  # negative: expired at once (KIP-48)
        deadline = time.monotonic() + timeout
        while True:
            try:
                with KafkaConnection(self.broker.bootstrap, self.token_credentials(token)):
                    pass
            except KafkaConnectionError as exc:
                assert exc.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED, exc
                return
            assert time.monotonic() < deadline, f"{token.token_id} still logs in"
            time.sleep(0.05)


_owners: dict[str, Owner] = {}


def owner_on(broker: KafkaBroker) -> Owner:
    """The token owner on ``broker``, created once per broker and session."""
    owner = _owners.get(broker.bootstrap)
    if owner is None:
        user = unique_name("owner")
        broker.add_user(user, user + _SECRET)
        owner = _owners[broker.bootstrap] = Owner(broker, user, user + _SECRET)
    return owner


# -- produce and consume ---------------------------------------------------------------


def collect(
    poll: Callable[[], list[bytes]], count: int, timeout: float = DELIVERY_S
) -> list[bytes]:
    """Poll until ``count`` values arrived (or the deadline passed)."""
    values: list[bytes] = []
    deadline = time.monotonic() + timeout
    while len(values) < count and time.monotonic() < deadline:
        values += poll()
    return values


def kafka_python_roundtrip(props: dict[str, str], topic: str, values: list[bytes]) -> list[bytes]:
    from kafka import KafkaConsumer
    from kafka import KafkaProducer
    from kafka import TopicPartition

    from sasl_scram.integrations import kafka_python

    with kafka_python.installed():
        kwargs = kafka_python.client_kwargs(props)
        producer = KafkaProducer(**kwargs)
        try:
            for value in values:
                producer.send(topic, value).get(DELIVERY_S)
        finally:
            producer.close()
        consumer = KafkaConsumer(**kwargs)
        try:
            partition = TopicPartition(topic, 0)
            consumer.assign([partition])
            consumer.seek_to_beginning(partition)

            def poll() -> list[bytes]:
                batches = consumer.poll(timeout_ms=200).values()
                return [record.value for batch in batches for record in batch]

            return collect(poll, len(values))
        finally:
            consumer.close()


def aiokafka_roundtrip(props: dict[str, str], topic: str, values: list[bytes]) -> list[bytes]:
    from aiokafka import AIOKafkaConsumer
    from aiokafka import AIOKafkaProducer
    from aiokafka import TopicPartition

    from sasl_scram.integrations import aiokafka as scram_aiokafka

    async def run(kwargs: dict[str, Any]) -> list[bytes]:
        async with AIOKafkaProducer(**kwargs) as producer:
            for value in values:
                await producer.send_and_wait(topic, value)
        async with AIOKafkaConsumer(**kwargs, auto_offset_reset="earliest") as consumer:
            consumer.assign([TopicPartition(topic, 0)])
            got: list[bytes] = []
            deadline = time.monotonic() + DELIVERY_S
            while len(got) < len(values) and time.monotonic() < deadline:
                batches = (await consumer.getmany(timeout_ms=200)).values()
                got += [record.value for batch in batches for record in batch]
            return got

    with scram_aiokafka.installed():
        return asyncio.run(run(scram_aiokafka.client_kwargs(props)))


def confluent_roundtrip(props: dict[str, str], topic: str, values: list[bytes]) -> list[bytes]:
    from confluent_kafka import OFFSET_BEGINNING
    from confluent_kafka import Consumer
    from confluent_kafka import Producer
    from confluent_kafka import TopicPartition

    from sasl_scram.integrations import confluent

    config = confluent.client_config(props)
    producer = Producer(config)
    delivered: list[Any] = []
    for value in values:
        producer.produce(topic, value, on_delivery=lambda err, _msg: delivered.append(err))
    assert producer.flush(DELIVERY_S) == 0 and delivered == [None] * len(values), delivered
    # assign() reads without joining the group; librdkafka still wants a group.id.
    consumer = Consumer({**config, "group.id": unique_name("g"), "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])

        def poll() -> list[bytes]:
            message = consumer.poll(0.2)
            if message is None:
                return []
            assert message.error() is None, message.error()
            value = message.value()
            assert value is not None
            return [value]

        return collect(poll, len(values))
    finally:
        consumer.close()


ROUNDTRIPS: dict[str, Callable[[dict[str, str], str, list[bytes]], list[bytes]]] = {
    "kafka-python": kafka_python_roundtrip,
    "aiokafka": aiokafka_roundtrip,
    "confluent-kafka": confluent_roundtrip,
}


# -- refused logins --------------------------------------------------------------------


class BrokerLog:
    """The part of a broker's log written after this object was made."""

    # Kafka's Selector: "Failed authentication with /HOST (channelId=LOCAL-REMOTE-...) (REASON)".
    FAILED = re.compile(
        r"Failed authentication with /127\.0\.0\.1 "
        r"\(channelId=127\.0\.0\.1:\d+-127\.0\.0\.1:(?P<port>\d+)-[^)]*\) \((?P<reason>[^)]*)\)"
    )

    def __init__(self, broker: KafkaBroker) -> None:
        self.broker = broker
        self.offset = broker.log_path.stat().st_size

    def text(self) -> str:
        with self.broker.log_path.open("rb") as log:
            log.seek(self.offset)
            return log.read().decode(errors="replace")

    def failed_authentications(self, ports: set[int], timeout: float = 10.0) -> dict[int, str]:
        """The reasons the broker logged for refusing the connections from ``ports``."""
        deadline = time.monotonic() + timeout
        while True:
            found = {
                int(m["port"]): m["reason"]
                for m in self.FAILED.finditer(self.text())
                if int(m["port"]) in ports
            }
            if set(found) == ports or time.monotonic() > deadline:
                return found
            time.sleep(0.1)


# kafka-python names a connection's transport "[BROKER_HOST:BROKER_PORT<-LOCAL_PORT]".
_KAFKA_PYTHON_TRANSPORT = re.compile(r"\[127\.0\.0\.1:(?P<broker>\d+)<-(?P<port>\d+)\]")


def kafka_python_ports(messages: list[str], broker_port: int) -> set[int]:
    """The local ports of kafka-python's connections to ``broker_port``, from its log."""
    return {
        int(m["port"])
        for m in map(_KAFKA_PYTHON_TRANSPORT.search, messages)
        if m and int(m["broker"]) == broker_port
    }


class LogLines(logging.Handler):
    """Collects one logger's lines formatted when they are logged: kafka-python
    names a connection by its socket's ports, which are gone once it closes,
    after which ``caplog`` would format the same record without them."""

    def __init__(self, logger: str, level: int = logging.INFO) -> None:
        super().__init__(level)
        self.lines: list[str] = []
        self._logger = logging.getLogger(logger)
        self._level = self._logger.level

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    def __enter__(self) -> LogLines:
        self._logger.addHandler(self)
        self._logger.setLevel(min(self.level, self._level or self.level))
        return self

    def __exit__(self, *_: object) -> None:
        self._logger.removeHandler(self)
        self._logger.setLevel(self._level)


def kafka_python_refusal(
    broker: KafkaBroker, props: dict[str, str], caplog: pytest.LogCaptureFixture
) -> str:
    """kafka-python 3.0.12 loses the broker's refusal when it arrives together
    with the close (docs/integrations.md): then it reports only a bootstrap
    timeout. When it does read the refusal, the integration ends the bootstrap
    with that error, the broker's message in it. Either way the
    reason is also read from the broker's log, for the connections
    kafka-python's own log names."""
    from kafka import KafkaProducer
    from kafka.errors import KafkaTimeoutError
    from kafka.errors import SaslAuthenticationFailedError

    from sasl_scram.integrations import kafka_python

    log = BrokerLog(broker)
    with kafka_python.installed(), LogLines("kafka.net") as kafka_log:
        kwargs = kafka_python.client_kwargs(props)
        started = time.monotonic()
        with pytest.raises((KafkaTimeoutError, SaslAuthenticationFailedError)) as raised:
            KafkaProducer(**kwargs, bootstrap_timeout_ms=FAIL_FAST_MS)
        assert time.monotonic() - started < FAIL_FAST_MS / 1000 + 2
    if isinstance(raised.value, KafkaTimeoutError):
        assert "Unable to bootstrap" in str(raised.value), raised.value
    else:
        assert "Authentication failed during authentication" in str(raised.value)
    ports = kafka_python_ports(kafka_log.lines, broker.port)
    reasons = log.failed_authentications(ports)
    assert ports and set(reasons) == ports, (ports, reasons)
    (reason,) = set(reasons.values())  # every attempt, the same refusal
    return reason


def aiokafka_refusal(
    broker: KafkaBroker, props: dict[str, str], caplog: pytest.LogCaptureFixture
) -> str:
    """With the integration, aiokafka's start() raises the login's own error,
    SaslAuthenticationFailed with the broker's code and message (not
    aiokafka's "Unable to bootstrap")."""
    from aiokafka import AIOKafkaProducer
    from aiokafka.errors import SaslAuthenticationFailed

    from sasl_scram.integrations import aiokafka as scram_aiokafka

    async def run(kwargs: dict[str, Any]) -> None:
        producer = AIOKafkaProducer(**kwargs, request_timeout_ms=FAIL_FAST_MS)
        try:
            await producer.start()
        finally:
            await producer.stop()

    with scram_aiokafka.installed(), pytest.raises(SaslAuthenticationFailed) as refused:
        asyncio.run(run(scram_aiokafka.client_kwargs(props)))
    assert refused.value.errno == ErrorCode.SASL_AUTHENTICATION_FAILED
    # "[Error 58] SaslAuth...: <message>", then "; <how to check>" for a token.
    return str(refused.value).split(": ", 1)[1].partition("; ")[0]


def librdkafka_refusal(config: dict[str, str]) -> str:
    """librdkafka reports a refused login to ``error_cb`` as ``_AUTHENTICATION``;
    returns the broker's message it quotes."""
    from confluent_kafka import KafkaError
    from confluent_kafka import Producer

    errors: list[Any] = []
    producer = Producer({**config, "error_cb": errors.append})
    deadline = time.monotonic() + 10
    while not errors and time.monotonic() < deadline:
        producer.poll(0.1)
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION, errors
    # "<broker>/bootstrap: SASL authentication error: <message> (after N ms in state AUTH_REQ)"
    match = re.search(r"SASL authentication error: (.*) \(after \d+ms", errors[0].str())
    assert match, errors[0].str()
    return match[1]


def confluent_refusal(
    broker: KafkaBroker, props: dict[str, str], caplog: pytest.LogCaptureFixture
) -> str:
    from sasl_scram.integrations import confluent

    return librdkafka_refusal(confluent.client_config(props))


class PureSaslConnection(KafkaConnection):
    """Our connection, logged in by pure-sasl's ``SASLClient`` (with our
    mechanism installed) instead of our own SCRAM client: pure-sasl only makes
    SASL messages, Kafka's framing and ApiVersions come from :class:`KafkaConnection`."""

    def __init__(self, bootstrap: str, sasl: Any, timeout: float = 10.0) -> None:
        self.sasl = sasl
        mechanism = ScramMechanism.from_name(sasl.mechanism)
        super().__init__(bootstrap, SaslCredentials(mechanism, "", ""), timeout=timeout)

    def _authenticate(self) -> None:
        handshake = self.request(ApiKey.SASL_HANDSHAKE, {"mechanism": self.sasl.mechanism}, 1)
        assert handshake["error_code"] == ErrorCode.NONE, handshake
        token = self.sasl.process()
        while not self.sasl.complete:
            response = self.request(ApiKey.SASL_AUTHENTICATE, {"auth_bytes": token})
            if response["error_code"] != ErrorCode.NONE:
                raise KafkaConnectionError(response["error_message"], response["error_code"])
            token = self.sasl.process(response["auth_bytes"])
            self.session_lifetime_ms = response["session_lifetime_ms"]


def pure_sasl_connect(props: dict[str, str]) -> PureSaslConnection:
    from puresasl.client import SASLClient

    from sasl_scram.integrations import pure_sasl

    config = ClientConfig.from_properties(props)
    credentials = ScramCredentials.from_client_config(config)
    pure_sasl.install()
    try:
        sasl = SASLClient(
            "127.0.0.1",
            "kafka",
            props["sasl.mechanism"],
            username=credentials.username,
            password=credentials.password,
            token_auth=credentials.token_auth,
        )
        return PureSaslConnection(props["bootstrap.servers"], sasl)
    finally:
        pure_sasl.uninstall()


def pure_sasl_refusal(
    broker: KafkaBroker, props: dict[str, str], caplog: pytest.LogCaptureFixture
) -> str:
    """Kafka refuses with SaslAuthenticate error 58 and no server-final, so
    pure-sasl's exchange never completes."""
    with pytest.raises(KafkaConnectionError) as refused:
        pure_sasl_connect(props)
    assert refused.value.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    return str(refused.value)


Refusal = Callable[[KafkaBroker, dict[str, str], pytest.LogCaptureFixture], str]
REFUSALS: dict[str, Refusal] = {
    "kafka-python": kafka_python_refusal,
    "aiokafka": aiokafka_refusal,
    "confluent-kafka": confluent_refusal,
    "pure-sasl": pure_sasl_refusal,
}


# -- connections -----------------------------------------------------------------------


def established_ports(remote_port: int) -> set[int]:
    """Local ports of this process's established TCP connections to 127.0.0.1:``remote_port``
    (the broker's side of the same connections, and other processes', do not count)."""
    return set(established_to(remote_port).values())
