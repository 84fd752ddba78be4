"""A network partition between an endpoint and ZooKeeper, through a TCP proxy:
the endpoint keeps serving from its cache until
``scram.store.max.staleness.ms``, then fails closed, and recovers after the
partition heals, serving a change made while it was cut off.

Two kinds of partition: ``refuse`` (connections reset: the loss is known at
once) and ``drop`` (a black hole: kazoo notices only when a ping goes
unanswered, within two thirds of the session timeout, as ZooKeeper's own
client does)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.faults.harness import LoginLoop
from tests.faults.harness import Results
from tests.faults.harness import alice_serving
from tests.faults.harness import login
from tests.faults.harness import seed_users
from tests.faults.harness import set_password
from tests.support.polling import wait_until
from tests.support.tcp_proxy import PartitionMode
from tests.support.tcp_proxy import TcpProxy
from tests.support.zookeeper_server import ZooKeeperServer

STALENESS_MS = 3000
SESSION_MS = 3000
# How early a refusal may come (clock granularity), and how late beyond noticing
# the loss (scheduling, the refused login's own round trip).
EARLY, LATE = 0.3, 1.5
# When the loss is noticed: at once (reset), or within 2/3 of the session
# timeout (kazoo's read timeout: an unanswered ping).
NOTICED = {"refuse": 0.0, "drop": SESSION_MS * 2 / 3 / 1000}
RECOVERY_TARGET = 3.0


@pytest.mark.parametrize("mode", ["refuse", "drop"])
def test_partition_serves_from_cache_then_fails_closed_then_recovers(
    mode: PartitionMode, dedicated_zookeeper: ZooKeeperServer, tmp_path: Path, results: Results
) -> None:
    zk = dedicated_zookeeper
    staleness = STALENESS_MS / 1000
    latest = staleness + NOTICED[mode] + LATE
    seed_users(zk.hosts)
    with TcpProxy("127.0.0.1", zk.port) as proxy:
        props = {
            "scram.store.max.staleness.ms": str(STALENESS_MS),
            "zookeeper.session.timeout.ms": str(SESSION_MS),
        }
        with (
            alice_serving(tmp_path, proxy.address, properties=props) as (ep,),
            LoginLoop(ep.bootstrap, "alice", "pw-0") as logins,
        ):
            accepted_before = wait_until(lambda: bool(logins.since(0.0)), 5, 0.05)
            assert accepted_before is not None
            accepts_before = proxy.accepted
            cut_at = time.monotonic()
            proxy.partition(mode)
            wait_until(lambda: logins.first(False, cut_at) is not None, latest + 5, 0.05)
            refused_at = logins.first(False, cut_at)
            # A change made on the far side of the partition.
            assert set_password(zk.hosts, "alice", "pw-1")
            still_closed = not login(ep.bootstrap, "alice", "pw-0")
            attempts_during = proxy.accepted - accepts_before
            logins.password = "pw-1"
            healed_at = time.monotonic()
            proxy.heal()
            wait_until(lambda: logins.first(True, healed_at, "pw-1") is not None, 30, 0.05)
            recovered_at = logins.first(True, healed_at, "pw-1")
            partitioned = healed_at - cut_at
    fail_closed = None if refused_at is None else refused_at - cut_at
    recovery = None if recovered_at is None else recovered_at - healed_at
    results.record(
        mode=mode,
        staleness_ms=STALENESS_MS,
        fail_closed_after_s=None if fail_closed is None else round(fail_closed, 2),
        recovery_after_heal_s=None if recovery is None else round(recovery, 2),
        reconnect_attempts_during_partition=attempts_during,
        partitioned_s=round(partitioned, 1),
    )
    assert fail_closed is not None, (
        f"expected logins refused (fail closed) {staleness:g} s after the partition; "
        f"still accepted after {partitioned:.1f} s"
    )
    assert staleness - EARLY <= fail_closed <= latest, (
        f"expected fail-closed between {staleness - EARLY:g} and {latest:g} s after "
        f"the partition, measured {fail_closed:.2f} s"
    )
    assert still_closed, "a login was accepted again while still partitioned"
    assert recovery is not None and recovery <= RECOVERY_TARGET, (
        f"expected the change made during the partition served within {RECOVERY_TARGET:g} s "
        f"of healing, measured {recovery}"
    )
