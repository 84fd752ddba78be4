"""SQLite backend: WAL durability, crash safety and sharing between real processes."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram.store import SQLiteCredentialStore
from tests.sasl_scram.store.test_contract import ok
from tests.sasl_scram.store.test_contract import ups
from tests.support.polling import wait_until
from tests.support.sqlite_rows import insert_rows

ROOT = Path(__file__).resolve().parents[4]


def run_child(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_wal_and_full_sync(tmp_path: Path) -> None:
    store = SQLiteCredentialStore(tmp_path / "c.db")
    try:
        assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    finally:
        store.close()


def test_success_survives_a_crash(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    child = run_child(
        f"""
        import os
        from sasl_scram import SCRAM_SHA_256
        from sasl_scram.store import SQLiteCredentialStore, ScramUpsertion
        store = SQLiteCredentialStore({str(db)!r})
        r = store.alter([], [ScramUpsertion.from_password("alice", SCRAM_SHA_256, "pw")])
        print(r[0].error.name, flush=True)
        os.kill(os.getpid(), 9)  # no close, no checkpoint
        """
    )
    assert child.stdout.strip() == "NONE", child.stderr
    assert child.returncode == -9
    store = SQLiteCredentialStore(db)
    try:
        assert store.lookup("alice", SCRAM_SHA_256) is not None
    finally:
        store.close()


@pytest.mark.slow
def test_another_process_change_is_noticed(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    store = SQLiteCredentialStore(db, poll_interval=0.02)
    seen: list[str] = []
    store.add_listener(seen.append)
    try:
        child = run_child(
            f"""
            from sasl_scram.cli._main import main
            import io
            raise SystemExit(main(["configs", "--store", "sqlite:{db}", "--alter",
                "--add-config", "SCRAM-SHA-256=[password=pw]", "--user", "bob"],
                stdin=io.StringIO()))
            """
        )
        assert child.returncode == 0, child.stderr
        assert wait_until(lambda: store.lookup("bob", SCRAM_SHA_256) is not None) is not None
        assert "bob" in seen
        # And the other way round: the child sees ours.
        assert store.alter([], [ups("carol")]) == [ok("carol")]
        child = run_child(
            f"""
            from sasl_scram import SCRAM_SHA_256
            from sasl_scram.store import SQLiteCredentialStore
            s = SQLiteCredentialStore({str(db)!r}, poll_interval=0)
            print(s.lookup("carol", SCRAM_SHA_256) is not None)
            """
        )
        assert child.stdout.strip() == "True", child.stderr
    finally:
        store.close()


def test_purged_change_log_forces_full_reload(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    now = [1_000_000.0]
    reader = SQLiteCredentialStore(db, poll_interval=0)
    writer = SQLiteCredentialStore(db, poll_interval=0, clock=lambda: now[0])
    try:
        writer.alter([], [ups("a")])
        now[0] += 16 * 60
        writer.alter([], [ups("b")])  # purges a's log row
        rows = writer._db.execute("SELECT user FROM scram_changes").fetchall()
        assert rows == [("b",)]
        reader.refresh()
        assert reader.lookup("a", SCRAM_SHA_256) is not None
        assert reader.lookup("b", SCRAM_SHA_256) is not None
    finally:
        reader.close()
        writer.close()


def test_corrupt_row_is_skipped(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    SQLiteCredentialStore(db, poll_interval=0).close()
    insert_rows(db, "scram_credentials", [("x", "SCRAM-SHA-256", "garbage")])
    store = SQLiteCredentialStore(db, poll_interval=0)
    try:
        assert store.lookup("x", SCRAM_SHA_256) is None
        assert store.describe().results[0].error.name == "UNKNOWN_SERVER_ERROR"
    finally:
        store.close()


def test_unwritable_database_fails_loudly(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    store = SQLiteCredentialStore(db, poll_interval=0, busy_timeout=0.1)
    blocker = sqlite3.connect(db, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        [result] = store.alter([], [ups("alice")])
        assert result.error.name == "UNKNOWN_SERVER_ERROR"
        assert "not applied" in (result.message or "")
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
        store.close()
    assert os.path.exists(db)


def test_an_unusable_path_is_the_stores_unavailable_error() -> None:
    # The file is created owner-only before SQLite opens it; an OS error there
    # must read like SQLite's own failure (one line in the CLI, no traceback).
    from sasl_scram.store import CredentialStoreUnavailable

    with pytest.raises(CredentialStoreUnavailable):
        SQLiteCredentialStore("/proc/no-such-dir/creds.db")


def tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def test_the_secrets_table_comes_with_the_schema(tmp_path: Path) -> None:
    # New database: the table exists before anyone asks for the decoy secret.
    store = SQLiteCredentialStore(tmp_path / "new.db")
    store.close()
    assert "scram_secrets" in tables(tmp_path / "new.db")
    # A database from before the table (credentials only): added at open, once.
    old = tmp_path / "old.db"
    with sqlite3.connect(old) as db:
        db.execute(
            "CREATE TABLE scram_credentials (user TEXT NOT NULL, mechanism TEXT NOT NULL, "
            "credential TEXT NOT NULL, PRIMARY KEY (user, mechanism)) WITHOUT ROWID"
        )
    for _ in range(2):
        SQLiteCredentialStore(old).close()
        assert {"scram_credentials", "scram_secrets"} <= tables(old)


def test_an_existing_decoy_secret_is_read_without_the_write_lock(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    first = SQLiteCredentialStore(path)
    secret = first.decoy_secret()
    first.close()
    store = SQLiteCredentialStore(path, poll_interval=0, busy_timeout=0.2)
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        # Another process is writing (or the file is shared read-mostly): a login
        # that needs the decoy key must not wait for, or need, the write lock.
        writer.execute("BEGIN IMMEDIATE")
        assert store.decoy_secret() == secret
    finally:
        writer.execute("ROLLBACK")
        writer.close()
        store.close()
