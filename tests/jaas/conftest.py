from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.jaas.java_peer import JavaJaas


@pytest.fixture(scope="session")
def java_jaas() -> Iterator[JavaJaas]:
    """One JVM running tests/java/JaasHarness.java for the whole session."""
    peer = JavaJaas()
    try:
        yield peer
    finally:
        peer.close()
