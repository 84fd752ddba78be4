"""KIP-368 re-authentication of kafka-python and aiokafka against real Apache Kafka brokers.

The brokers' ``reauth`` listener has ``connections.max.reauth.ms=3000``: a
session lasts 3 s, and a connection that has not re-authenticated by then is
closed by the broker at its next request. A producer and a consumer log in
with a delegation token from a provider and keep records flowing; the
provider then hands out a new token of the same owner, and the old one is
expired. Every connection must re-authenticate on its own socket with the new
token: this process's TCP connections to the broker (the kernel's socket
table) stay the same, and every record arrives.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections.abc import Coroutine
from collections.abc import Iterator
from typing import Any
from typing import Protocol
from typing import TypeVar

import pytest

from sasl_scram.integrations import CredentialsProvider
from sasl_scram.integrations import ScramCredentials
from sasl_scram.integrations import StaticCredentials
from sasl_scram.integrations import aiokafka as scram_aiokafka
from sasl_scram.integrations import kafka_python
from tests.support.kafka_broker import REAUTH_MS
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tokenauth import DelegationToken

from .conftest import RotatingTokens
from .real_clients import DELIVERY_S
from .real_clients import LogLines
from .real_clients import Owner
from .real_clients import established_ports
from .real_clients import owner_on

T = TypeVar("T")
MECHANISM = "SCRAM-SHA-512"
# Kafka's clients re-authenticate at 85-95 % of the session: by REAUTH_MS after
# the old token is gone, every connection has re-authenticated at least once.
SESSION_S = REAUTH_MS / 1000
# kafka-python re-authenticates once the requests in flight are answered, and
# Kafka reads our aiokafka handshake after answering them: short fetch waits
# (500 ms by default) let each re-authentication start early in the 3 s session.
FETCH_WAIT_MS = 100


class Flow(Protocol):
    """A producer and a consumer of one topic, on one client library."""

    def send(self, value: bytes) -> None: ...
    def poll(self) -> list[bytes]: ...
    def close(self) -> None: ...


class KafkaPythonFlow:
    def __init__(self, kwargs: dict[str, Any], topic: str) -> None:
        from kafka import KafkaConsumer
        from kafka import KafkaProducer
        from kafka import TopicPartition

        self.topic = topic
        self.producer = KafkaProducer(**kwargs)
        self.consumer = KafkaConsumer(**kwargs, fetch_max_wait_ms=FETCH_WAIT_MS)
        partition = TopicPartition(topic, 0)
        self.consumer.assign([partition])
        self.consumer.seek_to_beginning(partition)

    def send(self, value: bytes) -> None:
        self.producer.send(self.topic, value).get(DELIVERY_S)

    def poll(self) -> list[bytes]:
        batches = self.consumer.poll(timeout_ms=50).values()
        return [record.value for batch in batches for record in batch]

    def close(self) -> None:
        self.producer.close()
        self.consumer.close()


class AiokafkaFlow:
    """aiokafka's clients on an event loop in a thread, driven synchronously."""

    def __init__(self, kwargs: dict[str, Any], topic: str) -> None:
        from aiokafka import AIOKafkaConsumer
        from aiokafka import AIOKafkaProducer
        from aiokafka import TopicPartition

        self.topic = topic
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

        async def start() -> tuple[Any, Any]:
            producer = AIOKafkaProducer(**kwargs)
            consumer = AIOKafkaConsumer(
                **kwargs, auto_offset_reset="earliest", fetch_max_wait_ms=FETCH_WAIT_MS
            )
            await producer.start()
            await consumer.start()
            consumer.assign([TopicPartition(topic, 0)])
            return producer, consumer

        self.producer, self.consumer = self.run(start())

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(DELIVERY_S)

    def send(self, value: bytes) -> None:
        self.run(self.producer.send_and_wait(self.topic, value))

    def poll(self) -> list[bytes]:
        batches = self.run(self.consumer.getmany(timeout_ms=50)).values()
        return [record.value for batch in batches for record in batch]

    def close(self) -> None:
        try:
            self.run(self.producer.stop())
            # aiokafka 0.14's Fetcher.close() cancels a fetch waiting out its retry
            # backoff and awaits it unguarded: stop() raises CancelledError after a
            # failed fetch (here: a refused re-authentication closed the connection).
            with contextlib.suppress(concurrent.futures.CancelledError):
                self.run(self.consumer.stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)
            self.loop.close()


CLIENTS = ["kafka-python", "aiokafka"]
# Where each client logs a failed re-authentication.
FAILURE_LOGGERS = {
    "kafka-python": ("kafka.net.connection", "SASL re-authentication failed"),
    "aiokafka": (scram_aiokafka.log.name, "re-authentication failed"),
}


