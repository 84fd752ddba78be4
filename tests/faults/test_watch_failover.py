"""A child watch across a ZooKeeper leader failover, without ``serve``.

kazoo clears every watch it holds when a connection drops (it calls each once
with a NONE event) and sends no ``SetWatches`` when it reconnects, as
ZooKeeper's Java client does (``ClientCnxn``'s re-registration with the last
zxid seen): a watch survives a failover only if the client sets it again. A
leader failover drops every session's connection, the followers' too (a
follower closes its clients when it stops following). So a watch set once is
never heard from again, and ``ZkChangeWatcher``'s resync on CONNECTED is what
keeps the notifications coming, through the watch alone.

The fleet test's lags after a failover were the failure budget pacing its
probers (docs/fault-tests.md), not a lost watch: this test is the evidence.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import pytest

from sasl_scram.store.zookeeper._session import ZkSession
from sasl_scram.store.zookeeper._watcher import WatcherHooks
from sasl_scram.store.zookeeper._watcher import ZkChangeWatcher
from tests.support.polling import wait_until
from tests.support.zookeeper_ensemble import ZooKeeperEnsemble

pytestmark = pytest.mark.slow

CHANGES = "/changes"
# The raw kazoo clients here wait up to session timeout / hosts for a handshake
# answer (the stores' clients bound each attempt): 6 s sessions keep that at 2 s.
SESSION_TIMEOUT = 6.0
# A watch fires within milliseconds of the commit on loopback; 2 s is slack.
HEARD_WITHIN = 2.0


def _sequence(name: str) -> int | None:
    return int(name[len("c_") :]) if name.startswith("c_") else None


class _Heard:
    """What one watcher has been told, with when (monotonic seconds)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.names: dict[str, float] = {}
        self.resyncs: list[float] = []

    def notified(self, name: str, _data: bytes) -> None:
        with self.lock:
            self.names.setdefault(name, time.monotonic())

    def resynced(self, _changed: list[str]) -> None:
        with self.lock:
            self.resyncs.append(time.monotonic())


def _client(kazoo_client: Any, hosts: str) -> Any:
    client = kazoo_client(hosts=hosts, timeout=SESSION_TIMEOUT)
    client.start(timeout=15)
    return client


def test_a_child_watch_is_heard_after_a_leader_failover_only_when_set_again(
    zookeeper_ensemble: ZooKeeperEnsemble,
) -> None:
    import kazoo
    from kazoo.client import KazooClient
    from kazoo.protocol.states import EventType

    hosts = zookeeper_ensemble.hosts
    writer = _client(KazooClient, hosts)
    raw = _client(KazooClient, hosts)
    ours = _client(KazooClient, hosts)
    heard = _Heard()
    raw_events: list[str] = []
    watcher = ZkChangeWatcher(
        ZkSession(
            ours,
            paths=[CHANGES],
            request_timeout=3.0,
            session_timeout=SESSION_TIMEOUT,
            unavailable=RuntimeError,
            kazoo=kazoo,
            logger=logging.getLogger(__name__),
        ),
        changes_path=CHANGES,
        change_sequence=_sequence,
        notification_expiry=900.0,
        clock=time.time,
        hooks=WatcherHooks(
            reload=list, on_fresh=heard.resynced, on_notification=heard.notified,
            on_disconnect=lambda: None,
        ),
        logger=logging.getLogger(__name__),
        what="test changes",
        thread_name="test-watcher",
    )  # fmt: skip
    try:
        watcher.start()
        watcher.run_in_background()

        def raw_watch(event: Any) -> None:
            raw_events.append(event.type)

        raw.get_children(CHANGES, watch=raw_watch)
        before = writer.create(f"{CHANGES}/c_", b"", sequence=True).rsplit("/", 1)[1]
        assert wait_until(lambda: before in heard.names, HEARD_WITHIN) is not None
        assert wait_until(lambda: EventType.CHILD in raw_events, HEARD_WITHIN) is not None
        # A watch fires once: set it again, for the last time, before the failover.
        raw_events.clear()
        raw.get_children(CHANGES, watch=raw_watch)

        killed_at = time.monotonic()
        zookeeper_ensemble.kill(zookeeper_ensemble.leader())
        zookeeper_ensemble.wait_serving(timeout=30)
        clients = (writer, raw, ours)
        assert wait_until(lambda: all(c.connected for c in clients), 15) is not None
        assert wait_until(lambda: any(t > killed_at for t in heard.resyncs), 15) is not None

        after = writer.create(f"{CHANGES}/c_", b"", sequence=True).rsplit("/", 1)[1]
        created_at = time.monotonic()
        # Re-armed by the resync on CONNECTED: the watch alone wakes the watcher
        # (it has no poll), a writer's commit later.
        assert wait_until(lambda: after in heard.names, HEARD_WITHIN) is not None, (
            f"ZkChangeWatcher heard nothing of {after} within {HEARD_WITHIN:g} s of its creation "
            "after the failover"
        )
        assert heard.names[after] - created_at < HEARD_WITHIN
        # kazoo fired the old watch once with NONE on the drop and kept nothing to re-send.
        time.sleep(0.5)
        assert raw_events == [EventType.NONE], (
            f"a watch set once before the failover got {raw_events} after it: kazoo is "
            "expected to clear it on the drop, fire it once with NONE and not set it again"
        )
    finally:
        watcher.stop()
        for client in (writer, raw, ours):
            client.stop()
            client.close()
