"""ZooKeeper backend against a real server: Kafka's bytes, notifications, cache, outages."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SCRAM_SHA_512
from sasl_scram import ScramCredential
from sasl_scram.kafka import ErrorCode
from sasl_scram.store import CredentialStoreUnavailable
from sasl_scram.store import ZooKeeperCredentialStore
from sasl_scram.store import sanitize
from tests.sasl_scram.store.test_contract import dele
from tests.sasl_scram.store.test_contract import ok
from tests.sasl_scram.store.test_contract import ups
from tests.support.polling import wait_until
from tests.support.zookeeper_server import ZooKeeperServer
from tests.support.zookeeper_server import expire_session

CRED = ScramCredential.from_password(SCRAM_SHA_256, "alice-secret", iterations=8192, salt=b"s")
CRED512 = ScramCredential.from_password(SCRAM_SHA_512, "alice-secret", salt=b"t")


@pytest.fixture
def zk(zookeeper_hosts: str) -> Iterator[KazooClient]:
    """A raw client on the test's chroot, playing Kafka's own tools."""
    root = zookeeper_hosts[zookeeper_hosts.index("/") :]
    base = KazooClient(hosts=zookeeper_hosts[: zookeeper_hosts.index("/")])
    base.start(timeout=10)
    base.ensure_path(root)
    base.stop()
    base.close()
    client = KazooClient(hosts=zookeeper_hosts)
    client.start(timeout=10)
    client.ensure_path("/config/changes")
    client.ensure_path("/config/users")
    yield client
    client.stop()
    client.close()


def kafka_write(zk: KazooClient, name: str, config: dict[str, str]) -> None:
    """What AdminZkClient.changeConfigs does: znode, then a v2 notification."""
    data = json.dumps({"version": 1, "config": config}, separators=(",", ":")).encode()
    path = f"/config/users/{name}"
    if zk.exists(path):
        zk.set(path, data)
    else:
        zk.create(path, data)
    zk.create(
        "/config/changes/config_change_",
        b'{"version":2,"entity_path":"users/' + name.encode() + b'"}',
        sequence=True,
    )


def test_layout_is_byte_exact(zookeeper_hosts: str, zk: KazooClient) -> None:
    store = ZooKeeperCredentialStore(zookeeper_hosts)
    try:
        assert store.alter([], [ups("User:alice b", iterations=8192)]) == [ok("User:alice b")]
        data, _ = zk.get("/config/users/User%3Aalice%20b")
        cred = store.lookup("User:alice b", SCRAM_SHA_256)
        assert cred is not None
        assert data == (
            b'{"version":1,"config":{"SCRAM-SHA-256":"' + cred.to_kafka_string().encode() + b'"}}'
        )
        changes = sorted(zk.get_children("/config/changes"))
        assert changes == ["config_change_0000000000"]
        assert zk.get("/config/changes/config_change_0000000000")[0] == (
            b'{"version":2,"entity_path":"users/User%3Aalice%20b"}'
        )
    finally:
        store.close()


def test_reads_what_kafka_writes_and_keeps_quotas(zookeeper_hosts: str, zk: KazooClient) -> None:
    kafka_write(
        zk,
        "User%3Abob",
        {"consumer_byte_rate": "20000.0", "SCRAM-SHA-512": CRED512.to_kafka_string()},
    )
    store = ZooKeeperCredentialStore(zookeeper_hosts)
    try:
        assert store.lookup("User:bob", SCRAM_SHA_512) == CRED512
        assert store.alter([dele("User:bob", SCRAM_SHA_512)], [ups("User:bob")]) == [ok("User:bob")]
        config = json.loads(zk.get("/config/users/User%3Abob")[0])["config"]
        assert config["consumer_byte_rate"] == "20000.0"
        assert "SCRAM-SHA-512" not in config and "SCRAM-SHA-256" in config
        # Kafka writing after us: we follow its notification.
        kafka_write(
            zk,
            "User%3Abob",
            {"SCRAM-SHA-256": CRED.to_kafka_string(), "consumer_byte_rate": "20000.0"},
        )
        assert wait_until(lambda: store.lookup("User:bob", SCRAM_SHA_256) == CRED) is not None
        # Only quotas left: the znode stays, credentials are gone.
        store.alter([dele("User:bob")], [])
        assert json.loads(zk.get("/config/users/User%3Abob")[0]) == {
            "version": 1,
            "config": {"consumer_byte_rate": "20000.0"},
        }
    finally:
        store.close()


def test_empty_znode_deleted_unless_it_has_children(zookeeper_hosts: str, zk: KazooClient) -> None:
    store = ZooKeeperCredentialStore(zookeeper_hosts)
    try:
        store.alter([], [ups("alice"), ups("carol")])
        store.alter([dele("alice")], [])
        assert zk.exists("/config/users/alice") is None
        zk.create("/config/users/carol/clients/app", b'{"version":1,"config":{}}', makepath=True)
        store.alter([dele("carol")], [])
        assert zk.get("/config/users/carol")[0] == b'{"version":1,"config":{}}'
        assert len(zk.get_children("/config/changes")) == 4
    finally:
        store.close()


def test_malformed_data_is_skipped(zookeeper_hosts: str, zk: KazooClient) -> None:
    zk.create("/config/users/notjson", b"{oops")
    zk.create("/config/users/bad%zzname", b'{"version":1,"config":{}}')
    kafka_write(
        zk,
        "badcred",
        {"SCRAM-SHA-256": "salt=AA==,nope", "SCRAM-SHA-512": CRED512.to_kafka_string()},
    )
    zk.create(
        "/config/users/<default>",
        json.dumps({"version": 1, "config": {"SCRAM-SHA-256": CRED.to_kafka_string()}}).encode(),
    )
    kafka_write(zk, "good", {"SCRAM-SHA-256": CRED.to_kafka_string()})
    zk.create("/config/changes/config_change_", b"garbage", sequence=True)
    zk.create("/config/changes/config_change_", b'{"version":7}', sequence=True)
    zk.create("/config/changes/unrelated", b"x")
    for mode in ("eager", "lazy"):
        store = ZooKeeperCredentialStore(zookeeper_hosts, mode=mode)
        try:
            assert store.lookup("good", SCRAM_SHA_256) == CRED
            assert store.lookup("badcred", SCRAM_SHA_256) is None
            assert store.lookup("badcred", SCRAM_SHA_512) == CRED512
            assert store.lookup("notjson", SCRAM_SHA_256) is None
            assert store.lookup("<default>", SCRAM_SHA_256) is None
            # More garbage arriving later never stops the notification follower.
            zk.create("/config/changes/config_change_", b"\xff\xfe", sequence=True)
            kafka_write(zk, "later", {"SCRAM-SHA-256": CRED.to_kafka_string()})
            assert wait_until(lambda s=store: s.lookup("later", SCRAM_SHA_256) == CRED) is not None  # type: ignore[misc]
            described = {d.user: d for d in store.describe().results}
            assert described["badcred"].error == ErrorCode.UNKNOWN_SERVER_ERROR
            assert described["good"].error == ErrorCode.NONE
            # A user znode we cannot parse is never overwritten.
            assert store.alter([], [ups("notjson")])[0].error == ErrorCode.UNKNOWN_SERVER_ERROR
            assert zk.get("/config/users/notjson")[0] == b"{oops"
        finally:
            store.close()
        zk.delete("/config/users/later")


def test_notification_purge_with_injected_clock(zookeeper_hosts: str, zk: KazooClient) -> None:
    now = [time.time()]
    store = ZooKeeperCredentialStore(zookeeper_hosts, clock=lambda: now[0])
    try:
        store.alter([], [ups("a"), ups("b")])
        assert store.sync(5)
        assert len(zk.get_children("/config/changes")) == 2
        now[0] += 14 * 60  # younger than 15 minutes: kept
        store.alter([], [ups("c")])
        assert store.sync(5)
        assert len(zk.get_children("/config/changes")) == 3
        # ctime is the server's clock: on our clock every notification, the
        # one that triggers this pass included, is now 16 minutes old.
        now[0] += 2 * 60
        store.alter([], [ups("d")])
        assert wait_until(lambda: zk.get_children("/config/changes") == []) is not None
        assert store.lookup("d", SCRAM_SHA_256) is not None
    finally:
        store.close()


def test_notification_ctimes_follow_the_live_notifications(
    zookeeper_hosts: str, zk: KazooClient
) -> None:
    # The purge remembers each notification's ctime; one purged by another
    # reader (another broker, another endpoint) must be forgotten here too.
    store = ZooKeeperCredentialStore(zookeeper_hosts)
    users = 20
    try:
        for i in range(users):
            assert store.alter([], [ups(f"user{i}")]) == [ok(f"user{i}")]
            assert store.alter([dele(f"user{i}")], []) == [ok(f"user{i}")]
        assert store.sync(5)
        assert len(zk.get_children("/config/changes")) == 2 * users
        for name in zk.get_children("/config/changes"):
            zk.delete(f"/config/changes/{name}")
        store.alter([], [ups("last")])
        assert store.sync(5)
        live = zk.get_children("/config/changes")
        assert set(store._watcher._feeds[0].ctimes) <= set(live)
        assert len(live) == 1
    finally:
        store.close()


def test_notification_expiry_is_configurable(zookeeper_hosts: str, zk: KazooClient) -> None:
    """A 60 s expiry purges the notification 60.5 s old and keeps the one
    59.4 s old. Ages are against ZooKeeper's ctime, so the two are made a
    real 1.1 s apart; the clock then stands still, and no later pass of the
    watcher can purge the younger one (each used to, 61 s on)."""
    now = [time.time()]
    store = ZooKeeperCredentialStore(zookeeper_hosts, notification_expiry=60, clock=lambda: now[0])
    changes = "/config/changes"
    try:
        store.alter([], [ups("a")])
        first = zk.exists(f"{changes}/config_change_0000000000")
        assert first is not None
        time.sleep(1.1)
        now[0] = first.ctime / 1000 + 60.5
        store.alter([], [ups("b")])
        only_second = ["config_change_0000000001"]
        assert wait_until(lambda: zk.get_children(changes) == only_second) is not None
        assert store.sync(5)
        assert zk.get_children(changes) == only_second
    finally:
        store.close()


def test_notifications_processed_in_order(zookeeper_hosts: str, zk: KazooClient) -> None:
    store = ZooKeeperCredentialStore(zookeeper_hosts)
    seen: list[str] = []
    store.add_listener(seen.append)
    try:
        creds = [ScramCredential.from_password(SCRAM_SHA_256, f"p{i}", salt=b"s") for i in range(5)]
        for cred in creds:
            kafka_write(zk, "alice", {"SCRAM-SHA-256": cred.to_kafka_string()})
        assert wait_until(lambda: store.lookup("alice", SCRAM_SHA_256) == creds[-1]) is not None
        assert store.sync(5)
        assert store.lookup("alice", SCRAM_SHA_256) == creds[-1]
        assert set(seen) == {"alice"}
    finally:
        store.close()


def test_chroot_is_created_and_isolates(zookeeper_server: ZooKeeperServer) -> None:
    a = ZooKeeperCredentialStore(zookeeper_server.hosts + "/kafka/prod")
    b = ZooKeeperCredentialStore(zookeeper_server.hosts + "/kafka/test")
    try:
        a.alter([], [ups("alice")])
        assert b.lookup("alice", SCRAM_SHA_256) is None
        raw = KazooClient(hosts=zookeeper_server.hosts)
        raw.start(timeout=10)
        assert raw.exists("/kafka/prod/config/users/alice") is not None
        assert raw.exists("/config/users/alice") is None
        raw.stop()
        raw.close()
    finally:
        a.close()
        b.close()


def test_lazy_cache_is_bounded_and_invalidated(zookeeper_hosts: str, zk: KazooClient) -> None:
    writer = ZooKeeperCredentialStore(zookeeper_hosts)
    lazy = ZooKeeperCredentialStore(zookeeper_hosts, mode="lazy", lazy_max_users=3)
    try:
        writer.alter([], [ups(f"u{i}") for i in range(10)])
        for i in range(10):
            assert lazy.lookup(f"u{i}", SCRAM_SHA_256) is not None
        assert len(lazy._cache) == 3
        assert lazy.lookup("ghost", SCRAM_SHA_256) is None  # negative entry cached
        writer.alter([], [ups("ghost")])
        assert wait_until(lambda: lazy.lookup("ghost", SCRAM_SHA_256) is not None) is not None
        writer.alter([dele("ghost")], [])
        assert wait_until(lambda: lazy.lookup("ghost", SCRAM_SHA_256) is None) is not None
    finally:
        writer.close()
        lazy.close()


def test_eager_cache_loads_everything_at_start(zookeeper_hosts: str, zk: KazooClient) -> None:
    for i in range(50):
        zk.create(
            f"/config/users/u{i}",
            json.dumps(
                {"version": 1, "config": {"SCRAM-SHA-256": CRED.to_kafka_string()}}
            ).encode(),
        )
    store = ZooKeeperCredentialStore(zookeeper_hosts)
    try:
        assert len(store._cache) == 50
        zk.stop()  # no reads needed to answer
        assert all(store.lookup(f"u{i}", SCRAM_SHA_256) == CRED for i in range(50))
    finally:
        store.close()


def test_session_expiry_resyncs(zookeeper_server: ZooKeeperServer, zookeeper_hosts: str) -> None:
    store = ZooKeeperCredentialStore(zookeeper_hosts)
    other = ZooKeeperCredentialStore(zookeeper_hosts)
    try:
        store.alter([], [ups("alice")])
        expire_session(store.client, zookeeper_server.hosts)
        # Changes made around the expiry are picked up by the full resync.
        other.alter([dele("alice")], [ups("bob")])
        assert wait_until(lambda: store.lookup("bob", SCRAM_SHA_256) is not None, 15) is not None
        assert wait_until(lambda: store.lookup("alice", SCRAM_SHA_256) is None, 15) is not None
        # And the notification watch works again afterwards.
        other.alter([], [ups("carol")])
        assert wait_until(lambda: store.lookup("carol", SCRAM_SHA_256) is not None) is not None
    finally:
        store.close()
        other.close()


def test_concurrent_alterations(zookeeper_hosts: str) -> None:
    stores = [ZooKeeperCredentialStore(zookeeper_hosts) for _ in range(2)]
    errors: list[object] = []

    def worker(index: int) -> None:
        store = stores[index % 2]
        mech = SCRAM_SHA_256 if index % 2 else SCRAM_SHA_512
        for round_ in range(10):
            result = store.alter([], [ups("shared", mech, 4096 + round_), ups(f"own{index}")])
            if any(r.error != ErrorCode.NONE for r in result):
                errors.append(result)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert errors == []
        for store in stores:
            assert store.sync(5)
            described = store.describe(["shared"]).results[0]
            assert {c.mechanism for c in described.credentials} == {SCRAM_SHA_256, SCRAM_SHA_512}
            assert (
                wait_until(lambda s=store: s.lookup("shared", SCRAM_SHA_512) is not None)  # type: ignore[misc]
                is not None
            )
            assert all(store.lookup(f"own{i}", SCRAM_SHA_256) for i in range(4))
        # Both caches converge on ZooKeeper's final state.
        assert (
            wait_until(
                lambda: (
                    stores[0].lookup("shared", SCRAM_SHA_256)
                    == stores[1].lookup("shared", SCRAM_SHA_256)
                )
            )
            is not None
        )
    finally:
        for store in stores:
            store.close()


def test_outage_staleness_fail_closed_and_loud_writes(
    dedicated_zookeeper: ZooKeeperServer,
) -> None:
    now = [1000.0]
    hosts = dedicated_zookeeper.hosts + "/kafka"
    store = ZooKeeperCredentialStore(
        hosts,
        max_staleness=30,
        monotonic=lambda: now[0],
        request_timeout=2,
        session_timeout=4,
    )
    try:
        assert store.alter([], [ups("before")]) == [ok("before")]  # write before
        dedicated_zookeeper.kill()
        assert wait_until(lambda: store._cache.disconnected, 10) is not None
        # Within the allowed staleness the cache still answers.
        now[0] += 29
        assert store.lookup("before", SCRAM_SHA_256) is not None
        assert store.lookup("nobody", SCRAM_SHA_256) is None
        # A write during the outage fails loudly and is not queued.
        [result] = store.alter([], [ups("during")])
        assert result.error == ErrorCode.UNKNOWN_SERVER_ERROR
        assert "not applied" in (result.message or "")
        described = store.describe()
        assert described.error == ErrorCode.UNKNOWN_SERVER_ERROR
        # Past the limit: fail closed.
        now[0] += 2
        with pytest.raises(CredentialStoreUnavailable):
            store.lookup("before", SCRAM_SHA_256)
        dedicated_zookeeper.start()
        assert wait_until(lambda: not store._cache.disconnected, 20) is not None
        assert store.lookup("before", SCRAM_SHA_256) is not None
        assert store.lookup("during", SCRAM_SHA_256) is None  # never silently applied
        assert store.alter([], [ups("after")]) == [ok("after")]  # write after
        assert [d.user for d in store.describe().results] == ["after", "before"]
    finally:
        store.close()


@pytest.mark.slow
def test_start_fails_loudly_without_zookeeper() -> None:
    from tests.support.zookeeper_server import free_port

    with pytest.raises(CredentialStoreUnavailable):
        ZooKeeperCredentialStore(f"127.0.0.1:{free_port()}", request_timeout=1)


@pytest.mark.parametrize("multiread", [True, False])
def test_large_eager_load_uses_multiread_or_falls_back(
    zookeeper_hosts: str, zk: KazooClient, monkeypatch: pytest.MonkeyPatch, multiread: bool
) -> None:
    """Above a few dozen users the eager load reads in multiRead batches
    (ZooKeeper 3.6+); a server or client that cannot falls back to getData."""
    from sasl_scram.store.zookeeper import _multiread as _zk_multiread
    from sasl_scram.store.zookeeper import _store as _zookeeper

    names = [f"user {i}, #{i}" for i in range(1200)]  # needs sanitizing; > 2 batches
    data = json.dumps({"version": 1, "config": {"SCRAM-SHA-512": CRED512.to_kafka_string()}})
    ops = [zk.create_async(f"/config/users/{sanitize(n)}", data.encode()) for n in names]
    for op in ops:
        op.get(timeout=30)
    zk.create(f"/config/users/{sanitize('broken')}", b"not json")
    calls: list[int] = []
    real = _zk_multiread.read_many

    def counting(client: object, paths: list[str]) -> object:
        calls.append(len(paths))
        if not multiread:
            raise _zk_multiread.MultiReadUnsupported("simulated old server")
        return real(client, paths)

    monkeypatch.setattr(_zookeeper, "read_many", counting)
    store = ZooKeeperCredentialStore(zookeeper_hosts)
    try:
        assert all(store.lookup(n, SCRAM_SHA_512) == CRED512 for n in names)
        assert store.lookup("broken", SCRAM_SHA_512) is None
        assert calls and (sum(calls) == len(names) + 1 if multiread else len(calls) == 1)
    finally:
        store.close()


@pytest.mark.parametrize("mode", ["eager", "lazy"])
def test_dot_user_names_name_no_znode(zookeeper_hosts: str, mode: str) -> None:
    """Sanitizer keeps "." and "..", which ZooKeeper refuses as node names: such a user
    has no credential (a peer may probe it), and altering it is refused, not a crash."""
    store = ZooKeeperCredentialStore(zookeeper_hosts, mode=mode)  # type: ignore[arg-type]
    try:
        for user in (".", ".."):
            assert store.lookup(user, SCRAM_SHA_256) is None
            (result,) = store.alter([], [ups(user)])
            assert result.error is ErrorCode.UNACCEPTABLE_CREDENTIAL
            assert "ZooKeeper" in (result.message or "")
            described = store.describe([user])
            assert described.error is ErrorCode.NONE
            assert described.results[0].error is ErrorCode.RESOURCE_NOT_FOUND
        # The session is unharmed: an ordinary user still works.
        assert store.alter([], [ups("alice")]) == [ok("alice")]
    finally:
        store.close()
