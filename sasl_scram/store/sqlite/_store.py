"""The embedded default store: SQLite (standard library) in WAL mode.

* Durable: every user's alteration is one ``BEGIN IMMEDIATE`` transaction,
  committed with ``synchronous=FULL`` before ``alter`` reports success.
* Shared between processes: each alteration also appends to a change log
  table; every process polls ``PRAGMA data_version`` and re-reads the users
  named in new log rows, so a change made elsewhere reaches this process's
  cache within ``poll_interval``. Log rows older than ``change_retention``
  are purged (the same 15 minutes as Kafka's ZooKeeper notifications); a
  process that fell behind the purge reloads everything.
* Credentials are stored as Kafka's credential strings, one row per
  (user, mechanism), so they can be inspected and moved to ZooKeeper as is.
"""

from __future__ import annotations

import logging
import secrets
import sqlite3
import time
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from sasl_scram._credential import ScramCredential
from sasl_scram._errors import InvalidCredentialString
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.kafka import ErrorCode
from sasl_scram.store import _kip554
from sasl_scram.store._api import CREDENTIAL_STORE_ERRORS
from sasl_scram.store._api import AlterResult
from sasl_scram.store._api import CredentialStoreUnavailable
from sasl_scram.store._api import DescribeResult
from sasl_scram.store._cache import CredentialCache
from sasl_scram.store.sqlite._acls import ACL_SCHEMA
from sasl_scram.store.sqlite._changes import DEFAULT_POLL_INTERVAL
from sasl_scram.store.sqlite._followed import FollowedTable
from sasl_scram.store.sqlite._followed import TableKind

__all__ = ["DEFAULT_POLL_INTERVAL", "SQLiteCredentialStore"]

_log = logging.getLogger("sasl_scram.store.sqlite")

_TABLE = """CREATE TABLE IF NOT EXISTS scram_credentials (
        user TEXT NOT NULL,
        mechanism TEXT NOT NULL,
        credential TEXT NOT NULL,
        PRIMARY KEY (user, mechanism)
    ) WITHOUT ROWID"""
# Server-side secrets of the store (the decoy secret), in the same owner-only
# file; part of the schema, so a login never has to create it.
_SECRETS_TABLE = """CREATE TABLE IF NOT EXISTS scram_secrets (
        name TEXT PRIMARY KEY,
        value BLOB NOT NULL
    ) WITHOUT ROWID"""
_DECOY_SECRET = "decoy"  # noqa: S105 - a row name, not a secret

_Rows = list[tuple[str, str, str]]


_KIND = TableKind(
    what="credential store",
    table=_TABLE,
    changes=("scram_changes", "user"),
    # The edge's ACLs live in the same file (SQLiteAclStore): a file the
    # credential store opens gets their tables too, existing files included.
    also=(_SECRETS_TABLE, *ACL_SCHEMA),
    errors=CREDENTIAL_STORE_ERRORS,
    thread_name="scram-sqlite-store",
    logger=_log,
)


