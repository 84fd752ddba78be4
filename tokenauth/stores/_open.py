"""Open a token store from a one-line location, as the credential stores are named."""

from __future__ import annotations

from typing import Any

from tokenauth.stores._api import InMemoryTokenStore, TokenStore
from tokenauth.stores._sqlite import SQLiteTokenStore
from tokenauth.stores._zookeeper import ZooKeeperTokenStore

__all__ = ["open_token_store"]


def open_token_store(location: str, **options: Any) -> TokenStore:
    """Open ``sqlite:PATH``, ``zookeeper:HOST:PORT[,...][/chroot]`` or ``memory:``.

    Keyword options go to the backend's constructor.

    Raises:
        ValueError: an unknown scheme or an empty location.
        TokenStoreUnavailable: the backend cannot be reached or loaded.
    """
    scheme, sep, rest = location.partition(":")
    if not sep:
        raise ValueError(
            "token store location must be sqlite:PATH, zookeeper:HOSTS[/chroot] or memory:, "
            f"got {location!r}"
        )
    if scheme == "memory":
        return InMemoryTokenStore(**options)
    if not rest:
        raise ValueError(f"token store location {location!r} has nothing after '{scheme}:'")
    if scheme == "sqlite":
        return SQLiteTokenStore(rest, **options)
    if scheme == "zookeeper":
        return ZooKeeperTokenStore(rest, **options)
    raise ValueError(f"unknown token store scheme {scheme!r}; expected sqlite, zookeeper or memory")
