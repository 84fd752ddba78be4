from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.javaharness import JavaHarness


@pytest.fixture(scope="session")
def kafka_java() -> Iterator[JavaHarness]:
    """Kafka's own SCRAM classes from kafka-clients-4.3.0.jar, one JVM per session."""
    harness = JavaHarness("ScramHarness")
    yield harness
    harness.close()
