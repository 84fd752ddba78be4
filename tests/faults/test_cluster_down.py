"""A front door while its cluster is down, against a real KRaft broker of this
module's own (stopped and started by the tests; the suite's shared broker
never is).

- **An outage under a producer.** The broker is stopped for 15 s under an
  idempotent confluent-kafka producer writing through ``serve``. Before, serve
  took each login, found the cluster gone and dropped the connection:
  librdkafka takes a connection lost during its login for a broker that went
  down, refreshes metadata and reconnects, and logged in about 11 times a
  second (183 logins in a 16 s restart). Against a down broker it tries about
  twice a second. Now: at most 2 connections a second reach serve, and every
  acknowledged value is read back exactly once.
- **serve started before its cluster.** It listens at once, its clients
  wait and retry, and they produce once the broker starts, serve never
  restarted; the log says "cannot reach" once and "reached" once.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.faults.harness import Results
from tests.support.front_door import front_door_keys
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.serve_process import ServeProcess

pytestmark = [pytest.mark.broker, pytest.mark.jvm]

OUTAGE_S = 15.0
#: At most this many connections a second reach serve while the cluster is
#: down (librdkafka against a down broker: about 2).
MAX_PER_SECOND = 2.0


@pytest.fixture
def own_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """A KRaft broker that only this test stops and starts; not started yet."""
    broker = KafkaBroker("kraft", tmp_path_factory.mktemp("kafka-down"))
    try:
        yield broker
    finally:
        broker.stop()


def confluent_login(bootstrap: str) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "alice",
        "sasl.password": "alice-secret",
    }


def read_back(bootstrap: str, topic: str, expected: set[str], timeout: float = 60) -> list[str]:
    """Every value of ``topic`` from the start, through the front door."""
    from confluent_kafka import Consumer

    consumer = Consumer(
        {
            **confluent_login(bootstrap),
            "group.id": unique_name("down-reader"),
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    got: list[str] = []
    deadline = time.monotonic() + timeout
    try:
        while not expected <= set(got) and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                got.append((message.value() or b"").decode())
    finally:
        consumer.close()
    return got


def accepted(lines: list[str]) -> int:
    """Connections serve accepted (its DEBUG line for each)."""
    return sum("connection from" in line for line in lines)


def test_an_outage_under_an_idempotent_producer_is_met_with_back_off(
    own_broker: KafkaBroker, tmp_path: Path, results: Results
) -> None:
    from confluent_kafka import Producer

    broker = own_broker
    broker.start()
    topic = unique_name("outage")
    keys = front_door_keys(tmp_path, broker.bootstrap)
    with ServeProcess(tmp_path, keys, args=["--log-level", "DEBUG"]) as serve:
        producer = Producer({**confluent_login(serve.bootstrap), "enable.idempotence": True})
        acked: list[str] = []
        errors: list[str] = []

        def report(err: Any, message: Any) -> None:
            if err is None:
                acked.append(message.value().decode())
            else:
                errors.append(str(err))

        sent = 0

        def send() -> None:
            nonlocal sent
            producer.produce(topic, f"v{sent}".encode(), on_delivery=report)
            sent += 1

        for _ in range(20):
            send()
        producer.flush(30)
        assert len(acked) == 20, errors
        before = len(serve.log_lines())
        stopped = time.monotonic()
        broker.stop()
        while time.monotonic() - stopped < OUTAGE_S:
            send()
            producer.poll(0.1)
        down_s = time.monotonic() - stopped
        during = serve.log_lines()[before:]
        broker.start_again()
        while len(acked) + len(errors) < sent:
            send()
            producer.poll(0.1)
            if time.monotonic() - stopped > 180:
                break
        producer.flush(60)
        got = read_back(serve.bootstrap, topic, set(acked))
        log = serve.log_text()
    counts = collections.Counter(got)
    results.record(
        sent=sent,
        acked=len(acked),
        errors=len(errors),
        down_s=round(down_s, 1),
        accepted_while_down=accepted(during),
        read=len(got),
    )
    rate = accepted(during) / down_s
    assert rate <= MAX_PER_SECOND, f"{accepted(during)} connections in {down_s:.1f} s"
    assert not errors, errors[:5]
    assert len(acked) == sent, f"{len(acked)} of {sent} acknowledged"
    lost = [v for v in acked if v not in counts]
    twice = [v for v, n in counts.items() if n > 1]
    assert not lost and not twice, (lost[:5], twice[:5])
    assert log.count("Cannot reach the cluster") == 1, log[-3000:]
    assert "Traceback" not in log, log[-3000:]


def test_serve_started_before_its_cluster_listens_and_serves_once_it_starts(
    own_broker: KafkaBroker, tmp_path: Path, results: Results
) -> None:
    from confluent_kafka import Producer

    broker = own_broker  # its ports are chosen; nothing listens there yet
    keys = front_door_keys(tmp_path, broker.bootstrap)
    with ServeProcess(tmp_path, keys) as serve:  # returns once serve says it listens
        assert serve.proc is not None
        pid = serve.proc.pid
        serve.wait_for_log("Cannot reach the cluster")
        producer = Producer(confluent_login(serve.bootstrap))
        acked: list[str] = []
        errors: list[str] = []

        def report(err: Any, message: Any) -> None:
            if err is None:
                acked.append(message.value().decode())
            else:
                errors.append(str(err))

        topic = unique_name("before")
        for i in range(10):
            producer.produce(topic, f"v{i}".encode(), on_delivery=report)
        producer.poll(3)
        waiting = (list(acked), list(errors))
        started = time.monotonic()
        broker.start()
        producer.flush(120)
        took = time.monotonic() - started
        got = read_back(serve.bootstrap, topic, set(acked))
        log = serve.log_text()
        assert serve.proc is not None and serve.proc.pid == pid
    results.record(acked=len(acked), errors=len(errors), after_broker_start_s=round(took, 1))
    assert waiting == ([], []), waiting  # the clients waited, nothing failed
    assert sorted(acked) == [f"v{i}" for i in range(10)], errors
    assert sorted(got) == sorted(acked)
    assert log.count("Cannot reach the cluster") == 1, log[-3000:]
    assert log.count("Reached the cluster") == 1, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
