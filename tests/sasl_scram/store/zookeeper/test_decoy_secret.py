"""The decoy secret in ZooKeeper: made once, shared by every endpoint on the
store, and hidden from other principals like the credentials."""

from __future__ import annotations

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError

from sasl_scram.store import ZooKeeperCredentialStore
from sasl_scram.store.zookeeper._store import DECOY_SECRET_PATH
from tests.sasl_scram.store.zookeeper.test_security import BROKER
from tests.sasl_scram.store.zookeeper.test_security import CREATOR_AND_WORLD_READ
from tests.sasl_scram.store.zookeeper.test_security import CREATOR_ONLY
from tests.sasl_scram.store.zookeeper.test_security import acls
from tests.sasl_scram.store.zookeeper.test_security import broker_zk
from tests.sasl_scram.store.zookeeper.test_security import client
from tests.sasl_scram.store.zookeeper.test_security import secure_hosts

__all__ = ["broker_zk", "secure_hosts"]  # fixtures, used by name


def test_decoy_secret_is_made_once_and_hidden(secure_hosts: str, broker_zk: KazooClient) -> None:
    one = ZooKeeperCredentialStore(secure_hosts, security=BROKER)
    two = ZooKeeperCredentialStore(secure_hosts, security=BROKER)
    try:
        secret = one.decoy_secret()
        assert len(secret) == 32
        assert two.decoy_secret() == secret
    finally:
        one.close()
        two.close()
    again = ZooKeeperCredentialStore(secure_hosts, security=BROKER)
    try:
        assert again.decoy_secret() == secret
    finally:
        again.close()
    assert acls(broker_zk, DECOY_SECRET_PATH) == CREATOR_ONLY
    assert acls(broker_zk, DECOY_SECRET_PATH.rsplit("/", 1)[0]) == CREATOR_ONLY
    assert acls(broker_zk, "/kafka-scram") == CREATOR_AND_WORLD_READ
    anonymous = client(secure_hosts)
    try:
        with pytest.raises(NoAuthError):
            anonymous.get(DECOY_SECRET_PATH)
    finally:
        anonymous.stop()
        anonymous.close()
