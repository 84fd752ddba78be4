"""A SQLite-backed store mirrored in memory, following its change log: written once for
the credential store and ``tokenauth``'s token store.

A subclass names its tables and says how to load everything, swap a full
load in, and re-read a few keys; this base opens the file, loads it, starts
the :class:`~sasl_scram.store.sqlite.Poller` and closes it all again.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from typing import ClassVar

import sasl_scram.store.sqlite._changes as _changes
from sasl_scram.store._api import NoStore
from sasl_scram.store._kind import StoreBase
from sasl_scram.store._kind import StoreKind

__all__ = ["FollowedTable", "TableKind"]


class TableKind(StoreKind):
    """What distinguishes one SQLite store from another, for :class:`FollowedTable`.

    Args:
        table: ``CREATE TABLE IF NOT EXISTS`` of the data table.
        changes: The change-log table and its column naming the changed key;
            the table is created here, the same for every store.
        also: More ``CREATE TABLE IF NOT EXISTS`` statements of the store's
            schema, created with it at open (new and existing files alike).
            A store opened with ``create=False`` needs only the data table and
            the change log (``tables``): a file from before an ``also`` table
            is still the store.
        names: ``what``, ``errors`` (the second: the file cannot be opened),
            ``logger``, ``thread_name`` (the poller's) and ``listeners``, as
            :class:`~sasl_scram.store.StoreKind` takes them.
    """

    def __init__(
        self, *, table: str, changes: tuple[str, str], also: Sequence[str] = (), **names: Any
    ) -> None:
        super().__init__(**names)
        self.changes_table, self.key_column = changes
        self.schema = (
            table,
            # Identifiers are the stores' constants, never user input.
            f"""CREATE TABLE IF NOT EXISTS {self.changes_table} (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                {self.key_column} TEXT NOT NULL,
                changed_at REAL NOT NULL
            )""",
            *also,
        )
        self.tables = (_table_name(table), self.changes_table)


def _table_name(statement: str) -> str:
    """The table a ``CREATE TABLE IF NOT EXISTS <name>`` statement creates."""
    match = re.match(r"\s*CREATE TABLE IF NOT EXISTS\s+(\w+)", statement)
    if match is None:
        raise ValueError(f"not a CREATE TABLE IF NOT EXISTS statement: {statement!r}")
    return match.group(1)


class FollowedTable(StoreBase):
    """The shared half of a SQLite store: the file, the lock, the change log, the poller.

    A subclass sets :attr:`kind` and implements :meth:`_prepare`,
    :meth:`_load_all`, :meth:`_replace_all` and :meth:`_apply`.

    Args:
        path: The database file (created if missing).
        poll_interval: Seconds between checks for other processes' changes;
            ``0`` disables the background thread (call :meth:`refresh`).
        change_retention: Seconds change-log rows are kept.
        busy_timeout: Seconds to wait for another process's write lock.
        clock: Wall-clock seconds, for the change log.
        create: Create a missing file (and its folder) and the schema;
            ``False`` for a store opened only to read (or to delete), which
            then creates and writes nothing at open: the file must already
            hold the store, else the unavailable error is raised from
            :class:`~sasl_scram.store.sqlite.NoStore`.
    """

    kind: ClassVar[TableKind]

    def __init__(
        self,
        path: str | Path,
        *,
        poll_interval: float = _changes.DEFAULT_POLL_INTERVAL,
        change_retention: float = _changes.DEFAULT_CHANGE_RETENTION,
        busy_timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
        create: bool = True,
    ) -> None:
        kind = self.kind
        self._path = str(path)
        problem = _changes.path_problem(self._path, what=kind.what)
        if problem:
            raise kind.unavailable(problem)
        self._lock = threading.RLock()
        super().__init__()
        self._prepare()
        try:
            self._db = _changes.open_database(
                self._path,
                busy_timeout=busy_timeout,
                schema=kind.schema,
                create=create,
                tables=kind.tables,
            )
            with self._lock:
                self._changes = _changes.ChangeLog(
                    self._db,
                    table=kind.changes_table,
                    key_column=kind.key_column,
                    retention=change_retention,
                    clock=clock,
                )
                self._replace_all(self._load_all())
        except NoStore as exc:
            raise kind.unavailable(
                f"no SQLite {kind.what} at {self._path}: {exc} (a read creates nothing)"
            ) from exc
        except (sqlite3.Error, OSError) as exc:
            # OSError: creating the owner-only file (or its folder) before SQLite opens it.
            raise kind.unavailable(self._open_error(exc)) from exc
        self._poller = _changes.Poller(
            self.refresh,
            poll_interval,
            closed_error=kind.error,
            name=kind.thread_name,
            logger=kind.log,
            failure_message=f"polling the SQLite {kind.what} failed",
        )

    def _open_error(self, exc: sqlite3.Error | OSError) -> str:
        if isinstance(exc, sqlite3.Error) and exc.sqlite_errorcode == sqlite3.SQLITE_NOTADB:
            # Garbage, or an encrypted database: no store of ours, so say that.
            return f"{self._path} is not a SQLite {self.kind.what}: {exc}"
        return f"cannot open the SQLite {self.kind.what}: {exc}"

    # -- what a subclass provides ----------------------------------------------------

    def _prepare(self) -> None:
        """Create the empty in-memory mirror (before the first load)."""
        raise NotImplementedError

    def _load_all(self) -> Mapping[Any, Any]:
        """Every key's value, read from the database (under the lock)."""
        raise NotImplementedError

    def _replace_all(self, values: Mapping[Any, Any]) -> list[str]:
        """Swap a full load into the mirror; returns the keys that changed."""
        raise NotImplementedError

    def _apply(self, keys: Sequence[str]) -> None:
        """Re-read ``keys`` into the mirror and tell the listeners (under the lock)."""
        raise NotImplementedError

    def _on_close(self) -> None:
        """Drop the mirror, if the store must (before the database closes)."""

    # -- shared ------------------------------------------------------------------------

    def refresh(self) -> None:
        """Pick up other processes' changes now (the poller does this periodically)."""
        self._check_open()
        with self._lock:
            self._changes.poll(
                apply=self._apply,
                reload=lambda: self._replace_all(self._load_all()),
                notify=self._listeners.notify,
            )

    def _shutdown(self) -> None:
        # Stop polling, then close the database.
        self._poller.stop()
        self._on_close()
        with self._lock:
            self._db.close()

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """The store lock and one durable transaction around a write."""
        with self._lock, _changes.transaction(self._db):
            yield self._db
