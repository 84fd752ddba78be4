from __future__ import annotations

import sys
from pathlib import Path

# The repository root holds the three packages; make `tests.*` helpers importable.
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# The ZooKeeper fixtures (a real Debian ZooKeeper per session, dedicated servers,
# SASL and TLS variants) and the real Kafka brokers (4.x KRaft, 3.9 ZooKeeper
# mode), Kafka's own tools beside ours, and a kafka-scram serve beside the
# ZooKeeper-mode broker serve every test folder.
pytest_plugins = [
    "tests.support.zookeeper_server",
    "tests.support.kafka_broker",
    "tests.support.broker_and_serve",
    "tests.support.side_by_side",
]


def pytest_report_header() -> str:
    """Which form of the core this run tests: compiled, or pure Python and why."""
    from sasl_scram import _native

    return f"sasl_scram core: {_native.status()}"
