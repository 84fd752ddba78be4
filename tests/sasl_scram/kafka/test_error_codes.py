"""``ErrorCode`` is Kafka's table of error codes: every code of Kafka 4.4.0's
``org.apache.kafka.common.protocol.Errors``, by its name, with its exception
class and default message, read from Kafka's own classes; Kafka 3.9.2's codes
are a part of it under the same names."""

from __future__ import annotations

import os

import pytest

from sasl_scram.kafka import ErrorCode
from tests.support.javaharness import JavaHarness
from tests.support.javaharness import unb64
from tools.fetch_kafka_broker import is_fetched
from tools.fetch_kafka_broker import libs_dir

# Each test starts a JVM with one Kafka version's kafka-clients.
pytestmark = pytest.mark.jvm


def _classpath(version: str) -> str:
    """kafka-clients of ``version`` and the logging API ``Errors`` loads."""
    if not is_fetched(version):
        raise RuntimeError(f"Kafka {version} jars not in {libs_dir(version)}; run `make brokers`")
    prefixes = ("kafka-clients-", "slf4j-api-")
    jars = sorted(p for p in libs_dir(version).glob("*.jar") if p.name.startswith(prefixes))
    return os.pathsep.join(map(str, jars))


def kafka_errors(version: str) -> dict[int, tuple[str, str, str]]:
    """Kafka ``version``'s ``Errors``: code to name, exception class, message."""
    with JavaHarness("ErrorsHarness", _classpath(version)) as harness:
        status, table = harness.call("errors")
    assert status == "ok", unb64(table).decode()
    rows = [line.split("\t") for line in unb64(table).decode().splitlines()]
    return {int(code): (name, exception, message) for code, name, exception, message in rows}


def test_every_code_of_kafka_4_4_is_ours_with_its_name_class_and_message() -> None:
    kafka = kafka_errors("4.4.0")
    ours = {e.value: (e.name, e.exception_name, e.default_message) for e in ErrorCode}
    assert ours == kafka
    assert ErrorCode(36).name == "TOPIC_ALREADY_EXISTS"  # what the audit trail names


def test_kafka_3_9_codes_have_the_same_names() -> None:
    kafka = kafka_errors("3.9.2")
    assert {code: name for code, (name, _, _) in kafka.items()} == {
        code: ErrorCode(code).name for code in kafka
    }
