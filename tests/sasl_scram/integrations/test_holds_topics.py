"""check_holds_topics: a kafka-scram serve without a front door is named, a broker passes."""

from __future__ import annotations

import pytest

from sasl_scram.integrations import ListenerError
from sasl_scram.integrations import check_holds_topics
from tests.support.endpoint_harness import RunningEndpoint
from tests.support.kafka_broker import KafkaBroker
from tests.support.zookeeper_server import free_port

from .conftest import client_properties
from .conftest import user_line


def properties(bootstrap: str) -> dict[str, str]:
    return {
        "bootstrap.servers": bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
    }


def test_a_serve_without_a_front_door_is_named() -> None:
    with RunningEndpoint() as ep, pytest.raises(ListenerError) as info:
        check_holds_topics(client_properties(ep, user_line()))
    message = str(info.value)
    assert message.startswith(f"{ep.bootstrap} is a kafka-scram serve without a front door")
    assert "upstream.bootstrap.servers" in message


def test_an_address_that_does_not_answer_is_left_to_the_client() -> None:
    check_holds_topics(properties(f"127.0.0.1:{free_port()}"))


@pytest.mark.broker
def test_a_broker_passes_and_the_first_answer_decides(kraft_broker: KafkaBroker) -> None:
    with RunningEndpoint() as ep:
        check_holds_topics(properties(f"127.0.0.1:{free_port()},{kraft_broker.bootstrap}"))
        # The query's own bootstrap servers, when given, are the ones asked.
        check_holds_topics(properties(ep.bootstrap), bootstrap_servers=kraft_broker.bootstrap)
        with pytest.raises(ListenerError):
            check_holds_topics(properties(f"{ep.bootstrap},{kraft_broker.bootstrap}"))
