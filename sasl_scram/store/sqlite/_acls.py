"""ACLs in the SQLite store's file, mirrored in memory and followed across processes.

One row per ACL in ``kafka_acls``, Kafka's constant names in each column
(``TOPIC``, ``LITERAL``, ``READ``, ``ALLOW``). The table and its change log
``kafka_acl_changes`` are part of the credential store's schema too, so a file
either store opens gets them, existing files included (``CREATE TABLE IF NOT
EXISTS`` at open: the way the SQLite store adds a table).

Each pattern's update is one ``BEGIN IMMEDIATE`` transaction committed with
``synchronous=FULL`` (the write lock makes the read-modify-write atomic, so no
retry is needed) and appends the pattern's key to the change log; every
process polls ``PRAGMA data_version`` and re-reads the patterns named by new
rows, as the credential store follows users.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from sasl_scram.authz import AccessControlEntry
from sasl_scram.authz import AclOperation
from sasl_scram.authz import AclPermissionType
from sasl_scram.authz import Authorizer
from sasl_scram.authz import AuthzError
from sasl_scram.authz import ResourcePattern
from sasl_scram.store._acls import AclSnapshot
from sasl_scram.store._acls import AclUpdateFailed
from sasl_scram.store._acls import AclWrites
from sasl_scram.store._acls import Change
from sasl_scram.store._acls import Entries
from sasl_scram.store._acls import acl_listeners
from sasl_scram.store._acls import parse_pattern_key
from sasl_scram.store._acls import pattern_key
from sasl_scram.store._api import ACL_STORE_ERRORS
from sasl_scram.store.sqlite._followed import FollowedTable
from sasl_scram.store.sqlite._followed import TableKind

__all__ = ["ACL_SCHEMA", "SQLiteAclStore"]

_log = logging.getLogger("sasl_scram.store.sqlite")

_TABLE = """CREATE TABLE IF NOT EXISTS kafka_acls (
        resource_type TEXT NOT NULL,
        pattern_type TEXT NOT NULL,
        resource_name TEXT NOT NULL,
        principal TEXT NOT NULL,
        host TEXT NOT NULL,
        operation TEXT NOT NULL,
        permission_type TEXT NOT NULL,
        PRIMARY KEY (resource_type, pattern_type, resource_name,
                     principal, host, operation, permission_type)
    ) WITHOUT ROWID"""

_COLUMNS = "resource_type, pattern_type, resource_name, principal, host, operation, permission_type"
_SELECT_ALL = f"SELECT {_COLUMNS} FROM kafka_acls"  # noqa: S608 - constants only
_SELECT_PATTERN = (
    f"{_SELECT_ALL} WHERE resource_type = ? AND pattern_type = ? AND resource_name = ?"
)
_INSERT = "INSERT OR IGNORE INTO kafka_acls VALUES (?, ?, ?, ?, ?, ?, ?)"
_DELETE = (
    "DELETE FROM kafka_acls WHERE resource_type = ? AND pattern_type = ? AND resource_name = ? "
    "AND principal = ? AND host = ? AND operation = ? AND permission_type = ?"
)
_PATTERNS = "SELECT DISTINCT resource_type, pattern_type, resource_name FROM kafka_acls"

_Row = tuple[str, str, str, str, str, str, str]

_KIND = TableKind(
    what="ACL store",
    table=_TABLE,
    changes=("kafka_acl_changes", "resource"),
    errors=ACL_STORE_ERRORS,
    thread_name="scram-sqlite-acls",
    logger=_log,
    listeners=acl_listeners,
)

#: The ACL table and its change log, for the credential store's schema.
ACL_SCHEMA: tuple[str, ...] = _KIND.schema


def _pattern_values(pattern: ResourcePattern) -> tuple[str, str, str]:
    return pattern.resource_type.name, pattern.pattern_type.name, pattern.name


def _row(pattern: ResourcePattern, entry: AccessControlEntry) -> _Row:
    return (
        *_pattern_values(pattern),
        entry.principal,
        entry.host,
        entry.operation.name,
        entry.permission_type.name,
    )


def _entry(row: _Row) -> tuple[ResourcePattern, AccessControlEntry]:
    """A row's ACL; ``ValueError`` (``AuthzError``) when Kafka could not hold it."""
    rtype, ptype, name, principal, host, operation, permission = row
    pattern = parse_pattern_key(f"{rtype}:{ptype}:{name}")
    op = AclOperation.__members__.get(operation, AclOperation.UNKNOWN)
    perm = AclPermissionType.__members__.get(permission, AclPermissionType.UNKNOWN)
    entry = AccessControlEntry(principal, host, op, perm)
    if entry.is_unknown or ":" not in principal:
        raise AuthzError(f"an ACL no authorizer holds: {entry}")
    return pattern, entry


