from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import pytest

from sasl_scram.store import AclStore
from sasl_scram.store import CredentialStore
from sasl_scram.store import InMemoryAclStore
from sasl_scram.store import InMemoryCredentialStore
from sasl_scram.store import SQLiteAclStore
from sasl_scram.store import SQLiteCredentialStore
from sasl_scram.store import ZooKeeperAclStore
from sasl_scram.store import ZooKeeperCredentialStore

BACKENDS = ["memory", "sqlite", "zookeeper-eager", "zookeeper-lazy"]

StoreFactory = Callable[[], CredentialStore]
AclStoreFactory = Callable[[], AclStore]


@pytest.fixture(params=BACKENDS)
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """Opens stores of one backend that share their data (a second call is a second
    process's view, except for the in-memory store, which has only one)."""
    opened: list[CredentialStore] = []
    kind: str = request.param
    memory = InMemoryCredentialStore()

    def make() -> CredentialStore:
        store: CredentialStore
        if kind == "memory":
            store = memory
        elif kind == "sqlite":
            store = SQLiteCredentialStore(tmp_path / "creds.db", poll_interval=0.02)
        else:
            hosts = request.getfixturevalue("zookeeper_hosts")
            store = ZooKeeperCredentialStore(hosts, mode=kind.split("-")[1])  # type: ignore[arg-type]
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def store(store_factory: StoreFactory) -> CredentialStore:
    return store_factory()


@pytest.fixture(params=["memory", "sqlite", "zookeeper"])
def acl_store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[AclStoreFactory]:
    """Opens ACL stores of one backend that share their data (a second call is a second
    process's view: its own SQLite connection and poller, its own ZooKeeper session;
    the in-memory store has only one)."""
    opened: list[AclStore] = []
    kind: str = request.param
    memory = InMemoryAclStore()

    def make() -> AclStore:
        store: AclStore
        if kind == "memory":
            store = memory
        elif kind == "sqlite":
            store = SQLiteAclStore(tmp_path / "creds.db", poll_interval=0.02)
        else:
            store = ZooKeeperAclStore(request.getfixturevalue("zookeeper_hosts"))
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def acl_store(acl_store_factory: AclStoreFactory) -> AclStore:
    return acl_store_factory()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # kazoo warns once per client when a chroot does not exist yet; the store
    # creates it (like KafkaZkClient.createChrootIfNecessary).
    for item in items:
        item.add_marker(pytest.mark.filterwarnings("ignore:No chroot path exists:UserWarning"))
