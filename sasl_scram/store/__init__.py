"""Credential stores: the contract and its backends (adapters over the SCRAM core).

Three backends implement :class:`CredentialStore` with identical KIP-554
semantics: :class:`InMemoryCredentialStore` (reference and test fake),
:class:`SQLiteCredentialStore` (the embedded default) and
:class:`ZooKeeperCredentialStore` (Kafka 3.x ZooKeeper-mode layout; needs
kazoo, imported only when a ZooKeeper store is created).

The same three keep the edge's ACLs (:class:`AclStore`, with 3.9
``AclAuthorizer``'s semantics): :class:`InMemoryAclStore`,
:class:`SQLiteAclStore` (a table in the credential store's file) and
:class:`ZooKeeperAclStore` (``AclAuthorizer``'s nodes); :func:`open_acl_store`
opens the one at a credential store's location.

The pieces ``tokenauth``'s token stores share with them are public too:
:class:`Freshness` (the staleness clock that makes a store fail closed),
:class:`ListenerSet`, :class:`StoreLocation` (where a store lives, typed), and the
SQLite and ZooKeeper bases in :mod:`sasl_scram.store.sqlite` and
:mod:`sasl_scram.store.zookeeper`.
"""

from __future__ import annotations

from sasl_scram.store._api import ACL_STORE_ERRORS
from sasl_scram.store._api import AclBindingDeleteResult
from sasl_scram.store._api import AclCreateResult
from sasl_scram.store._api import AclDeleteResult
from sasl_scram.store._api import AclStore
from sasl_scram.store._api import AclStoreError
from sasl_scram.store._api import AclStoreUnavailable
from sasl_scram.store._api import AlterResult
from sasl_scram.store._api import ChangeListener
from sasl_scram.store._api import CredentialInfo
from sasl_scram.store._api import CredentialLookup
from sasl_scram.store._api import CredentialStore
from sasl_scram.store._api import CredentialStoreError
from sasl_scram.store._api import CredentialStoreUnavailable
from sasl_scram.store._api import DecoyIterationsSource
from sasl_scram.store._api import DecoySecretSource
from sasl_scram.store._api import DescribeResult
from sasl_scram.store._api import NoStore
from sasl_scram.store._api import ScramAdmin
from sasl_scram.store._api import ScramDeletion
from sasl_scram.store._api import ScramUpsertion
from sasl_scram.store._api import StoreUnavailable
from sasl_scram.store._api import UserDescription
from sasl_scram.store._folders import private_folders
from sasl_scram.store._freshness import DEFAULT_MAX_STALENESS
from sasl_scram.store._freshness import MAX_STALENESS_KEY
from sasl_scram.store._freshness import Freshness
from sasl_scram.store._freshness import parse_max_staleness
from sasl_scram.store._kind import StoreBase
from sasl_scram.store._kind import StoreKind
from sasl_scram.store._listeners import ListenerSet
from sasl_scram.store._location import SCHEMES
from sasl_scram.store._location import Backends
from sasl_scram.store._location import StoreLocation
from sasl_scram.store._location import open_location
from sasl_scram.store._location import parse_location
from sasl_scram.store._memory import InMemoryAclStore
from sasl_scram.store._memory import InMemoryCredentialStore
from sasl_scram.store._open import open_acl_store
from sasl_scram.store._open import open_store
from sasl_scram.store.sqlite import SQLiteAclStore
from sasl_scram.store.sqlite import SQLiteCredentialStore
from sasl_scram.store.zookeeper import SanitizerError
from sasl_scram.store.zookeeper import ZooKeeperAclStore
from sasl_scram.store.zookeeper import ZooKeeperCredentialStore
from sasl_scram.store.zookeeper import ZooKeeperSecurity
from sasl_scram.store.zookeeper import ZooKeeperTls
from sasl_scram.store.zookeeper import desanitize
from sasl_scram.store.zookeeper import sanitize

__all__ = [
    "ACL_STORE_ERRORS",
    "DEFAULT_MAX_STALENESS",
    "MAX_STALENESS_KEY",
    "SCHEMES",
    "AclBindingDeleteResult",
    "AclCreateResult",
    "AclDeleteResult",
    "AclStore",
    "AclStoreError",
    "AclStoreUnavailable",
    "AlterResult",
    "Backends",
    "ChangeListener",
    "CredentialInfo",
    "CredentialLookup",
    "CredentialStore",
    "CredentialStoreError",
    "CredentialStoreUnavailable",
    "DecoyIterationsSource",
    "DecoySecretSource",
    "DescribeResult",
    "Freshness",
    "InMemoryAclStore",
    "InMemoryCredentialStore",
    "ListenerSet",
    "NoStore",
    "SQLiteAclStore",
    "SQLiteCredentialStore",
    "SanitizerError",
    "ScramAdmin",
    "ScramDeletion",
    "ScramUpsertion",
    "StoreBase",
    "StoreKind",
    "StoreLocation",
    "StoreUnavailable",
    "UserDescription",
    "ZooKeeperAclStore",
    "ZooKeeperCredentialStore",
    "ZooKeeperSecurity",
    "ZooKeeperTls",
    "desanitize",
    "open_acl_store",
    "open_location",
    "open_store",
    "parse_location",
    "parse_max_staleness",
    "private_folders",
    "sanitize",
]
