"""The real brokers themselves: they start, take SCRAM logins with both
mechanisms, and refuse a wrong password, so that every test built on them
starts from a known state."""

from __future__ import annotations

from pathlib import Path

import pytest

from sasl_scram import ScramMechanism
from sasl_scram.admin import KafkaConnectionError
from tests.support.kafka_broker import MECHANISMS
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.mechanism_name)
def test_a_new_user_logs_in_with_each_mechanism(
    kafka_broker: KafkaBroker, mechanism: ScramMechanism
) -> None:
    user = unique_name("smoke")
    kafka_broker.add_user(user, "smoke-password", [mechanism])
    with kafka_broker.connect(kafka_broker.credentials(user, "smoke-password", mechanism)):
        pass
    with pytest.raises(KafkaConnectionError, match=r"[Aa]uthentication failed"):
        kafka_broker.connect(kafka_broker.credentials(user, "wrong-password", mechanism))


def test_the_broker_runs_the_version_and_mode_it_claims(kafka_broker: KafkaBroker) -> None:
    log = kafka_broker.log_path.read_text(errors="replace")
    assert f"Kafka version: {kafka_broker.version}" in log
    started = (
        "KafkaRaftServer nodeId=1] Kafka Server started"
        if kafka_broker.kraft
        else "[KafkaServer id=0] started"
    )
    assert started in log


def test_add_user_with_both_mechanisms(kafka_broker: KafkaBroker) -> None:
    """The default adds every mechanism; a KRaft controller takes one alteration
    of a user per request, so the fixture must not send them together."""
    user = unique_name("both")
    kafka_broker.add_user(user, "both-password")
    for mechanism in MECHANISMS:
        with kafka_broker.connect(kafka_broker.credentials(user, "both-password", mechanism)):
            pass


def test_delete_user_removes_both_mechanisms(kafka_broker: KafkaBroker) -> None:
    """The default deletes every mechanism (one request each, as add_user) and
    the deletion reaches the authenticator, asynchronously as the creation."""
    user = unique_name("gone")
    kafka_broker.add_user(user, "gone-password")
    kafka_broker.delete_user(user)
    for mechanism in MECHANISMS:
        kafka_broker.wait_refused(kafka_broker.credentials(user, "gone-password", mechanism))


def _properties(broker: KafkaBroker) -> dict[str, str]:
    lines = broker._properties().splitlines()
    return dict(line.split("=", 1) for line in lines)


def test_each_relay_listener_is_bound_apart_and_advertised_at_its_relay(tmp_path: Path) -> None:
    """The front-door bench's floors: a byte relay cannot rewrite Metadata, so the
    broker itself advertises each relay's port on a listener of its own."""
    broker = KafkaBroker("kraft", tmp_path, relay_ports=(23456, 23457))
    props = _properties(broker)
    bound = broker.relay_bind_ports
    assert len(set(bound)) == 2 and not {23456, 23457} & set(bound)
    assert broker.relay_upstreams == [f"127.0.0.1:{port}" for port in bound]
    for i, relay in enumerate((23456, 23457)):
        assert f"RELAY{i}://127.0.0.1:{bound[i]}" in props["listeners"].split(",")
        assert f"RELAY{i}://127.0.0.1:{relay}" in props["advertised.listeners"].split(",")
        assert f"RELAY{i}:SASL_PLAINTEXT" in props["listener.security.protocol.map"].split(",")
        for mechanism in ("scram-sha-256", "scram-sha-512"):
            key = f"listener.name.relay{i}.{mechanism}.sasl.jaas.config"
            assert "ScramLoginModule" in props[key]
    # The other listeners are advertised where they are bound, as without a relay.
    assert f"SASL_PLAINTEXT://{broker.bootstrap}" in props["advertised.listeners"].split(",")


def test_without_a_relay_port_there_is_no_relay_listener(tmp_path: Path) -> None:
    broker = KafkaBroker("kraft", tmp_path)
    props = _properties(broker)
    assert not [key for key in props if key.startswith("listener.name.relay.")]
    assert "RELAY" not in props["listener.security.protocol.map"]
    advertised = props["advertised.listeners"].split(",")
    assert advertised == [x for x in props["listeners"].split(",") if "CONTROLLER" not in x]
