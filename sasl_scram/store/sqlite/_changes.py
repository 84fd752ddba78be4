"""SQLite plumbing shared by the SQLite stores: WAL file, transactions, change log, poller.

Both the credential store and ``tokenauth``'s token store keep their rows in
a SQLite file shared between processes, the way Kafka brokers share
ZooKeeper:

* WAL mode; every write is one ``BEGIN IMMEDIATE`` transaction committed with
  ``synchronous=FULL`` before it returns.
* Each write appends the changed key (a user, a token id) to a change-log
  table; every process polls ``PRAGMA data_version`` and re-reads the keys
  named in new log rows, like a broker following ZooKeeper change
  notifications.
* Log rows older than the retention (Kafka's 15 minutes for ZooKeeper
  notifications) are purged by the writer; a process that fell behind the
  purge reloads everything.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path

from sasl_scram.store._api import NoStore
from sasl_scram.store._folders import private_folders

__all__ = [
    "DEFAULT_CHANGE_RETENTION",
    "DEFAULT_POLL_INTERVAL",
    "ChangeLog",
    "Poller",
    "open_database",
    "transaction",
]

DEFAULT_POLL_INTERVAL = 0.2
# Kafka purges ZooKeeper change notifications after 15 minutes; same here.
DEFAULT_CHANGE_RETENTION = 15 * 60.0

_log = logging.getLogger("sasl_scram.store.sqlite")


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction: committed if the block succeeds, else rolled back.

    IMMEDIATE takes the write lock now, so a read-check-write inside the
    block cannot interleave with another process's.
    """
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def path_problem(path: str, *, what: str) -> str | None:
    """Why ``path`` cannot be opened as the SQLite ``what``, in one line; ``None`` if it can.

    Checked before anything else, so that a directory or a device is one error
    (not a permission WARNING about it first).
    """
    if _special(path):
        return None
    if os.path.isdir(path):
        return f"{path} is a directory; give the path of the SQLite {what}'s file in it"
    if os.path.exists(path) and not os.path.isfile(path):
        # /dev/null, a FIFO: SQLite would fail with "disk I/O error" after a write.
        return f"{path} is not a SQLite {what}: not a regular file"
    return None


def _special(path: str) -> bool:
    # SQLite's in-memory database and URI filenames name no plain file.
    return path == ":memory:" or path.startswith("file:")


def _create_private(path: str) -> None:
    """Create the database file (and a missing directory) owner-only before SQLite opens it.

    SQLite gives its ``-journal``, ``-wal`` and ``-shm`` files the database file's
    mode, so they are 0600 from their first byte too.
    """
    if _special(path):
        return
    private_folders(os.path.dirname(os.path.abspath(path)))
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    os.close(fd)


def _warn_if_shared(path: str) -> None:
    """WARNING if group or others may read the store: it holds stored and server keys.

    Only once the file is known to be the store, so that a file that is not
    one is a single error, not a warning about keys it does not hold.
    """
    if _special(path):
        return
    mode = os.stat(path).st_mode
    if mode & 0o077:
        _log.warning(
            "%s is readable or writable by group or others (mode %o): it holds "
            "stored and server keys; run chmod 600 on it",
            path,
            mode & 0o777,
        )


def _connect_existing(
    path: str, *, busy_timeout: float, tables: Sequence[str]
) -> sqlite3.Connection:
    """Open the store in an existing file without creating anything; :class:`NoStore` if none.

    ``mode=rw`` never creates the file, and only reads happen until the
    caller writes, so an empty (or foreign) file is left byte for byte.
    Not ``mode=ro``: a read-only connection cannot remove the ``-wal`` and
    ``-shm`` files it opened, and would leave them beside the store.
    """
    if _special(path):
        target, uri = path, False  # opened as a writer would open it
    elif not os.path.exists(path):
        raise NoStore("no such file")
    else:
        target, uri = f"{Path(os.path.abspath(path)).as_uri()}?mode=rw", True
    db = sqlite3.connect(
        target, timeout=busy_timeout, isolation_level=None, check_same_thread=False, uri=uri
    )
    try:
        present = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        missing = [table for table in tables if table not in present]
        if missing:
            raise NoStore(f"the file has no {' or '.join(missing)} table")
    except BaseException:
        db.close()
        raise
    return db