@contextlib.contextmanager
def flowing(
    client: str, broker: KafkaBroker, owner: Owner, provider: CredentialsProvider
) -> Iterator[Flow]:
    """The integration installed and a flow logged in through ``provider``
    on the broker's ``reauth`` listener."""
    props = owner.properties(None, MECHANISM, bootstrap=broker.reauth_bootstrap)
    integration: Any = kafka_python if client == "kafka-python" else scram_aiokafka
    with integration.installed():
        kwargs = integration.client_kwargs(props, credentials=provider)
        topic = unique_name(client)
        flow: Flow = (
            KafkaPythonFlow(kwargs, topic)
            if client == "kafka-python"
            else AiokafkaFlow(kwargs, topic)
        )
        try:
            yield flow
        finally:
            flow.close()


class Traffic:
    """Sends numbered records and collects what the consumer reads."""

    def __init__(self, flow: Flow, broker: KafkaBroker) -> None:
        self.flow = flow
        self.broker = broker
        self.sent: list[bytes] = []
        self.sent_at: list[float] = []  # when each record was acknowledged
        self.received: list[bytes] = []
        self.ports: set[int] = set()

    def step(self) -> None:
        value = f"record-{len(self.sent)}".encode()
        self.flow.send(value)
        self.sent.append(value)
        self.sent_at.append(time.monotonic())
        self.received += self.flow.poll()
        self.ports |= established_ports(self.broker.reauth_port)

    def run_for(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.step()

    def drain(self) -> None:
        deadline = time.monotonic() + DELIVERY_S
        while len(self.received) < len(self.sent) and time.monotonic() < deadline:
            self.received += self.flow.poll()


@contextlib.contextmanager
def watched(
    client: str, broker: KafkaBroker, owner: Owner, provider: CredentialsProvider
) -> Iterator[tuple[Traffic, LogLines]]:
    """A flow with one record through, and the client's warnings and errors."""
    logger, _ = FAILURE_LOGGERS[client]
    with (
        LogLines(logger, logging.WARNING) as warnings,
        flowing(client, broker, owner, provider) as flow,
    ):
        traffic = Traffic(flow, broker)
        traffic.step()
        yield traffic, warnings


@pytest.fixture
def owner(kafka_broker: KafkaBroker) -> Owner:
    return owner_on(kafka_broker)


@pytest.mark.parametrize("client", CLIENTS)
def test_reauthenticates_in_band_across_a_token_rotation(
    kafka_broker: KafkaBroker, owner: Owner, client: str
) -> None:
    old = owner.create_token()
    provider = RotatingTokens(old)
    _, failure = FAILURE_LOGGERS[client]
    with watched(client, kafka_broker, owner, provider) as (traffic, warnings):
        traffic.drain()
        connections = established_ports(kafka_broker.reauth_port)
        assert connections and traffic.received == traffic.sent
        traffic.run_for(1.0)

        new = owner.create_token()
        provider.current = new  # before the old token expires
        owner.expire_token(old)  # from now on only the new token logs in
        expired_at = time.monotonic()
        asked = len(provider.handed_out)
        traffic.run_for(SESSION_S + 0.5)
        traffic.drain()
        failed = [line for line in warnings.lines if failure in line]

    # No new TCP connection: each one re-authenticated on its own socket.
    assert traffic.ports == connections
    # Records flowed until every session begun with the old token had ended.
    assert traffic.sent_at[-1] > expired_at + SESSION_S
    assert traffic.received == traffic.sent
    # Each connection asked the provider again after the old token was gone, and
    # got the new token; a refused re-authentication would close its connection.
    after = provider.handed_out[asked:]
    assert len(after) >= len(connections) and set(after) == {new.token_id}
    assert not failed
    if client == "aiokafka":
        # Ours stays quiet when stop() meets a re-authentication; kafka-python
        # 3.0.12 may then log "SASL re-authentication failed: 'NoneType' object
        # has no attribute 'host'" for the connection it just closed itself.
        assert not [line for line in warnings.lines if failure in line]


@pytest.mark.parametrize("client", CLIENTS)
def test_an_expired_token_fails_the_reauthentication(
    kafka_broker: KafkaBroker, owner: Owner, client: str
) -> None:
    """The control: without a new token the broker refuses the re-authentication
    and the client loses its connection, so the rotation above is what kept them."""
    token: DelegationToken = owner.create_token()
    provider = StaticCredentials(ScramCredentials.for_token(token.token_id, token.hmac_base64))
    _, failure = FAILURE_LOGGERS[client]
    with watched(client, kafka_broker, owner, provider) as (traffic, warnings):
        owner.expire_token(token)
        deadline = time.monotonic() + SESSION_S + 2
        while not [line for line in warnings.lines if failure in line]:
            assert time.monotonic() < deadline, "the expired token kept its session"
            with contextlib.suppress(Exception):  # a fetch on a failed connection may fail
                traffic.flow.poll()
