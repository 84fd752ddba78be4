"""Token znodes on a secured ZooKeeper get Kafka's ``zookeeper.set.acl=true`` ACLs."""

from __future__ import annotations

import uuid

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from kazoo.security import ACL
from kazoo.security import Id
from kazoo.security import Permissions

from sasl_scram.store import ZooKeeperSecurity
from tests.support.clock import T0
from tests.support.polling import wait_until
from tests.support.zookeeper_server import SECURE_ZOOKEEPER_USERS
from tests.support.zookeeper_server import ZooKeeperServer
from tests.tokenauth.conftest import ALICE
from tests.tokenauth.conftest import BOB
from tokenauth import TokenInformation
from tokenauth import ZooKeeperTokenStore

BROKER = ZooKeeperSecurity("kafka", SECURE_ZOOKEEPER_USERS["kafka"])
CREATOR_ONLY = [ACL(Permissions.ALL, Id("sasl", "kafka"))]
CREATOR_AND_WORLD_READ = [*CREATOR_ONLY, ACL(Permissions.READ, Id("world", "anyone"))]


def test_tokens_are_sensitive_and_their_notifications_are_not(
    secure_zookeeper_server: ZooKeeperServer,
) -> None:
    hosts = f"{secure_zookeeper_server.hosts}/d{uuid.uuid4().hex[:12]}"
    store = ZooKeeperTokenStore(hosts, security=BROKER)
    follower = ZooKeeperTokenStore(hosts, security=BROKER)
    broker = KazooClient(hosts=hosts, **BROKER.kazoo_options())
    anonymous = KazooClient(hosts=hosts)
    try:
        broker.start(timeout=10)
        anonymous.start(timeout=10)
        store.put(TokenInformation("tok-1", ALICE, BOB, (BOB,), T0, T0 + 10, T0 + 100))
        assert broker.get_acls("/delegation_token/tokens")[0] == CREATOR_ONLY
        assert broker.get_acls("/delegation_token/tokens/tok-1")[0] == CREATOR_ONLY
        assert broker.get_acls("/delegation_token")[0] == CREATOR_AND_WORLD_READ
        changes = broker.get_children("/delegation_token/token_changes")
        assert changes
        for change in changes:
            path = f"/delegation_token/token_changes/{change}"
            assert broker.get_acls(path)[0] == CREATOR_AND_WORLD_READ
        with pytest.raises(NoAuthError):
            anonymous.get("/delegation_token/tokens/tok-1")
        # Another process logged in as the brokers follows the change.
        assert wait_until(lambda: follower.get("tok-1") is not None) is not None
    finally:
        for kz in (broker, anonymous):
            kz.stop()
            kz.close()
        store.close()
        follower.close()
