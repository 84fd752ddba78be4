"""The embedded SQLite backend: the credential store, the ACL store in the same file,
and the change notification that every SQLite-backed store (credentials, ACLs,
tokens) shares.

:class:`FollowedTable` is the base of such a store (file, lock, change log,
poller); :class:`ChangeLog` and :class:`Poller` let several processes on one database
file follow each other's writes; :func:`open_database` and :func:`transaction`
open a database and run one atomic write the same way for every store;
:class:`NoStore` is why a store opened with ``create=False`` is unavailable
when its file is missing or holds none of its tables.
"""

from __future__ import annotations

from sasl_scram.store._api import NoStore
from sasl_scram.store.sqlite._acls import SQLiteAclStore
from sasl_scram.store.sqlite._changes import DEFAULT_CHANGE_RETENTION
from sasl_scram.store.sqlite._changes import DEFAULT_POLL_INTERVAL
from sasl_scram.store.sqlite._changes import ChangeLog
from sasl_scram.store.sqlite._changes import Poller
from sasl_scram.store.sqlite._changes import open_database
from sasl_scram.store.sqlite._changes import transaction
from sasl_scram.store.sqlite._followed import FollowedTable
from sasl_scram.store.sqlite._followed import TableKind
from sasl_scram.store.sqlite._store import SQLiteCredentialStore

__all__ = [
    "DEFAULT_CHANGE_RETENTION",
    "DEFAULT_POLL_INTERVAL",
    "ChangeLog",
    "FollowedTable",
    "NoStore",
    "Poller",
    "SQLiteAclStore",
    "SQLiteCredentialStore",
    "TableKind",
    "open_database",
    "transaction",
]