class SQLiteAclStore(FollowedTable, AclWrites):
    """ACLs in a SQLite file (the credential store's, or one of their own), mirrored
    in an immutable snapshot and kept in sync across processes.

    Takes the arguments of :class:`~sasl_scram.store.sqlite.FollowedTable`
    (path, poll interval, change retention, busy timeout, clock, ``create``).
    """

    kind = _KIND

    def _prepare(self) -> None:
        self._snapshot = AclSnapshot()

    def __repr__(self) -> str:
        return f"SQLiteAclStore(path={self._path!r}, acls={len(self._snapshot)})"

    def acls(self) -> Authorizer:
        """The snapshot (no lock, no I/O)."""
        if self._closed:
            self._check_open()
        return self._snapshot.authorizer

    # -- the mirror ---------------------------------------------------------------------

    def _load_all(self) -> dict[ResourcePattern, Entries]:
        return _group(self._db.execute(_SELECT_ALL).fetchall())

    def _replace_all(self, values: Mapping[Any, Entries]) -> list[str]:
        return [pattern_key(p) for p in self._snapshot.replace_all(values)]

    def _apply(self, keys: Sequence[str]) -> None:
        changes: dict[ResourcePattern, Entries] = {}
        for key in keys:
            try:
                pattern = parse_pattern_key(key)
            except ValueError as exc:
                _log.warning("skipping a change of the ACL table: %s", exc)
                continue
            changes[pattern] = self._read(pattern)
        self._listeners.notify(pattern_key(p) for p in self._snapshot.apply(changes))

    def _on_close(self) -> None:
        self._snapshot.clear()

    # -- writes (AclWrites) ---------------------------------------------------------------

    def _known_patterns(self) -> Iterable[ResourcePattern]:
        # Every process's patterns, not only those this one has followed so far.
        with self._lock:
            rows = self._db.execute(_PATTERNS).fetchall()
        patterns = []
        for rtype, ptype, name in rows:
            try:
                patterns.append(parse_pattern_key(f"{rtype}:{ptype}:{name}"))
            except ValueError:
                continue  # logged when loaded
        return patterns

    def _update(self, pattern: ResourcePattern, change: Change) -> bool:
        try:
            with self._writing() as db:
                current = self._read(pattern)
                new = change(current)
                if new == current:
                    return False
                db.executemany(_DELETE, [_row(pattern, e) for e in current - new])
                db.executemany(_INSERT, [_row(pattern, e) for e in new - current])
                self._changes.append(pattern_key(pattern))
        except sqlite3.Error as exc:
            raise AclUpdateFailed(f"ACL store error; the change was not applied: {exc}") from None
        return True

    def _updated(self, patterns: list[ResourcePattern]) -> None:
        with self._lock:
            try:
                self._apply([pattern_key(p) for p in patterns])
            except sqlite3.Error as exc:  # durable anyway; the poller retries
                _log.warning("could not refresh the ACLs after a write: %s", exc)

    def _read(self, pattern: ResourcePattern) -> Entries:
        rows = self._db.execute(_SELECT_PATTERN, _pattern_values(pattern)).fetchall()
        return _group(rows).get(pattern, frozenset())


def _group(rows: Iterable[_Row]) -> dict[ResourcePattern, Entries]:
    """Rows by pattern; a row no authorizer can hold is logged and skipped."""
    grouped: dict[ResourcePattern, set[AccessControlEntry]] = {}
    for row in rows:
        try:
            pattern, entry = _entry(row)
        except ValueError as exc:
            _log.warning("skipping an ACL row: %s", exc)
            continue
        grouped.setdefault(pattern, set()).add(entry)
    return {pattern: frozenset(entries) for pattern, entries in grouped.items()}
