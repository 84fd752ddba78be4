"""Open a store from a one-line location, as the CLI and configuration files name it."""

from __future__ import annotations

from typing import Any

from sasl_scram.store._api import CredentialStore
from sasl_scram.store._location import Backends
from sasl_scram.store._location import open_location
from sasl_scram.store._memory import InMemoryCredentialStore
from sasl_scram.store.sqlite import SQLiteCredentialStore
from sasl_scram.store.zookeeper import ZooKeeperCredentialStore

__all__ = ["open_store"]

_BACKENDS: Backends[CredentialStore] = Backends(
    SQLiteCredentialStore, ZooKeeperCredentialStore, InMemoryCredentialStore
)


def open_store(location: str, **options: Any) -> CredentialStore:
    """Open ``sqlite:PATH``, ``zookeeper:HOST:PORT[,...][/chroot]`` or ``memory:``.

    Keyword options go to the backend's constructor.

    Raises:
        ValueError: an unknown scheme or an empty location.
        CredentialStoreUnavailable: the backend cannot be reached or loaded.
    """
    store: CredentialStore = open_location(location, _BACKENDS, what="store", options=options)
    return store
