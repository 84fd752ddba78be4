"""Credential stores: the contract and its backends (adapters over the SCRAM core).

Three backends implement :class:`CredentialStore` with identical KIP-554
semantics: :class:`InMemoryCredentialStore` (reference and test fake),
:class:`SQLiteCredentialStore` (the embedded default) and
:class:`ZooKeeperCredentialStore` (Kafka 3.x ZooKeeper-mode layout; needs
kazoo, imported only when a ZooKeeper store is created).
"""

from __future__ import annotations

from ._api import (
    AlterResult,
    CredentialInfo,
    CredentialLookup,
    CredentialStore,
    CredentialStoreError,
    CredentialStoreUnavailable,
    DescribeResult,
    KafkaError,
    Listener,
    ScramAdmin,
    ScramDeletion,
    ScramUpsertion,
    UserDescription,
)
from ._memory import InMemoryCredentialStore
from ._open import open_store
from ._sanitizer import SanitizerError, desanitize, sanitize
from ._sqlite import SQLiteCredentialStore
from ._zk_security import ZooKeeperSecurity
from ._zk_tls import ZooKeeperTls
from ._zookeeper import ZooKeeperCredentialStore

__all__ = [
    "AlterResult",
    "CredentialInfo",
    "CredentialLookup",
    "CredentialStore",
    "CredentialStoreError",
    "CredentialStoreUnavailable",
    "DescribeResult",
    "InMemoryCredentialStore",
    "KafkaError",
    "Listener",
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
