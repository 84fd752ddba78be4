"""Our option helpers on real Spark Connect builders, from a local Connect server.

The fake builders in test_options.py copy the shapes seen here; this test
keeps them honest against pyspark's own Connect classes.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# The probe starts a Spark Connect server (a JVM) in a child process, out of
# the reach of the fixtures that mark the other Spark tests.
pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[3]
# Spark Connect's default port: another run on this machine may hold it.
DEFAULT_CONNECT_PORT = 15002


@contextlib.contextmanager
def default_connect_port_taken() -> Iterator[None]:
    """Hold Spark Connect's default port (unless someone already does), so the
    probe shows that it does not depend on it: concurrent runs cannot collide."""
    with socket.socket() as sock:
        with contextlib.suppress(OSError):  # already taken: just as good
            # On Linux this also blocks the server's wildcard bind (0.0.0.0).
            sock.bind(("127.0.0.1", DEFAULT_CONNECT_PORT))
            sock.listen()
        yield


@pytest.fixture(scope="module")
def probe() -> dict[str, object]:
    # Imported plainly, never skipped: this is the only check that the
    # Connect-shaped fakes of test_options.py match real pyspark, and `make
    # test` installs pyspark and Spark Connect's client needs (pyspark[connect]).
    for module in ("pyspark", "grpc", "pandas", "pyarrow"):
        __import__(module)
    with default_connect_port_taken():
        proc = subprocess.run(
            [sys.executable, "-m", "tests.tokenauth.spark._connect_probe"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr[-4000:]
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("name", ["stream_reader", "stream_writer", "reader", "writer"])
def test_options_on_real_connect_builders(probe: dict[str, object], name: str) -> None:
    entry = probe[name]
    assert isinstance(entry, dict)
    assert entry["kind"].startswith("pyspark.sql.connect.")
    other = 'x.LoginModule required username="bob" password="bob-pw";'
    # The user's login is found whatever its letter case...
    assert entry["existing"] == other
    # ...and not replaced without overwrite=True; the error shows neither secret.
    assert entry["conflict"] is not None
    assert "bob-pw" not in entry["conflict"] and probe["hmac"] not in entry["conflict"]
    assert entry["after_overwrite"] == probe["login"]
    applied = entry["applied"]
    assert applied["kafka.sasl.jaas.config"] == probe["login"]
    assert applied["kafka.bootstrap.servers"] == "b1:9093"
    assert applied["kafka.security.protocol"] == "SASL_PLAINTEXT"
    assert applied["kafka.sasl.mechanism"] == "SCRAM-SHA-512"
    assert entry["absent"] is None


def test_a_query_built_by_the_helpers_runs_on_connect(probe: dict[str, object]) -> None:
    assert probe["session"] == "pyspark.sql.connect.session"
    rows = probe["rows"]
    assert isinstance(rows, int) and rows > 0
    # The token's HMAC never reaches the query's progress reports.
    hmac = probe["hmac"]
    assert isinstance(hmac, str) and hmac not in str(probe["progress"])


def test_supervisor_rotates_tokens_under_a_connect_query(probe: dict[str, object]) -> None:
    result = probe["rotation"]
    assert isinstance(result, dict)
    assert result["state"] == "STOPPED"
    assert result["rotations"] >= 2 and result["renewals"] >= 1
    runs = result["runs"]
    # Each run had its own token and resumed the same checkpointed query.
    assert len(runs) >= 3
    assert len({r["token_id"] for r in runs}) == len(runs)
    assert len({r["id"] for r in runs}) == 1
    assert len({r["run"] for r in runs}) == len(runs)
    # Exactly-once across restarts: rows 0..N-1, none lost or repeated; the
    # sink may hold one batch more than the commit log (stopped in between).
    values = result["values"]
    assert values == list(range(len(values))) and values
    batches = len(values) // result["rows_per_batch"]
    assert len(values) == batches * result["rows_per_batch"]
    assert result["committed"] == list(range(len(result["committed"])))
    assert batches in (len(result["committed"]), len(result["committed"]) + 1)
    # Replaced tokens and, after stop, the last one are expired.
    assert not set(result["live_tokens"]) & {r["token_id"] for r in runs}
