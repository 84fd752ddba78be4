"""The front door's caps and its figures per edge user, against a real broker.

Behind the front door every connection reaches the cluster from ``serve``'s
one address, one upstream connection per logged-in edge connection: the
cluster's ``max.connections.per.ip`` is shared by every edge user. So
``scram.max.connections.per.user`` refuses a user's login past its cap
before any upstream connection is opened for it, while another user still
logs in; and ``/metrics`` ties the forwarded requests and bytes to the edge
user who sent them.
"""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path

import pytest

from sasl_scram import ScramMechanism
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import SaslCredentials
from tests.support.broker_and_serve import REFUSED
from tests.support.broker_and_serve import login_error
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.polling import wait_until

from .conftest import FrontDoor
from .conftest import edge_user_store
from .conftest import open_front_door

pytestmark = [pytest.mark.broker, pytest.mark.jvm]

MECHANISM = "SCRAM-SHA-512"


def scrape(door: FrontDoor) -> dict[str, float]:
    """``name{labels}`` -> value, for the kafka_scram_ lines of the door's /metrics."""
    url = f"http://127.0.0.1:{door.metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    out: dict[str, float] = {}
    for line in text.splitlines():
        match = re.fullmatch(r"(kafka_scram_[a-z_]+(?:\{[^}]*\})?) (\S+)", line)
        if match:
            out[match.group(1)] = float(match.group(2))
    return out


def user_figure(figures: dict[str, float], figure: str, user: str, api: str) -> float:
    return figures.get(f'kafka_scram_user_forwarded_{figure}_total{{api="{api}",user="{user}"}}', 0)


def second_user(door: FrontDoor, store: Path) -> tuple[str, str]:
    """Another edge user in the door's store, once the door serves it."""
    user = unique_name("edge2")
    password = f"{user}-password"
    edge_user_store(store, user, password)
    credentials = SaslCredentials(ScramMechanism.from_name(MECHANISM), user, password)
    assert wait_until(lambda: login_error(door.bootstrap, credentials) == 0, 15) is not None
    return user, password


def produce(door: FrontDoor, login: tuple[str, str], topic: str, values: list[bytes]) -> None:
    """kafka-python's producer, logged in at the edge as ``login``."""
    from kafka import KafkaProducer

    from sasl_scram.integrations import kafka_python

    props = door.properties(MECHANISM, (*login, False))
    with kafka_python.installed():
        producer = KafkaProducer(**kafka_python.client_kwargs(props), linger_ms=0)
        try:
            for value in values:
                producer.send(topic, value).get(30)
        finally:
            producer.close()


def test_metrics_tie_each_produce_to_its_edge_user(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    with open_front_door(kraft_broker, tmp_path) as door:
        alice = (door.user, door.password)
        bob = second_user(door, tmp_path / "edge.db")
        topic = unique_name("per-user")
        produce(door, alice, topic, [b"a" * 100] * 3)
        produce(door, bob, topic, [b"b" * 5000] * 6)
        figures = scrape(door)
        name_a, name_b = alice[0], bob[0]
        for user, records, size in ((name_a, 3, 100), (name_b, 6, 5000)):
            assert user_figure(figures, "requests", user, "Produce") >= records, door.log_tail()
            assert user_figure(figures, "request_bytes", user, "Produce") >= records * size
            assert user_figure(figures, "response_bytes", user, "Produce") > 0
            assert user_figure(figures, "requests", user, "other") > 0  # Metadata, ...
        assert user_figure(figures, "request_bytes", name_a, "Produce") < 3 * 100 + 3 * 400
        # Every forwarded byte is some user's: the users' figures add up to the per-API ones.
        produced = figures['kafka_scram_forwarded_request_bytes_total{api="Produce"}']
        by_user = [
            value
            for name, value in figures.items()
            if name.startswith("kafka_scram_user_forwarded_request_bytes_total")
            and 'api="Produce"' in name
        ]
        assert sum(by_user) == produced
        assert not any('user="other"' in name for name in figures)  # both under the bound


def test_a_user_past_its_cap_gets_no_cluster_connection_while_another_logs_in(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    with open_front_door(kraft_broker, tmp_path, {"scram.max.connections.per.user": "2"}) as door:
        alice = door.credentials(MECHANISM)
        bob = SaslCredentials(
            ScramMechanism.from_name(MECHANISM), *second_user(door, tmp_path / "edge.db")
        )
        opened = door.upstream_opened()
        held = [KafkaConnection(door.bootstrap, alice, timeout=10) for _ in range(2)]
        try:
            assert wait_until(lambda: door.upstream_opened() == opened + 2) is not None
            # Her third login is refused at the edge, with the cap's reason ...
            assert login_error(door.bootstrap, alice) == REFUSED
            # ... and no connection to the cluster was opened for it.
            assert door.upstream_opened() == opened + 2, door.log_tail()
            # Another user is not held back by hers.
            with KafkaConnection(door.bootstrap, bob, timeout=10):
                assert wait_until(lambda: door.upstream_opened() == opened + 3) is not None
            # One of hers closed gives its place back.
            held.pop().close()
            assert wait_until(lambda: login_error(door.bootstrap, alice) == 0, 10) is not None
        finally:
            for connection in held:
                connection.close()
        figures = scrape(door)
        refused = 'kafka_scram_refused_connections_total{cap="scram.max.connections.per.user"}'
        assert figures[refused] == 1
        said = [line for line in door.serve.log_lines() if "Refused User:" in line]
        assert len(said) == 1 and "scram.max.connections.per.user" in said[0], said
