"""Open a credential store at a :class:`StoreLocation` (or its one-line form)."""

from __future__ import annotations

from typing import Any

from sasl_scram.store._api import CredentialStore
from sasl_scram.store._location import Backends
from sasl_scram.store._location import StoreLocation
from sasl_scram.store._memory import InMemoryCredentialStore
from sasl_scram.store.sqlite import SQLiteCredentialStore
from sasl_scram.store.zookeeper import ZooKeeperCredentialStore

__all__ = ["open_store"]

_BACKENDS: Backends[CredentialStore] = Backends(
    SQLiteCredentialStore, ZooKeeperCredentialStore, InMemoryCredentialStore
)


def open_store(location: StoreLocation | str, **options: Any) -> CredentialStore:
    """Open the store at ``location``: a :class:`StoreLocation`, or ``sqlite:PATH``,
    ``zookeeper:HOST:PORT[,...][/chroot]`` or ``memory:``.

    Keyword options go to the backend's constructor, over the location's own.

    Raises:
        ValueError: an unknown scheme or an empty location.
        CredentialStoreUnavailable: the backend cannot be reached or loaded.
    """
    if isinstance(location, str):
        location = StoreLocation.parse(location)
    store: CredentialStore = location.open(_BACKENDS, **options)
    return store
