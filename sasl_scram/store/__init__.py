"""Credential stores: the contract and its backends (adapters over the SCRAM core).

Three backends implement :class:`CredentialStore` with identical KIP-554
semantics: :class:`InMemoryCredentialStore` (reference and test fake),
:class:`SQLiteCredentialStore` (the embedded default) and
:class:`ZooKeeperCredentialStore` (Kafka 3.x ZooKeeper-mode layout; needs
kazoo, imported only when a ZooKeeper store is created).
"""

from __future__ import annotations

from sasl_scram.store._api import (
    AlterResult,
    CredentialInfo,
    CredentialLookup,
    CredentialStore,
    CredentialStoreError,
    CredentialStoreUnavailable,
    DecoySecretSource,
    DescribeResult,
    Listener,
    ScramAdmin,
    ScramDeletion,
    ScramUpsertion,
    UserDescription,
)
from sasl_scram.store._cache import DEFAULT_MAX_STALENESS
from sasl_scram.store._listeners import ListenerSet
from sasl_scram.store._memory import InMemoryCredentialStore
from sasl_scram.store._open import open_store
from sasl_scram.store.sqlite import SQLiteCredentialStore
from sasl_scram.store.zookeeper import (
    SanitizerError,
    ZooKeeperCredentialStore,
    ZooKeeperSecurity,
    ZooKeeperTls,
    desanitize,
    sanitize,
)

__all__ = [
    "DEFAULT_MAX_STALENESS",
    "AlterResult",
    "CredentialInfo",
    "CredentialLookup",
    "CredentialStore",
    "CredentialStoreError",
    "CredentialStoreUnavailable",
    "DecoySecretSource",
    "DescribeResult",
    "InMemoryCredentialStore",
    "Listener",
    "ListenerSet",
    "SQLiteCredentialStore",
    "SanitizerError",
    "ScramAdmin",
    "ScramDeletion",
    "ScramUpsertion",
    "UserDescription",
    "ZooKeeperCredentialStore",
    "ZooKeeperSecurity",
    "ZooKeeperTls",
    "desanitize",
    "open_store",
    "sanitize",
]