def open_database(
    path: str,
    *,
    busy_timeout: float,
    schema: Sequence[str],
    create: bool = True,
    tables: Sequence[str] = (),
) -> sqlite3.Connection:
    """Open (or create) the file in WAL mode and create the tables if missing.

    The connection is in autocommit mode (transactions are explicit, see
    :func:`transaction`) and may be used from several threads under the
    caller's lock.

    Args:
        create: ``False``: create nothing (no file, folder, table or journal
            mode change); the file must already hold ``tables``.
        tables: The tables a store opened with ``create=False`` must hold.

    Raises:
        NoStore: ``create=False`` and the file is missing or lacks ``tables``.
        sqlite3.Error: The file cannot be opened or the schema created.
    """
    if create:
        _create_private(path)
        db = sqlite3.connect(
            path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )
    else:
        db = _connect_existing(path, busy_timeout=busy_timeout, tables=tables)
    try:
        if create:
            # Persistent in the file; a store this library created is WAL already.
            db.execute("PRAGMA journal_mode=WAL")
        # FULL: a commit that returned is on disk even after a power loss.
        db.execute("PRAGMA synchronous=FULL")
        if create:
            with transaction(db):
                for statement in schema:
                    db.execute(statement)
        _warn_if_shared(path)
    except BaseException:
        db.close()
        raise
    return db


class ChangeLog:
    """One process's view of a change-log table ``(seq AUTOINCREMENT, <key>, changed_at)``.

    Not locked: the caller holds its store lock around every method.

    Args:
        db: The store's connection.
        table: The change-log table (a trusted constant, never user input).
        key_column: Its column naming what changed.
        retention: Seconds a row is kept before a writer purges it.
        clock: Wall-clock seconds, written as ``changed_at``.
    """

    def __init__(
        self,
        db: sqlite3.Connection,
        *,
        table: str,
        key_column: str,
        retention: float,
        clock: Callable[[], float],
    ) -> None:
        self._db = db
        self._retention = retention
        self._clock = clock
        # Identifiers are the stores' constants, so building the SQL is safe.
        self._insert = f"INSERT INTO {table} ({key_column}, changed_at) VALUES (?, ?)"  # noqa: S608
        self._purge = f"DELETE FROM {table} WHERE changed_at < ?"  # noqa: S608
        self._select = f"SELECT seq, {key_column} FROM {table} WHERE seq > ? ORDER BY seq"  # noqa: S608
        self._newest = f"SELECT seq FROM sqlite_sequence WHERE name = '{table}'"  # noqa: S608
        self._data_version = self._pragma_data_version()
        self._last_seq = self._max_seq()

    def append(self, key: str) -> None:
        """Log a change of ``key`` and purge expired rows (inside the write transaction)."""
        now = self._clock()
        self._db.execute(self._insert, (key, now))
        self._db.execute(self._purge, (now - self._retention,))

    def poll(
        self,
        *,
        apply: Callable[[list[str]], None],
        reload: Callable[[], Iterable[str]],
        notify: Callable[[Iterable[str]], None],
    ) -> None:
        """Follow the changes other connections committed since the last call.

        Args:
            apply: Re-reads the keys named by new rows (each once, in log
                order) and tells the listeners.
            reload: Reloads everything when rows we never saw were purged;
                returns the keys that changed, which go to ``notify``.
            notify: Tells the listeners.
        """
        version = self._pragma_data_version()
        if version == self._data_version:
            return
        self._data_version = version
        rows = self._db.execute(self._select, (self._last_seq,)).fetchall()
        newest = self._max_seq()
        if newest > self._last_seq and (not rows or rows[0][0] != self._last_seq + 1):
            # The rows we missed were purged: reload everything.
            changed = reload()
            self._last_seq = newest
            notify(changed)
            return
        if rows:
            self._last_seq = rows[-1][0]
            apply(list(dict.fromkeys(key for _, key in rows)))

    def _pragma_data_version(self) -> int:
        # Changes whenever another connection commits to the file.
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    def _max_seq(self) -> int:
        row = self._db.execute(self._newest).fetchone()
        return int(row[0]) if row else 0


class Poller:
    """Calls ``refresh`` every ``interval`` seconds on a daemon thread until :meth:`stop`.

    No thread is started when ``interval`` is not positive (the owner then
    calls ``refresh`` itself). The thread ends when ``refresh`` raises
    ``closed_error`` (the store was closed); a ``sqlite3.Error`` is logged as
    ``failure_message: <error>`` and polling goes on.
    """

    def __init__(
        self,
        refresh: Callable[[], None],
        interval: float,
        *,
        closed_error: type[Exception],
        name: str,
        logger: logging.Logger,
        failure_message: str,
    ) -> None:
        self._refresh = refresh
        self._interval = interval
        self._closed_error = closed_error
        self._log = logger
        self._failure_message = failure_message
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if interval > 0:
            self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop polling; waits up to 5 s for a refresh in progress."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._refresh()
            except self._closed_error:
                return
            except sqlite3.Error as exc:
                self._log.warning("%s: %s", self._failure_message, exc)
