"""What the front-door tests share: the edge user in a store of its own, and the
``upstream.`` keys that log in to a suite broker as its super user."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli_process import kafka_scram
from tests.support.kafka_broker import ADMIN_PASSWORD
from tests.support.kafka_broker import ADMIN_USER

__all__ = ["SCRAM_JAAS", "edge_store", "upstream_keys"]

SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule"


def upstream_keys(bootstrap: str, password: str = ADMIN_PASSWORD) -> dict[str, str]:
    return {
        "upstream.bootstrap.servers": bootstrap,
        "upstream.security.protocol": "SASL_PLAINTEXT",
        "upstream.sasl.mechanism": "SCRAM-SHA-256",
        "upstream.sasl.jaas.config": (
            f'{SCRAM_JAAS} required username="{ADMIN_USER}" password="{password}";'
        ),
    }


def edge_store(tmp_path: Path) -> Path:
    """A store holding only the edge user alice."""
    store = tmp_path / "edge.db"
    result = kafka_scram(
        "configs",
        "--store",
        f"sqlite:{store}",
        "--alter",
        "--add-config",
        "SCRAM-SHA-512=[password=alice-secret]",
        "--entity-type",
        "users",
        "--entity-name",
        "alice",
    )
    assert result.returncode == 0, result.stderr
    return store
