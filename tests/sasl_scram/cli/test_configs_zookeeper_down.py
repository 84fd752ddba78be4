"""``configs --zookeeper`` against an unreachable ZooKeeper: one error line
naming the hosts within ``--zookeeper-timeout``, exit 1, no kazoo lines on stderr."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.zookeeper_server import free_port

# Times main() alone: the interpreter's start and the imports vary with the
# machine's load, and are not what the timeout bounds.
_TIMED_MAIN = (
    "import sys, time; from sasl_scram.cli import main; started = time.monotonic(); "
    "code = main(sys.argv[1:]); "
    "open(sys.argv[0] + '.took', 'w').write(str(time.monotonic() - started)); sys.exit(code)"
)


@pytest.mark.slow
def test_unreachable_zookeeper_is_one_line_within_the_timeout(tmp_path: Path) -> None:
    hosts = f"127.0.0.1:{free_port()}"
    script = tmp_path / "timed_main.py"
    script.write_text(_TIMED_MAIN)
    done = subprocess.run(
        [
            sys.executable,
            str(script),
            "configs",
            "--zookeeper",
            hosts,
            "--zookeeper-timeout",
            "1.5",
            "--describe",
            "--entity-type",
            "users",
            "--entity-name",
            "alice",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ},
        check=False,
    )
    took = float((tmp_path / "timed_main.py.took").read_text())
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("kafka-scram configs: error: ")
    assert hosts in lines[0] and "1.5 s" in lines[0]
    assert took < 1.5 + 3, took  # the timeout, and a margin for a loaded machine


def test_zookeeper_timeout_must_be_positive() -> None:
    from tests.sasl_scram.cli.test_configs import run

    code, _out, err = run("--zookeeper", "h:1", "--zookeeper-timeout", "0", "--describe")
    assert code == 2 and "--zookeeper-timeout" in err
