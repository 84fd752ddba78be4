"""Open a store from a one-line location, as the CLI and configuration files name it."""

from __future__ import annotations

from typing import Any

from sasl_scram.store._api import CredentialStore
from sasl_scram.store._memory import InMemoryCredentialStore
from sasl_scram.store.sqlite import SQLiteCredentialStore
from sasl_scram.store.zookeeper import ZooKeeperCredentialStore

__all__ = ["open_store"]


def open_store(location: str, **options: Any) -> CredentialStore:
    """Open ``sqlite:PATH``, ``zookeeper:HOST:PORT[,...][/chroot]`` or ``memory:``.

    Keyword options go to the backend's constructor.

    Raises:
        ValueError: an unknown scheme or an empty location.
        CredentialStoreUnavailable: the backend cannot be reached or loaded.
    """
    scheme, sep, rest = location.partition(":")
    if not sep:
        raise ValueError(
            f"store location must be sqlite:PATH, zookeeper:HOSTS[/chroot] or memory:, "
            f"got {location!r}"
        )
    if scheme == "memory":
        return InMemoryCredentialStore(**options)
    if not rest:
        raise ValueError(f"store location {location!r} has nothing after '{scheme}:'")
    if scheme == "sqlite":
        return SQLiteCredentialStore(rest, **options)
    if scheme == "zookeeper":
        return ZooKeeperCredentialStore(rest, **options)
    raise ValueError(f"unknown store scheme {scheme!r}; expected sqlite, zookeeper or memory")
