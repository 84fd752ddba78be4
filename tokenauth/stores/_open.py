"""Open a token store at a location named as the credential stores' are."""

from __future__ import annotations

from typing import Any

from sasl_scram.store import Backends
from sasl_scram.store import StoreLocation
from tokenauth.stores._api import InMemoryTokenStore
from tokenauth.stores._api import TokenStore
from tokenauth.stores._sqlite import SQLiteTokenStore
from tokenauth.stores._zookeeper import ZooKeeperTokenStore

__all__ = ["open_token_store"]

_BACKENDS: Backends[TokenStore] = Backends(
    SQLiteTokenStore, ZooKeeperTokenStore, InMemoryTokenStore
)


def open_token_store(location: StoreLocation | str, **options: Any) -> TokenStore:
    """Open a token store at a :class:`~sasl_scram.store.StoreLocation` (or its
    one-line form, ``sqlite:PATH``, ...); options go to the backend, over the
    location's own.

    Raises:
        ValueError: an unknown scheme or an empty location.
        TokenStoreUnavailable: the backend cannot be reached or loaded.
    """
    if isinstance(location, str):
        location = StoreLocation.parse(location, what="token store")
    store: TokenStore = location.open(_BACKENDS, **options)
    return store
