"""Open a credential store, or the ACL store beside it, at a :class:`StoreLocation`
(or its one-line form)."""

from __future__ import annotations

from typing import Any

from sasl_scram.store._api import AclStore
from sasl_scram.store._api import CredentialStore
from sasl_scram.store._location import Backends
from sasl_scram.store._location import StoreLocation
from sasl_scram.store._memory import InMemoryAclStore
from sasl_scram.store._memory import InMemoryCredentialStore
from sasl_scram.store.sqlite import SQLiteAclStore
from sasl_scram.store.sqlite import SQLiteCredentialStore
from sasl_scram.store.zookeeper import ZooKeeperAclStore
from sasl_scram.store.zookeeper import ZooKeeperCredentialStore

__all__ = ["open_acl_store", "open_store"]

_BACKENDS: Backends[CredentialStore] = Backends(
    SQLiteCredentialStore, ZooKeeperCredentialStore, InMemoryCredentialStore
)
_ACL_BACKENDS: Backends[AclStore] = Backends(SQLiteAclStore, ZooKeeperAclStore, InMemoryAclStore)


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


def open_acl_store(location: StoreLocation | str, **options: Any) -> AclStore:
    """Open the ACL store at ``location``, where the credential store of the same
    location keeps its credentials (the same SQLite file, the same ZooKeeper chroot).

    Keyword options go to the backend's constructor, over the location's own
    (a ZooKeeper location's ``mode`` and ``lazy_max_users`` are the credential
    cache's, and left out: ACLs are always loaded whole).

    Raises:
        ValueError: an unknown scheme or an empty location.
        AclStoreUnavailable: the backend cannot be reached or loaded.
    """
    if isinstance(location, str):
        location = StoreLocation.parse(location, what="ACL store")
    merged = {**location.options, **options}
    for key in _CREDENTIAL_CACHE_OPTIONS:
        merged.pop(key, None)
    store: AclStore = StoreLocation(location.scheme, location.target, what="ACL store").open(
        _ACL_BACKENDS, **merged
    )
    return store


# A ZooKeeper credential store's cache options, which an ACL store has no use for.
_CREDENTIAL_CACHE_OPTIONS = ("mode", "lazy_max_users")
