"""A SCRAM user on the real broker for the example's tests: its client.properties and a producer."""

from __future__ import annotations

from pathlib import Path

from confluent_kafka import Producer

from tests.support.kafka_broker import KafkaBroker


def example_user(
    broker: KafkaBroker, user: str, password: str, directory: Path
) -> tuple[Path, Producer]:
    """Add ``user`` and return its ``client.properties`` (with the brokers, as
    the example reads them) and a producer logged in as that user."""
    broker.add_user(user, password)
    props = broker.client_properties(
        directory / "client.properties", user, password, "SCRAM-SHA-512"
    )
    props.write_text(f"bootstrap.servers={broker.bootstrap}\n" + props.read_text())
    producer = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": user,
            "sasl.password": password,
        }
    )
    return props, producer
