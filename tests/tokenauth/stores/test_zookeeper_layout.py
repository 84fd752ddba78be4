"""What lands in ZooKeeper, byte for byte, and what we read that Kafka wrote."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient

from tests.support.clock import T0
from tests.support.clock import FakeClock
from tests.support.polling import wait_until
from tests.support.zookeeper_server import create_chroot
from tests.tokenauth.conftest import ALICE
from tests.tokenauth.conftest import BOB
from tests.tokenauth.conftest import CAROL
from tests.tokenauth.conftest import ctx
from tokenauth import TokenConfig
from tokenauth import TokenInformation
from tokenauth import TokenManager
from tokenauth import ZooKeeperTokenStore


@pytest.fixture
def raw(zookeeper_hosts: str) -> Iterator[KazooClient]:
    """A plain kazoo client in the same chroot, standing in for a Kafka broker."""
    client = KazooClient(hosts=create_chroot(zookeeper_hosts))
    client.start(timeout=10)
    yield client
    client.stop()
    client.close()


def test_create_writes_kafkas_layout(
    zookeeper_hosts: str, raw: KazooClient, clock: FakeClock[int]
) -> None:
    store = ZooKeeperTokenStore(zookeeper_hosts)
    mgr = TokenManager(
        TokenConfig.of("secretKey"), store, clock_ms=clock, token_id_factory=lambda: "tokenId1"
    )
    result = mgr.create_token(ctx(CAROL, super_user=True), [BOB], owner=ALICE)
    data, _ = raw.get("/delegation_token/tokens/tokenId1")
    assert data == (
        b'{"version":3,"owner":"User%3Aalice","tokenRequester":"User%3Acarol",'
        b'"renewers":["User%3Abob"],"issueTimestamp":1700000000000,'
        b'"maxTimestamp":1700604800000,"expiryTimestamp":1700086400000,"tokenId":"tokenId1"}'
    )
    assert result.hmac not in data
    changes = raw.get_children("/delegation_token/token_changes")
    assert changes == ["token_change_0000000000"]
    note, _ = raw.get("/delegation_token/token_changes/token_change_0000000000")
    assert note == b"tokenId1"  # the raw id, not JSON
    mgr.expire_token(ctx(ALICE), result.hmac)
    assert raw.exists("/delegation_token/tokens/tokenId1") is None
    assert sorted(raw.get_children("/delegation_token/token_changes")) == [
        "token_change_0000000000",
        "token_change_0000000001",
    ]
    note, _ = raw.get("/delegation_token/token_changes/token_change_0000000001")
    assert note == b"tokenId1"
    mgr.close()
    store.close()


def kafka_json(token_id: str, version: int = 3, **extra: object) -> bytes:
    document: dict[str, object] = {
        "tokenId": token_id,
        "expiryTimestamp": T0 + 10,
        "renewers": ["User%3Abob"],
        "maxTimestamp": T0 + 20,
        "owner": "User%3Aalice",
        "issueTimestamp": T0,
        "version": version,
    }
    if version >= 3:
        document["tokenRequester"] = "User%3Acarol"
    document.update(extra)
    return json.dumps(document, separators=(",", ":")).encode()


def test_reads_what_kafka_writes_and_skips_malformed(
    zookeeper_hosts: str, raw: KazooClient
) -> None:
    raw.create("/delegation_token/tokens/v3tok", kafka_json("v3tok"), makepath=True)
    raw.create("/delegation_token/tokens/v1tok", kafka_json("v1tok", version=1))
    raw.create("/delegation_token/tokens/bad", kafka_json("bad", version=9))
    raw.create("/delegation_token/tokens/notjson", b"hello")
    raw.create("/delegation_token/tokens/empty", b"")
    raw.create("/delegation_token/tokens/other", kafka_json("mismatch"))
    store = ZooKeeperTokenStore(zookeeper_hosts)
    assert sorted(t.token_id for t in store.tokens()) == ["v1tok", "v3tok"]
    v3 = store.get("v3tok")
    v1 = store.get("v1tok")
    assert v3 == TokenInformation("v3tok", ALICE, CAROL, (BOB,), T0, T0 + 10, T0 + 20)
    assert v1 is not None and v1.token_requester == ALICE

    # A broker adds a token and posts a notification: we follow it.
    raw.create("/delegation_token/tokens/later", kafka_json("later"))
    raw.create("/delegation_token/token_changes/token_change_", b"later", sequence=True)
    assert wait_until(lambda: store.get("later") is not None) is not None
    # A broker deletes one.
    raw.delete("/delegation_token/tokens/v3tok")
    raw.create("/delegation_token/token_changes/token_change_", b"v3tok", sequence=True)
    assert wait_until(lambda: store.get("v3tok") is None) is not None
    # Garbage notifications are skipped without stopping the listener.
    raw.create("/delegation_token/token_changes/token_change_", b"\xff\xfe", sequence=True)
    raw.create("/delegation_token/token_changes/token_change_", b"", sequence=True)
    raw.set("/delegation_token/tokens/v1tok", kafka_json("v1tok", version=2, expiryTimestamp=5))
    raw.create("/delegation_token/token_changes/token_change_", b"v1tok", sequence=True)
    assert (
        wait_until(lambda: (t := store.get("v1tok")) is not None and t.expiry_timestamp_ms == 5)
        is not None
    )
    store.close()


def test_old_notifications_are_purged(zookeeper_hosts: str, raw: KazooClient) -> None:
    now = [0.0]
    store = ZooKeeperTokenStore(zookeeper_hosts, clock=lambda: now[0], notification_expiry=60)
    store.put(TokenInformation("t1", ALICE, ALICE, (), 1, 2, 3))
    store.put(TokenInformation("t2", ALICE, ALICE, (), 1, 2, 3))
    assert store.sync(5)
    assert len(raw.get_children("/delegation_token/token_changes")) == 2
    _, stat = raw.get("/delegation_token/token_changes/token_change_0000000000")
    now[0] = stat.ctime / 1000 + 61  # both notifications are older than 60 s now
    store.remove("t2")  # a new notification triggers a processing pass and the purge
    old = {"token_change_0000000000", "token_change_0000000001"}
    assert (
        wait_until(lambda: not old & set(raw.get_children("/delegation_token/token_changes")))
        is not None
    )
    assert store.get("t1") is not None
    assert store.get("t2") is None
    store.close()


def test_recent_notifications_are_kept(zookeeper_hosts: str, raw: KazooClient) -> None:
    store = ZooKeeperTokenStore(zookeeper_hosts)  # real clock, 15 minutes
    for name in ("t1", "t2", "t3"):
        store.put(TokenInformation(name, ALICE, ALICE, (), 1, 2, 3))
    assert store.sync(5)
    assert len(raw.get_children("/delegation_token/token_changes")) == 3
    store.close()


def test_chroot_is_created(zookeeper_server: object, raw: KazooClient) -> None:
    hosts = f"{zookeeper_server.hosts}/fresh/chroot/path"  # type: ignore[attr-defined]
    store = ZooKeeperTokenStore(hosts)
    store.put(TokenInformation("t1", ALICE, ALICE, (), 1, 2, 3))
    check = KazooClient(hosts=zookeeper_server.hosts)  # type: ignore[attr-defined]
    check.start(timeout=10)
    try:
        assert check.exists("/fresh/chroot/path/delegation_token/tokens/t1") is not None
        assert check.exists("/delegation_token/tokens/t1") is None
    finally:
        check.stop()
        check.close()
        store.close()


def test_resync_after_reconnect(zookeeper_hosts: str, raw: KazooClient) -> None:
    store = ZooKeeperTokenStore(zookeeper_hosts)
    store.put(TokenInformation("t1", ALICE, ALICE, (), 1, 2, 3))
    # Simulate a lost session: the watch is gone; a change happens meanwhile.
    store._on_state("LOST")
    raw.create("/delegation_token/tokens/t2", kafka_json("t2"))
    store._on_state("CONNECTED")
    assert wait_until(lambda: store.get("t2") is not None) is not None
    store.close()
