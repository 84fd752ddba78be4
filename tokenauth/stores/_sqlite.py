"""Tokens in SQLite (standard library), shared between processes.

Follows the SQLite credential store (``sasl_scram.store``):

* WAL mode; every write is one ``BEGIN IMMEDIATE`` transaction committed with
  ``synchronous=FULL`` before it returns;
* each write appends the token id to a change log; every process polls
  ``PRAGMA data_version`` and re-reads the tokens named by new log rows, so a
  token created in one process reaches the others within ``poll_interval``;
* log rows older than ``change_retention`` (Kafka's 15 minutes) are purged; a
  process that fell behind the purge reloads everything.

Rows hold the exact ZooKeeper JSON (version 3), so they can be inspected and
copied to ZooKeeper as they are. The tables can share a file with the
credential store.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from sasl_scram.store.sqlite import DEFAULT_POLL_INTERVAL
from sasl_scram.store.sqlite import FollowedTable
from sasl_scram.store.sqlite import TableKind
from tokenauth._errors import TokenStoreError
from tokenauth._errors import TokenStoreUnavailable
from tokenauth._token import TokenInformation
from tokenauth.stores._api import ListenerSet
from tokenauth.stores._layout import decode_stored
from tokenauth.stores._layout import encode_token
from tokenauth.stores._mirror import TokenMirror

__all__ = ["DEFAULT_POLL_INTERVAL", "SQLiteTokenStore"]

_log = logging.getLogger("tokenauth.store.sqlite")

_TABLE = """CREATE TABLE IF NOT EXISTS delegation_tokens (
        token_id TEXT PRIMARY KEY,
        data BLOB NOT NULL
    ) WITHOUT ROWID"""


_KIND = TableKind(
    what="token store",
    table=_TABLE,
    changes=("delegation_token_changes", "token_id"),
    listeners=ListenerSet,
    errors=(TokenStoreError, TokenStoreUnavailable),
    thread_name="tokenauth-sqlite",
    logger=_log,
)


class SQLiteTokenStore(FollowedTable):
    """Delegation tokens in a SQLite file, mirrored in memory and synced across processes.

    Constructed like :class:`sasl_scram.store.sqlite.FollowedTable`.
    """

    kind = _KIND

    def _prepare(self) -> None:
        self._tokens = TokenMirror()

    def __repr__(self) -> str:
        return f"SQLiteTokenStore(path={self._path!r}, tokens={len(self._tokens)})"

    # -- reads from the mirror -----------------------------------------------------

    def get(self, token_id: str) -> TokenInformation | None:
        return self._tokens.get(token_id)

    def tokens(self) -> list[TokenInformation]:
        return self._tokens.tokens()

    # -- writes ----------------------------------------------------------------------

    def put(self, info: TokenInformation) -> None:
        """Create or replace a token in one durable transaction with its change row."""
        self._check_open()
        data = encode_token(info)
        try:
            with self._writing() as db:
                db.execute(
                    "INSERT OR REPLACE INTO delegation_tokens VALUES (?, ?)", (info.token_id, data)
                )
                self._changes.append(info.token_id)
            with self._lock:
                self._apply([info.token_id])
        except sqlite3.Error as exc:
            raise TokenStoreError(f"SQLite error; the token was not stored: {exc}") from exc

    def remove(self, token_id: str) -> bool:
        self._check_open()
        return bool(self.remove_many([token_id]))

    def remove_many(self, token_ids: Iterable[str]) -> list[str]:
        """Delete several tokens in one durable transaction (the expiry sweep)."""
        self._check_open()
        ids = list(token_ids)
        removed: list[str] = []
        try:
            with self._writing() as db:
                for token_id in ids:
                    cursor = db.execute(
                        "DELETE FROM delegation_tokens WHERE token_id = ?", (token_id,)
                    )
                    if cursor.rowcount > 0:
                        self._changes.append(token_id)
                        removed.append(token_id)
            if removed:
                with self._lock:
                    self._apply(removed)
        except sqlite3.Error as exc:
            raise TokenStoreError(f"SQLite error; no token was removed: {exc}") from exc
        return removed

    # -- internals -------------------------------------------------------------------

    def _decode(self, token_id: str, data: bytes | str) -> TokenInformation | None:
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        return decode_stored(raw, token_id, f"token row {token_id!r}", _log)

    def _replace_all(self, values: Mapping[str, Any]) -> list[str]:
        return self._tokens.replace_all(values)

    def _load_all(self) -> dict[str, TokenInformation]:
        out: dict[str, TokenInformation] = {}
        for token_id, data in self._db.execute("SELECT token_id, data FROM delegation_tokens"):
            info = self._decode(token_id, data)
            if info is not None:
                out[token_id] = info
        return out

    def _apply(self, token_ids: Sequence[str]) -> None:
        changed = []
        for token_id in token_ids:
            row = self._db.execute(
                "SELECT data FROM delegation_tokens WHERE token_id = ?", (token_id,)
            ).fetchone()
            info = None if row is None else self._decode(token_id, row[0])
            if self._tokens.apply(token_id, info):
                changed.append(token_id)
        self._listeners.notify(changed)