class SQLiteCredentialStore(FollowedTable, _kip554.AlterByUser):
    """Credentials in a SQLite file, cached in memory and kept in sync across processes.

    Takes the arguments of :class:`~sasl_scram.store.sqlite.FollowedTable`
    (path, poll interval, change retention, busy timeout, clock). A KIP-554
    alter writes one durable transaction per user.
    """

    kind = _KIND

    def _prepare(self) -> None:
        self._cache = CredentialCache(
            lazy=False, max_users=1, max_staleness=float("inf"), monotonic=time.monotonic
        )

    def __repr__(self) -> str:
        return f"SQLiteCredentialStore(path={self._path!r}, users={len(self._cache)})"

    # -- public API --------------------------------------------------------------

    @property
    def lookup_may_block(self) -> bool:
        return False  # every lookup is answered from memory

    def lookup(self, user: str, mechanism: ScramMechanism) -> ScramCredential | None:
        """The cached credential for ``(user, mechanism)`` or ``None``."""
        cache = self._cache
        if cache.unhealthy:
            cache.check_usable()
        creds = cache.get(user)
        return None if creds is None else creds.get(mechanism)

    def common_iterations(self, mechanism: ScramMechanism) -> int | None:
        """The most common count among the cached credentials (every user's)."""
        return self._cache.iterations.common(mechanism)

    def describe(self, users: Sequence[str] | None = None) -> DescribeResult:
        """KIP-554 describe, read from the database (not from the cache)."""
        self._check_open()
        try:
            with self._lock:
                if users:
                    rows = []
                    for user in dict.fromkeys(users):
                        rows += self._db.execute(
                            "SELECT user, mechanism, credential FROM scram_credentials "
                            "WHERE user = ?",
                            (user,),
                        ).fetchall()
                else:
                    rows = self._db.execute(
                        "SELECT user, mechanism, credential FROM scram_credentials"
                    ).fetchall()
        except sqlite3.Error as exc:
            return DescribeResult((), ErrorCode.UNKNOWN_SERVER_ERROR, f"SQLite error: {exc}")
        by_user: dict[str, dict[str, str]] = {}
        for user, mech, text in rows:
            by_user.setdefault(user, {})[mech] = text

        def read(user: str) -> dict[ScramMechanism, int] | None:
            raw = by_user.get(user)
            if not raw:
                return None
            iterations = {}
            for name, text in raw.items():
                try:
                    mech = ScramMechanism.from_name(name)
                    iterations[mech] = ScramCredential.from_kafka_string(text).iterations
                except (InvalidCredentialString, ValueError):
                    raise _kip554.UnreadableUser(user) from None
            return iterations

        return _kip554.describe_users(users, read, lambda: by_user)

    def _altered(self, users: list[str]) -> None:
        with self._lock:
            try:
                self._apply(users)
            except sqlite3.Error as exc:  # durable anyway; the poller retries
                _log.warning("could not refresh the cache after a write: %s", exc)

    def decoy_secret(self) -> bytes:
        """The decoy secret in ``scram_secrets``, created once by whichever process asks first.

        Once it exists it is only read: no write lock, so a login waits for no
        other process's write.
        """
        self._check_open()
        select = "SELECT value FROM scram_secrets WHERE name = ?"
        try:
            with self._lock:
                row = self._db.execute(select, (_DECOY_SECRET,)).fetchone()
            if row is None:
                with self._writing() as db:
                    db.execute(
                        "INSERT OR IGNORE INTO scram_secrets (name, value) VALUES (?, ?)",
                        (_DECOY_SECRET, secrets.token_bytes(32)),
                    )
                    row = db.execute(select, (_DECOY_SECRET,)).fetchone()
        except sqlite3.Error as exc:
            raise CredentialStoreUnavailable(f"cannot read the decoy secret: {exc}") from exc
        return bytes(row[0])

    def _on_close(self) -> None:
        self._cache.close()

    # -- internals ---------------------------------------------------------------

    def _alter_user(self, alteration: _kip554.UserAlteration) -> AlterResult:
        user = alteration.user
        try:
            with self._writing() as db:
                present = {
                    name
                    for (name,) in db.execute(
                        "SELECT mechanism FROM scram_credentials WHERE user = ?", (user,)
                    )
                }
                mechs = {m for m in ScramMechanism if m.mechanism_name in present}
                outcome = _kip554.resolve_user(alteration, mechs)
                if isinstance(outcome, AlterResult):
                    return outcome
                for mech in outcome.deletions:
                    db.execute(
                        "DELETE FROM scram_credentials WHERE user = ? AND mechanism = ?",
                        (user, mech.mechanism_name),
                    )
                for mech, cred in outcome.upsertions.items():
                    db.execute(
                        "INSERT OR REPLACE INTO scram_credentials VALUES (?, ?, ?)",
                        (user, mech.mechanism_name, cred.to_kafka_string()),
                    )
                self._changes.append(user)
        except sqlite3.Error as exc:
            return AlterResult(
                user,
                ErrorCode.UNKNOWN_SERVER_ERROR,
                f"Credential store error; the alteration was not applied: {exc}",
            )
        return AlterResult(user)

    def _rows_to_users(self, rows: _Rows) -> dict[str, dict[ScramMechanism, ScramCredential]]:
        users: dict[str, dict[ScramMechanism, ScramCredential]] = {}
        for user, name, text in rows:
            try:
                mech = ScramMechanism.from_name(name)
                cred = ScramCredential.from_kafka_string(text)
            except (InvalidCredentialString, ValueError) as exc:
                _log.warning("skipping a stored credential of %r: %s", user, exc)
                continue
            users.setdefault(user, {})[mech] = cred
        return users

    def _replace_all(self, values: Mapping[str, Any]) -> list[str]:
        return self._cache.replace_all(values)

    def _load_all(self) -> dict[str, dict[ScramMechanism, ScramCredential]]:
        rows = self._db.execute("SELECT user, mechanism, credential FROM scram_credentials")
        return self._rows_to_users(rows.fetchall())

    def _apply(self, users: Sequence[str]) -> None:
        changed = []
        for user in users:
            rows = self._db.execute(
                "SELECT user, mechanism, credential FROM scram_credentials WHERE user = ?",
                (user,),
            ).fetchall()
            if self._cache.put(user, self._rows_to_users(rows).get(user, {})):
                changed.append(user)
        self._listeners.notify(changed)
