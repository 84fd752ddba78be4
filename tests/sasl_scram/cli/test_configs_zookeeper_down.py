"""``configs --zookeeper`` against an unreachable ZooKeeper: one error line
naming the hosts within ``--zookeeper-timeout``, exit 1, no kazoo lines on stderr."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tests.support.zookeeper_server import free_port


@pytest.mark.slow
def test_unreachable_zookeeper_is_one_line_within_the_timeout() -> None:
    hosts = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from sasl_scram.cli import main; sys.exit(main(sys.argv[1:]))",
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
    took = time.monotonic() - started
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("kafka-scram configs: error: ")
    assert hosts in lines[0] and "1.5 s" in lines[0]
    assert took < 1.5 + 4  # the timeout plus the interpreter's start


def test_zookeeper_timeout_must_be_positive() -> None:
    from tests.sasl_scram.cli.test_configs import run

    code, _out, err = run("--zookeeper", "h:1", "--zookeeper-timeout", "0", "--describe")
    assert code == 2 and "--zookeeper-timeout" in err
