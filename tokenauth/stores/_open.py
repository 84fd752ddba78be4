"""Open a token store from a one-line location, named as the credential stores are."""

from __future__ import annotations

from typing import Any

from sasl_scram.store import Backends
from sasl_scram.store import open_location
from tokenauth.stores._api import InMemoryTokenStore
from tokenauth.stores._api import TokenStore
from tokenauth.stores._sqlite import SQLiteTokenStore
from tokenauth.stores._zookeeper import ZooKeeperTokenStore

__all__ = ["open_token_store"]

_BACKENDS: Backends[TokenStore] = Backends(
    SQLiteTokenStore, ZooKeeperTokenStore, InMemoryTokenStore
)


def open_token_store(location: str, **options: Any) -> TokenStore:
    """Open a token store at a location named as a credential store's is (see
    :func:`sasl_scram.store.open_location`); options go to the backend.

    Raises:
        ValueError: an unknown scheme or an empty location.
        TokenStoreUnavailable: the backend cannot be reached or loaded.
    """
    store: TokenStore = open_location(location, _BACKENDS, what="token store", options=options)
    return store
