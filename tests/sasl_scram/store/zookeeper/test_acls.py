"""The ZooKeeper ACL store against a real server: ``AclAuthorizer``'s nodes byte for
byte, its notifications both ways, its versioned update loop, malformed data,
read-only opens and outages."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient

from sasl_scram.authz import AclBindingFilter
from sasl_scram.authz import encode_acl_node
from sasl_scram.config import KafkaPrincipal
from sasl_scram.kafka import ErrorCode
from sasl_scram.store import AclStoreUnavailable
from sasl_scram.store import NoStore
from sasl_scram.store import ZooKeeperAclStore
from sasl_scram.store._acls import AclUpdateFailed
from sasl_scram.store._acls import Entries
from tests.sasl_scram.authz.helpers import GROUP
from tests.sasl_scram.authz.helpers import LITERAL
from tests.sasl_scram.authz.helpers import PREFIXED
from tests.sasl_scram.authz.helpers import Op
from tests.sasl_scram.authz.helpers import allow
from tests.sasl_scram.authz.helpers import ask
from tests.sasl_scram.authz.helpers import deny
from tests.support.polling import wait_until
from tests.support.zookeeper_server import ZooKeeperServer

ALICE = KafkaPrincipal("User", "alice")
TYPES = ["Cluster", "DelegationToken", "Group", "Topic", "TransactionalId", "User"]


@pytest.fixture
def zk(zookeeper_hosts: str) -> Iterator[KazooClient]:
    """A raw client on the test's chroot, playing Kafka's AclAuthorizer."""
    chroot = zookeeper_hosts[zookeeper_hosts.index("/") :]
    base = KazooClient(hosts=zookeeper_hosts[: zookeeper_hosts.index("/")])
    base.start(timeout=10)
    base.ensure_path(chroot)
    base.stop()
    base.close()
    client = KazooClient(hosts=zookeeper_hosts)
    client.start(timeout=10)
    yield client
    client.stop()
    client.close()


def test_the_paths_are_created_as_create_acl_paths_creates_them(
    zookeeper_hosts: str, zk: KazooClient
) -> None:
    ZooKeeperAclStore(zookeeper_hosts).close()
    assert sorted(zk.get_children("/kafka-acl")) == TYPES
    assert zk.get_children("/kafka-acl-extended") == ["prefixed"]
    assert sorted(zk.get_children("/kafka-acl-extended/prefixed")) == TYPES
    assert zk.get_children("/kafka-acl-changes") == []
    assert zk.get_children("/kafka-acl-extended-changes") == []


def test_nodes_and_notifications_are_acl_authorizers_bytes(
    zookeeper_hosts: str, zk: KazooClient
) -> None:
    store = ZooKeeperAclStore(zookeeper_hosts)
    try:
        store.create_acls(
            [allow("orders", Op.READ), deny("ord", Op.WRITE, "User:*", pattern=PREFIXED)]
        )
        assert zk.get("/kafka-acl/Topic/orders")[0] == (
            b'{"acls":[{"principal":"User:alice","permissionType":"Allow","host":"*",'
            b'"operation":"Read"}],"version":1}'
        )
        assert zk.get("/kafka-acl-extended/prefixed/Topic/ord")[0] == (
            b'{"acls":[{"principal":"User:*","permissionType":"Deny","host":"*",'
            b'"operation":"Write"}],"version":1}'
        )
        assert zk.get("/kafka-acl-changes/acl_changes_0000000000")[0] == b"TOPIC:orders"
        assert zk.get("/kafka-acl-extended-changes/acl_changes_0000000000")[0] == (
            b'{"version":1,"resourceType":"TOPIC","name":"ord","patternType":"PREFIXED"}'
        )
        # The last entry removed: the node goes, as updateResourceAcls deletes it.
        store.delete_acls([AclBindingFilter.ANY])
        assert zk.exists("/kafka-acl/Topic/orders") is None
        assert zk.exists("/kafka-acl-extended/prefixed/Topic/ord") is None
        assert len(zk.get_children("/kafka-acl-changes")) == 2
        assert len(zk.get_children("/kafka-acl-extended-changes")) == 2
    finally:
        store.close()


def test_what_acl_authorizer_writes_is_loaded_and_followed(
    zookeeper_hosts: str, zk: KazooClient
) -> None:
    read, group = allow("orders", Op.READ), allow("app", Op.READ, rtype=GROUP, pattern=PREFIXED)
    store = ZooKeeperAclStore(zookeeper_hosts)
    zk.create("/kafka-acl/Topic/orders", encode_acl_node([read.entry]))  # before 3.8's bytes too
    zk.create("/kafka-acl-changes/acl_changes_", b"TOPIC:orders", sequence=True)
    try:
        assert wait_until(lambda: store.acls().bindings == {read}, 1.0) is not None
        zk.create(
            "/kafka-acl-extended/prefixed/Group/app",
            encode_acl_node([group.entry], before_3_8=True),
        )
        zk.create(
            "/kafka-acl-extended-changes/acl_changes_",
            b'{"version":1,"resourceType":"GROUP","name":"app","patternType":"PREFIXED"}',
            sequence=True,
        )
        assert wait_until(lambda: store.acls().bindings == {read, group}, 1.0) is not None
    finally:
        store.close()
    again = ZooKeeperAclStore(zookeeper_hosts)  # loadAllAcls at start
    try:
        assert again.describe_acls() == (read, group)
    finally:
        again.close()


def test_one_cache_sees_anothers_change_within_a_second(zookeeper_hosts: str) -> None:
    first, second = ZooKeeperAclStore(zookeeper_hosts), ZooKeeperAclStore(zookeeper_hosts)
    heard: list[str] = []
    second.add_listener(heard.append)
    try:
        assert second.acls().authorize(ALICE, "10.0.0.1", ask(Op.READ, "orders")).allowed is False
        started = time.monotonic()
        first.create_acls([allow("orders", Op.READ)])
        took = wait_until(
            lambda: second.acls().authorize(ALICE, "10.0.0.1", ask(Op.READ, "orders")).allowed,
            1.0,
            interval=0.005,
        )
        assert took is not None, "the second cache did not see the ACL within a second"
        assert time.monotonic() - started < 1.0
        assert heard == ["TOPIC:LITERAL:orders"]
    finally:
        first.close()
        second.close()


def test_a_concurrent_writer_is_retried_after_kafkas_back_off(
    zookeeper_hosts: str, zk: KazooClient
) -> None:
    slept: list[float] = []
    store = ZooKeeperAclStore(zookeeper_hosts, sleep=slept.append)
    read, write = allow("orders", Op.READ), allow("orders", Op.WRITE)
    zk.create("/kafka-acl/Topic/orders", encode_acl_node([read.entry]))
    calls: list[Entries] = []

    def change(current: Entries) -> Entries:
        calls.append(current)
        if len(calls) == 1:  # another writer wins between our read and our write
            zk.set("/kafka-acl/Topic/orders", encode_acl_node([read.entry, write.entry]))
        return current | {allow("orders", Op.DELETE).entry}

    try:
        assert store._update(read.pattern, change) is True
        assert calls == [{read.entry}, {read.entry, write.entry}]
        assert len(slept) == 1 and 0.1 <= slept[0] < 0.15
        assert wait_until(lambda: len(store.acls()) == 3, 1.0) is not None
    finally:
        store.close()


def test_an_update_that_always_loses_gives_up_as_acl_authorizer_does(
    zookeeper_hosts: str, zk: KazooClient
) -> None:
    slept: list[float] = []
    store = ZooKeeperAclStore(zookeeper_hosts, sleep=slept.append)
    read = allow("orders", Op.READ)
    zk.create("/kafka-acl/Topic/orders", encode_acl_node([read.entry]))

    def change(current: Entries) -> Entries:
        zk.set("/kafka-acl/Topic/orders", encode_acl_node([read.entry]))  # a new version
        return current | {allow("orders", Op.WRITE).entry}

    try:
        with pytest.raises(AclUpdateFailed) as caught:
            store._update(read.pattern, change)
        assert caught.value.error == ErrorCode.UNKNOWN_SERVER_ERROR
        assert str(caught.value) == (
            "Failed to update ACLs for ResourcePattern(resourceType=TOPIC, name=orders, "
            "patternType=LITERAL) after trying a maximum of 10 times"
        )
        assert len(slept) == 10
        assert zk.get("/kafka-acl/Topic/orders")[0] == encode_acl_node([read.entry])
    finally:
        store.close()


def test_creating_an_existing_acl_checks_the_version_and_announces_nothing(
    zookeeper_hosts: str, zk: KazooClient
) -> None:
    store = ZooKeeperAclStore(zookeeper_hosts, sleep=lambda _: None)
    read = allow("orders", Op.READ)
    try:
        store.create_acls([read])
        version = zk.exists("/kafka-acl/Topic/orders").version
        assert store.create_acls([read])[0].error == ErrorCode.NONE
        assert zk.exists("/kafka-acl/Topic/orders").version == version
        assert len(zk.get_children("/kafka-acl-changes")) == 1
    finally:
        store.close()


def test_a_node_that_is_not_kafkas_json_is_skipped_and_never_overwritten(
    zookeeper_hosts: str, zk: KazooClient, caplog: pytest.LogCaptureFixture
) -> None:
    ZooKeeperAclStore(zookeeper_hosts).close()
    zk.create("/kafka-acl/Topic/broken", b"{oops")
    zk.create("/kafka-acl/Topic/fine", encode_acl_node([allow("fine", Op.READ).entry]))
    zk.create("/kafka-acl/Flavour/x", encode_acl_node([allow("x", Op.READ).entry]), makepath=True)
    zk.create("/kafka-acl-changes/acl_changes_", b"garbage", sequence=True)
    caplog.set_level(logging.WARNING, "sasl_scram.store.zookeeper")
    store = ZooKeeperAclStore(zookeeper_hosts)
    try:
        assert store.describe_acls() == (allow("fine", Op.READ),)
        [result] = store.create_acls([allow("broken", Op.READ)])
        assert result.error == ErrorCode.UNKNOWN_SERVER_ERROR
        assert zk.get("/kafka-acl/Topic/broken")[0] == b"{oops"
        # Garbage arriving later never stops the follower.
        zk.create("/kafka-acl-changes/acl_changes_", b"\xff", sequence=True)
        store.create_acls([allow("later", Op.READ)])
        assert wait_until(lambda: len(store.acls()) == 2, 1.0) is not None
    finally:
        store.close()
    assert "skipping /kafka-acl/Topic/broken" in caplog.text
    assert "ignoring /kafka-acl/Flavour/x" in caplog.text


def test_a_reader_on_a_chroot_without_acls_creates_nothing(
    zookeeper_hosts: str, zk: KazooClient
) -> None:
    with pytest.raises(AclStoreUnavailable) as caught:
        ZooKeeperAclStore(zookeeper_hosts, create=False)
    assert isinstance(caught.value.__cause__, NoStore)
    assert "/kafka-acl does not exist" in str(caught.value)
    assert zk.get_children("/") == []


def test_an_outage_fails_writes_and_then_reads_closed(
    dedicated_zookeeper: ZooKeeperServer,
) -> None:
    now = [0.0]
    store = ZooKeeperAclStore(
        dedicated_zookeeper.hosts, max_staleness=5.0, monotonic=lambda: now[0], request_timeout=2.0
    )
    read = allow("orders", Op.READ)
    try:
        store.create_acls([read])
        dedicated_zookeeper.kill()
        assert wait_until(lambda: not store.client.connected, 15) is not None
        [result] = store.create_acls([allow("orders", Op.WRITE)])
        assert result.error == ErrorCode.UNKNOWN_SERVER_ERROR
        assert (result.message or "").startswith(
            "ACL store unavailable; the change was not applied"
        )
        [deleted] = store.delete_acls([read.to_filter()])
        assert deleted.error == ErrorCode.UNKNOWN_SERVER_ERROR and deleted.matches == ()
        assert store.acls().bindings == {read}  # stale, within max_staleness
        now[0] += 6.0
        with pytest.raises(AclStoreUnavailable, match="failing closed"):
            store.acls()
        dedicated_zookeeper.start()
        assert wait_until(lambda: _usable(store), 15) is not None
        assert store.acls().bindings == {read}
    finally:
        store.close()


def _usable(store: ZooKeeperAclStore) -> bool:
    try:
        store.acls()
    except AclStoreUnavailable:
        return False
    return True


def test_an_endpoints_acl_store_shares_its_credential_stores_session(
    zookeeper_hosts: str,
) -> None:
    from sasl_scram.store import StoreLocation
    from sasl_scram.store import ZooKeeperCredentialStore
    from sasl_scram.store import open_acl_store

    # The location of a lazy credential store: its cache options are not the ACLs'.
    location = StoreLocation.zookeeper(zookeeper_hosts, mode="lazy", share_session=True)
    creds = ZooKeeperCredentialStore(zookeeper_hosts, mode="lazy", share_session=True)
    acls = open_acl_store(location)
    try:
        assert isinstance(acls, ZooKeeperAclStore)
        assert acls.client is creds.client
        acls.create_acls([allow("orders", Op.READ)])
    finally:
        acls.close()
    assert creds.client.connected  # the session outlives the ACL store
    creds.close()


REFUSED_NODE_NAMES = (".", "..", "a\x01", "a\x7f", "a\ue000", "a\U0001f600")
#: Near the edges of what ZooKeeper's PathUtils.validatePath refuses, but allowed.
ALLOWED_NODE_NAMES = ("...", "a\xa0", "a\uf900", "a\uffef", "\u4e2d\u6587")


def test_resource_names_zookeeper_refuses_name_no_node(
    zookeeper_hosts: str, zk: KazooClient
) -> None:
    """Resource names Kafka accepts (a group may be called "..") but ZooKeeper refuses
    as node names: adding is refused like a name with '/' (INVALID_REQUEST, not "store
    unavailable"), removing finds nothing, and a change notification naming one is
    skipped, not fatal. The names next to them are stored."""
    store = ZooKeeperAclStore(zookeeper_hosts)
    try:
        for name in ALLOWED_NODE_NAMES:
            (result,) = store.create_acls([allow(name, Op.READ, rtype=GROUP)])
            assert result.error is ErrorCode.NONE, (name, result.message)
        for name in REFUSED_NODE_NAMES:
            for pattern in (LITERAL, PREFIXED):
                binding = allow(name, Op.READ, rtype=GROUP, pattern=pattern)
                (result,) = store.create_acls([binding])
                assert result.error is ErrorCode.INVALID_REQUEST
                assert "ZooKeeper" in (result.message or "")
                assert store.delete_acls([binding.to_filter()])[0].error is ErrorCode.NONE
        zk.create("/kafka-acl-changes/acl_changes_", b"GROUP:..", sequence=True)
        # The watcher is still following: a later change arrives.
        read = allow("orders", Op.READ)
        zk.create("/kafka-acl/Topic/orders", encode_acl_node([read.entry]))
        zk.create("/kafka-acl-changes/acl_changes_", b"TOPIC:orders", sequence=True)
        allowed = {allow(name, Op.READ, rtype=GROUP) for name in ALLOWED_NODE_NAMES}
        assert wait_until(lambda: store.acls().bindings == {read, *allowed}, 5.0) is not None
    finally:
        store.close()
