from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.endpoint_harness import RunningEndpoint
from tests.support.javaharness import JavaHarness


@pytest.fixture
def endpoint() -> Iterator[RunningEndpoint]:
    with RunningEndpoint() as ep:
        yield ep


@pytest.fixture(scope="session")
def java_clients() -> Iterator[JavaHarness]:
    """Kafka's own Java clients (kafka-clients 4.3.0), one JVM for the session."""
    harness = JavaHarness("EndpointClientHarness")
    yield harness
    harness.close()
