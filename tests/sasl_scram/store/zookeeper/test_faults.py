"""ZooKeeper faults against real, killed and restarted ZooKeeper processes:
bounded reconnects, state changes logged once, no refusal through an expiry or a restart."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram.store import CredentialStoreUnavailable
from sasl_scram.store import ZooKeeperCredentialStore
from tests.sasl_scram.store.test_contract import ok
from tests.sasl_scram.store.test_contract import ups
from tests.support.polling import wait_until
from tests.support.tcp_proxy import TcpProxy
from tests.support.zookeeper_server import ZooKeeperServer
from tests.support.zookeeper_server import expire_session


def _records(caplog: pytest.LogCaptureFixture, prefix: str, level: int) -> list[str]:
    return [
        f"{r.levelname} {r.getMessage()}"
        for r in caplog.records
        if r.name.startswith(prefix) and r.levelno >= level
    ]


def _serves(store: ZooKeeperCredentialStore, user: str) -> bool:
    try:
        return store.lookup(user, SCRAM_SHA_256) is not None
    except CredentialStoreUnavailable:
        return False


def _served_within_3_s(
    store: ZooKeeperCredentialStore, user: str, since: float, event: str
) -> None:
    """The store serves ``user``'s change within 3 s of ``event`` (at ``since``)."""
    assert wait_until(lambda: _serves(store, user), 10) is not None
    recovered = time.monotonic() - since
    print(f"served a change {recovered:.2f} s after {event}")
    assert recovered < 3.0, f"took {recovered:.1f} s"


def test_outage_recovers_within_3_s_and_logs_each_state_once(
    dedicated_zookeeper: ZooKeeperServer, caplog: pytest.LogCaptureFixture
) -> None:
    """ZooKeeper down for 12 s: kazoo's default back-off would have grown to
    several seconds; ours reconnects within about a second of its return."""
    caplog.set_level(logging.DEBUG)
    hosts = dedicated_zookeeper.hosts
    store = ZooKeeperCredentialStore(hosts, max_staleness=2, session_timeout=30)
    try:
        assert store.alter([], [ups("before")]) == [ok("before")]
        dedicated_zookeeper.kill()
        assert wait_until(lambda: store._cache.disconnected, 10) is not None
        time.sleep(12)  # the outage itself (nothing to wait for: ZooKeeper is down)
        with pytest.raises(CredentialStoreUnavailable):
            store.lookup("before", SCRAM_SHA_256)
        dedicated_zookeeper.start()
        back = time.monotonic()
        writer = ZooKeeperCredentialStore(hosts, mode="lazy")
        try:
            assert writer.alter([], [ups("after")]) == [ok("after")]
        finally:
            writer.close()
        _served_within_3_s(store, "after", back, "ZooKeeper answered again")
    finally:
        store.close()
    ours = _records(caplog, "sasl_scram.store", logging.INFO)
    assert [line.split()[0] for line in ours] == ["WARNING", "ERROR", "INFO"], ours
    assert all(hosts in line for line in ours), ours
    assert "fails closed" in ours[1] and "resynced" in ours[2]
    assert _records(caplog, "kazoo", logging.INFO) == []  # per-attempt chatter: DEBUG
    assert len(_records(caplog, "", logging.INFO)) < 20


def test_a_reconnect_left_unanswered_costs_about_a_second(
    dedicated_zookeeper: ZooKeeperServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A server that accepts the store's reconnect and never answers its handshake
    (ZooKeeper 3.8 can, for a connection that arrives while it starts): kazoo
    alone waits out the whole session timeout (30 s here) before trying again;
    the store gives that attempt about a second and serves within 3 s."""
    with _cut_off_after_a_change(dedicated_zookeeper, caplog) as (proxy, store):
        proxy.partition("drop")
        attempts = proxy.accepted
        assert wait_until(lambda: proxy.accepted > attempts, 10) is not None
        proxy.resume()  # that attempt stays in the hole; the next one is forwarded
        resumed = time.monotonic()
        _served_within_3_s(store, "during", resumed, "an attempt went unanswered")


def test_logins_never_refused_through_an_expiry_and_a_restart(
    dedicated_zookeeper: ZooKeeperServer,
) -> None:
    """Lookups run continuously while the session is expired and ZooKeeper is
    restarted; a writer keeps changing another user. The resync swaps in a
    complete snapshot, so a current credential is never missing."""
    hosts = dedicated_zookeeper.hosts
    store = ZooKeeperCredentialStore(hosts, session_timeout=6)
    writer = ZooKeeperCredentialStore(hosts, mode="lazy")
    refusals: list[str] = []
    lookups = [0]
    stop = threading.Event()

    def log_in() -> None:
        while not stop.is_set():
            for user in ("alice", "bob"):
                if store.lookup(user, SCRAM_SHA_256) is None:
                    refusals.append(user)
            lookups[0] += 1

    def write() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            writer.alter([], [ups("carol", iterations=4096 + n % 100)])
            stop.wait(0.05)

    try:
        assert store.alter([], [ups("alice"), ups("bob")]) == [ok("alice"), ok("bob")]
        threads = [threading.Thread(target=log_in), threading.Thread(target=write)]
        for t in threads:
            t.start()
        expire_session(store.client, hosts)
        assert wait_until(lambda: not store._cache.disconnected, 15) is not None
        dedicated_zookeeper.restart()
        assert wait_until(lambda: store.sync(1.0) and not store._cache.disconnected, 20) is not None
        stop.set()
        for t in threads:
            t.join(10)
    finally:
        stop.set()
        writer.close()
        store.close()
    assert lookups[0] > 100
    assert refusals == []


@contextlib.contextmanager
def _cut_off_after_a_change(
    zookeeper: ZooKeeperServer, caplog: pytest.LogCaptureFixture
) -> Iterator[tuple[TcpProxy, ZooKeeperCredentialStore]]:
    """A store that reaches ZooKeeper through a proxy, served "before", then cut
    off (connections refused) while a writer stores "during"; on a normal exit,
    the store logged the loss and the resync, once each, and kazoo nothing."""
    caplog.set_level(logging.INFO)
    proxy = TcpProxy("127.0.0.1", zookeeper.port)
    store = ZooKeeperCredentialStore(proxy.address, session_timeout=30)
    writer = ZooKeeperCredentialStore(zookeeper.hosts, mode="lazy")
    try:
        assert store.alter([], [ups("before")]) == [ok("before")]
        proxy.partition("refuse")
        assert wait_until(lambda: store._cache.disconnected, 10) is not None
        assert writer.alter([], [ups("during")]) == [ok("during")]
        yield proxy, store
    finally:
        writer.close()
        store.close()
        proxy.close()
    ours = _records(caplog, "sasl_scram.store", logging.INFO)
    assert [line.split()[0] for line in ours] == ["WARNING", "INFO"], ours
    assert _records(caplog, "kazoo", logging.INFO) == []


def test_partition_through_a_proxy_heals_within_3_s(
    dedicated_zookeeper: ZooKeeperServer, caplog: pytest.LogCaptureFixture
) -> None:
    """The network between the store and ZooKeeper is cut for 8 s (ZooKeeper keeps
    running and takes writes); once healed the store serves them within 3 s."""
    with _cut_off_after_a_change(dedicated_zookeeper, caplog) as (proxy, store):
        time.sleep(8)  # the partition itself
        assert _serves(store, "before")  # within max_staleness: still serving
        assert not _serves(store, "during")
        proxy.heal()
        healed = time.monotonic()
        _served_within_3_s(store, "during", healed, "the partition healed")
