"""Fault tests (docs/fault-tests.md): real ZooKeeper processes killed, restarted and
partitioned under real ``kafka-scram serve`` processes."""

from __future__ import annotations

import pytest

from tests.faults.harness import Results
from tests.support.zookeeper_ensemble import zookeeper_ensemble

__all__ = ["results", "zookeeper_ensemble"]


@pytest.fixture
def results(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Results:
    """Where a test records what it measured: ``<basetemp>/fault-results.jsonl``."""
    return Results(tmp_path_factory.getbasetemp() / "fault-results.jsonl", request.node.name)
