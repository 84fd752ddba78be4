"""``kafka-scram configs --zookeeper`` against a ZooKeeper nobody listens on:
one ``kafka-scram configs: error: ...`` line naming the hosts, within
``--zookeeper-timeout`` (default 10 s), exit 1, no kazoo chatter."""

from __future__ import annotations

import re
import time

import pytest

from tests.faults.harness import Results
from tests.faults.harness import configs
from tests.support.zookeeper_server import free_port

# Waits out the CLI's 10 s default ZooKeeper timeout.
pytestmark = pytest.mark.slow

# Kafka's kafka-configs prints this for every --zookeeper use; it is not an error line.
_DEPRECATION = "Warning: --zookeeper is deprecated"
# Process start, kazoo import and our own exit, beyond the configured timeout.
_SLACK = 3.0


def _check(proc_stderr: str, returncode: int, took: float, hosts: list[str], bound: float) -> None:
    lines = [line for line in proc_stderr.splitlines() if not line.startswith(_DEPRECATION)]
    assert returncode == 1, f"expected exit 1, got {returncode}; stderr: {proc_stderr!r}"
    assert len(lines) == 1, (
        f"expected one 'kafka-scram configs: error: ...' line on stderr, got {len(lines)}, "
        f"the first and last: {lines[:1] + lines[-1:]!r}"
    )
    assert re.match(r"kafka-scram configs: error: \S", lines[0]), lines[0]
    for host in hosts:
        assert host in lines[0], f"the error does not name {host}: {lines[0]!r}"
    assert "Traceback" not in proc_stderr
    assert took <= bound, f"expected the error within {bound:g} s, it took {took:.1f} s"


def test_default_timeout_is_bounded_and_says_one_line(results: Results) -> None:
    hosts = [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"]
    started = time.monotonic()
    proc = configs(",".join(hosts), "--describe", "--entity-type", "users", timeout=60)
    took = time.monotonic() - started
    results.record(cli_unreachable_default_s=round(took, 2), stderr_lines=proc.stderr.count("\n"))
    _check(proc.stderr, proc.returncode, took, hosts, 10.0 + _SLACK)


def test_zookeeper_timeout_flag_bounds_an_alter(results: Results) -> None:
    hosts = [f"127.0.0.1:{free_port()}"]
    started = time.monotonic()
    proc = configs(
        hosts[0],
        "--zookeeper-timeout",
        "2",
        "--alter",
        "--add-config",
        "SCRAM-SHA-256=[password=unused-secret]",
        "--entity-type",
        "users",
        "--entity-name",
        "alice",
        timeout=60,
    )
    took = time.monotonic() - started
    results.record(cli_unreachable_timeout2_s=round(took, 2), returncode=proc.returncode)
    assert "unused-secret" not in proc.stderr + proc.stdout
    _check(proc.stderr, proc.returncode, took, hosts, 2.0 + _SLACK)
