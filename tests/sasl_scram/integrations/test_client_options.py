"""The client-option builders, without a broker: one reading of a ``ClientConfig``.

kafka-python, aiokafka, confluent-kafka and our own admin connection take the
same ``bootstrap.servers``, whether it comes from the file or from the
``bootstrap_servers`` override, and check it the same way (Kafka's
``ClientUtils.parseAndValidateAddresses``: every entry needs its port).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from sasl_scram.admin import KafkaConnection
from sasl_scram.config import ClientConfig
from sasl_scram.config import ClientConfigError
from sasl_scram.integrations import aiokafka as scram_aiokafka
from sasl_scram.integrations import confluent
from sasl_scram.integrations import kafka_python

from .conftest import user_line

BAD_SERVERS = [
    ("localhost", "'localhost' is not host:port"),
    ("b:99999", "port 99999 is out of range"),
    ("b:9092,c", "'c' is not host:port"),
    (" , ", "required"),
]


def _kafka_python(props: dict[str, str], servers: str | None) -> Any:
    return kafka_python.client_kwargs(props, bootstrap_servers=servers)


def _aiokafka(props: dict[str, str], servers: str | None) -> Any:
    return scram_aiokafka.client_kwargs(props, bootstrap_servers=servers)


def _confluent(props: dict[str, str], servers: str | None) -> Any:
    return confluent.client_config(props, bootstrap_servers=servers)


BUILDERS: list[Callable[[dict[str, str], str | None], Any]] = [
    _kafka_python,
    _aiokafka,
    _confluent,
]


@pytest.mark.parametrize("build", BUILDERS)
@pytest.mark.parametrize(("servers", "problem"), BAD_SERVERS)
def test_a_bad_bootstrap_override_is_refused_as_the_files_is(
    build: Callable[[dict[str, str], str | None], Any], servers: str, problem: str
) -> None:
    with pytest.raises(ClientConfigError, match=f"^bootstrap.servers: .*{problem}"):
        build({"bootstrap.servers": servers}, None)
    with pytest.raises(ClientConfigError, match=f"^bootstrap.servers: .*{problem}"):
        build({"bootstrap.servers": "good:9092"}, servers)


@pytest.mark.parametrize(("servers", "problem"), BAD_SERVERS)
def test_the_admin_connection_refuses_a_bad_bootstrap_before_connecting(
    servers: str, problem: str
) -> None:
    config = ClientConfig.from_properties(
        {
            "bootstrap.servers": "good:9092",
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": user_line(),
        }
    )
    with pytest.raises(ClientConfigError, match=f"^bootstrap.servers: .*{problem}"):
        KafkaConnection.from_config(config, servers)


def test_every_builder_takes_the_one_readers_entries() -> None:
    props = {"bootstrap.servers": " [::1]:9092 , b:1 ,"}
    expected = ["[::1]:9092", "b:1"]
    assert kafka_python.client_kwargs(props)["bootstrap_servers"] == expected
    assert scram_aiokafka.client_kwargs(props)["bootstrap_servers"] == expected
    assert confluent.client_config(props)["bootstrap.servers"] == ",".join(expected)
    override = kafka_python.client_kwargs(props, bootstrap_servers="c:2, [fe80::1]:3")
    assert override["bootstrap_servers"] == ["c:2", "[fe80::1]:3"]


@pytest.mark.parametrize("build", BUILDERS)
@pytest.mark.parametrize("servers", [["a:9092", "b:9092"], ("a:9092",), 9092])
def test_a_bootstrap_override_that_is_no_string_is_named(
    build: Callable[[dict[str, Any], Any], Any], servers: Any
) -> None:
    # kafka-python's own bootstrap_servers takes a list: the override is one
    # string, as bootstrap.servers is, and a list gets a message saying so.
    with pytest.raises(ClientConfigError, match=r"^bootstrap_servers: expected one string") as info:
        build({"bootstrap.servers": "good:9092"}, servers)
    assert "join" in str(info.value)


@pytest.mark.parametrize("build", BUILDERS)
@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("bootstrap.servers", ["a:9092"]),
        ("security.protocol", None),
        ("sasl.mechanism", 512),
        ("sasl.jaas.config", b"hunter2-secret"),
        ("ssl.truststore.location", 1),
    ],
)
def test_a_property_that_is_no_string_is_named(
    build: Callable[[dict[str, Any], Any], Any], key: str, value: Any
) -> None:
    props: dict[str, Any] = {
        "bootstrap.servers": "good:9092",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": user_line(),
        key: value,
    }
    with pytest.raises(ClientConfigError, match=f"^{key}: expected a string") as info:
        build(props, None)
    assert "hunter2" not in str(info.value)
