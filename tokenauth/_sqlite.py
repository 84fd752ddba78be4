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
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from ._errors import TokenStoreError, TokenStoreUnavailable
from ._store import ListenerSet, TokenListener
from ._token import TokenInformation
from ._zkformat import MalformedToken, decode_token, encode_token

__all__ = ["DEFAULT_POLL_INTERVAL", "SQLiteTokenStore"]

_log = logging.getLogger("tokenauth.store.sqlite")

DEFAULT_POLL_INTERVAL = 0.2
# Kafka purges ZooKeeper change notifications after 15 minutes; same here.
DEFAULT_CHANGE_RETENTION = 15 * 60.0

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS delegation_tokens (
        token_id TEXT PRIMARY KEY,
        data BLOB NOT NULL
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS delegation_token_changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        token_id TEXT NOT NULL,
        changed_at REAL NOT NULL
    )""",
)


class SQLiteTokenStore:
    """Delegation tokens in a SQLite file, mirrored in memory and synced across processes.

    Args:
        path: The database file (created if missing).
        poll_interval: Seconds between checks for other processes' changes;
            ``0`` disables the background thread (call :meth:`refresh`).
        change_retention: Seconds change-log rows are kept.
        busy_timeout: Seconds to wait for another process's write lock.
        clock: Wall-clock seconds, for the change log.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        change_retention: float = DEFAULT_CHANGE_RETENTION,
        busy_timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._path = str(path)
        self._clock = clock
        self._retention = change_retention
        self._lock = threading.RLock()
        self._listeners = ListenerSet()
        self._tokens: dict[str, TokenInformation] = {}
        self._closed = False
        self._stop = threading.Event()
        try:
            self._db = sqlite3.connect(
                self._path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            # FULL: a commit that returned survives a power loss.
            self._db.execute("PRAGMA synchronous=FULL")
            with self._lock:
                self._begin()
                try:
                    for statement in _SCHEMA:
                        self._db.execute(statement)
                finally:
                    self._db.execute("COMMIT")
                self._data_version = self._pragma_data_version()
                self._last_seq = self._max_seq()
                self._tokens = self._load_all()
        except sqlite3.Error as exc:
            raise TokenStoreUnavailable(f"cannot open the SQLite token store: {exc}") from exc
        self._poller: threading.Thread | None = None
        if poll_interval > 0:
            self._poller = threading.Thread(
                target=self._poll_loop, args=(poll_interval,), name="tokenauth-sqlite", daemon=True
            )
            self._poller.start()

    def __repr__(self) -> str:
        return f"SQLiteTokenStore(path={self._path!r}, tokens={len(self._tokens)})"

    # -- reads from the mirror -----------------------------------------------------

    def get(self, token_id: str) -> TokenInformation | None:
        return self._tokens.get(token_id)

    def tokens(self) -> list[TokenInformation]:
        return list(self._tokens.values())

    # -- writes ----------------------------------------------------------------------

    def put(self, info: TokenInformation) -> None:
        """Create or replace a token in one durable transaction with its change row."""
        self._check_open()
        data = encode_token(info)
        try:
            with self._lock:
                self._begin()
                try:
                    self._db.execute(
                        "INSERT OR REPLACE INTO delegation_tokens VALUES (?, ?)",
                        (info.token_id, data),
                    )
                    self._log_change(info.token_id)
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
                self._apply([info.token_id])
        except sqlite3.Error as exc:
            raise TokenStoreError(f"SQLite error; the token was not stored: {exc}") from exc

    def remove(self, token_id: str) -> bool:
        self._check_open()
        try:
            with self._lock:
                self._begin()
                try:
                    cursor = self._db.execute(
                        "DELETE FROM delegation_tokens WHERE token_id = ?", (token_id,)
                    )
                    existed = cursor.rowcount > 0
                    if existed:
                        self._log_change(token_id)
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
                if existed:
                    self._apply([token_id])
        except sqlite3.Error as exc:
            raise TokenStoreError(f"SQLite error; the token was not removed: {exc}") from exc
        return existed

    def remove_many(self, token_ids: Iterable[str]) -> list[str]:
        """Delete several tokens in one durable transaction (the expiry sweep)."""
        self._check_open()
        ids = list(token_ids)
        removed: list[str] = []
        try:
            with self._lock:
                self._begin()
                try:
                    for token_id in ids:
                        cursor = self._db.execute(
                            "DELETE FROM delegation_tokens WHERE token_id = ?", (token_id,)
                        )
                        if cursor.rowcount > 0:
                            self._log_change(token_id)
                            removed.append(token_id)
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
                if removed:
                    self._apply(removed)
        except sqlite3.Error as exc:
            raise TokenStoreError(f"SQLite error; no token was removed: {exc}") from exc
        return removed

    def add_listener(self, listener: TokenListener) -> Callable[[], None]:
        return self._listeners.add(listener)

    def refresh(self) -> None:
        """Pick up other processes' changes now (the poller does this periodically)."""
        self._check_open()
        with self._lock:
            version = self._pragma_data_version()
            if version == self._data_version:
                return
            self._data_version = version
            rows = self._db.execute(
                "SELECT seq, token_id FROM delegation_token_changes WHERE seq > ? ORDER BY seq",
                (self._last_seq,),
            ).fetchall()
            newest = self._max_seq()
            if newest > self._last_seq and (not rows or rows[0][0] != self._last_seq + 1):
                # The rows we missed were purged: reload everything.
                fresh = self._load_all()
                changed = [
                    token_id
                    for token_id in set(fresh) | set(self._tokens)
                    if fresh.get(token_id) != self._tokens.get(token_id)
                ]
                self._tokens = fresh
                self._last_seq = newest
                self._listeners.notify(changed)
                return
            if rows:
                self._last_seq = rows[-1][0]
                self._apply(list(dict.fromkeys(token_id for _, token_id in rows)))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._poller is not None:
            self._poller.join(timeout=5)
        with self._lock:
            self._db.close()

    # -- internals -------------------------------------------------------------------

    def _begin(self) -> None:
        # IMMEDIATE takes the write lock at once: no read-then-write race with
        # another process.
        self._db.execute("BEGIN IMMEDIATE")

    def _log_change(self, token_id: str) -> None:
        now = self._clock()
        self._db.execute(
            "INSERT INTO delegation_token_changes (token_id, changed_at) VALUES (?, ?)",
            (token_id, now),
        )
        self._db.execute(
            "DELETE FROM delegation_token_changes WHERE changed_at < ?", (now - self._retention,)
        )

    def _pragma_data_version(self) -> int:
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    def _max_seq(self) -> int:
        row = self._db.execute(
            "SELECT seq FROM sqlite_sequence WHERE name = 'delegation_token_changes'"
        ).fetchone()
        return int(row[0]) if row else 0

    def _decode(self, token_id: str, data: bytes | str) -> TokenInformation | None:
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        try:
            info = decode_token(raw)
        except MalformedToken as exc:
            _log.warning("skipping malformed token row %r: %s", token_id, exc)
            return None
        if info is None:
            _log.warning("skipping token row %r: not JSON", token_id)
        elif info.token_id != token_id:
            _log.warning("skipping token row %r: it holds token id %r", token_id, info.token_id)
            return None
        return info

    def _load_all(self) -> dict[str, TokenInformation]:
        out: dict[str, TokenInformation] = {}
        for token_id, data in self._db.execute("SELECT token_id, data FROM delegation_tokens"):
            info = self._decode(token_id, data)
            if info is not None:
                out[token_id] = info
        return out

    def _apply(self, token_ids: list[str]) -> None:
        changed = []
        for token_id in token_ids:
            row = self._db.execute(
                "SELECT data FROM delegation_tokens WHERE token_id = ?", (token_id,)
            ).fetchone()
            info = None if row is None else self._decode(token_id, row[0])
            old = self._tokens.get(token_id)
            if info is None:
                self._tokens.pop(token_id, None)
            else:
                self._tokens[token_id] = info
            if old != info:
                changed.append(token_id)
        self._listeners.notify(changed)

    def _poll_loop(self, interval: float) -> None:
        while not self._stop.wait(interval):
            try:
                self.refresh()
            except TokenStoreError:
                return
            except sqlite3.Error as exc:
                _log.warning("polling the SQLite token store failed: %s", exc)

    def _check_open(self) -> None:
        if self._closed:
            raise TokenStoreError("the token store is closed")
