from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import pytest

from sasl_scram import KafkaPrincipal
from tests.support.clock import FakeClock
from tokenauth import InMemoryTokenStore
from tokenauth import SQLiteTokenStore
from tokenauth import TokenRequester
from tokenauth import TokenStore
from tokenauth import ZooKeeperTokenStore

ALICE = KafkaPrincipal.user("alice")
BOB = KafkaPrincipal.user("bob")
CAROL = KafkaPrincipal.user("carol")


def ctx(principal: KafkaPrincipal = ALICE, **kwargs: object) -> TokenRequester:
    return TokenRequester(principal, **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def clock() -> FakeClock[int]:
    return FakeClock.epoch_ms()


StoreFactory = Callable[[], TokenStore]


@pytest.fixture(params=["memory", "sqlite", "zookeeper"])
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """Opens stores on one shared backend; every call is a new client of it.

    For memory there is one store only (it is not shared), returned each time.
    """
    opened: list[TokenStore] = []
    if request.param == "memory":
        single = InMemoryTokenStore()

        def factory() -> TokenStore:
            return single

    elif request.param == "sqlite":
        path = tmp_path / "tokens.db"

        def factory() -> TokenStore:
            store = SQLiteTokenStore(path, poll_interval=0.01)
            opened.append(store)
            return store

    else:
        hosts = request.getfixturevalue("zookeeper_hosts")

        def factory() -> TokenStore:
            store = ZooKeeperTokenStore(hosts)
            opened.append(store)
            return store

    factory.kind = request.param  # type: ignore[attr-defined]
    yield factory
    for store in opened:
        store.close()
