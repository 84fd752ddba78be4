"""Opening a SQLite store: a writer creates it, ``create=False`` creates nothing.

``create=False`` is how a command that only reads (or only deletes) opens a
store: a missing file, or one without the store's tables, is :class:`NoStore`
(the cause of the store's unavailable error), and the folder is left exactly
as it was. A file that is not a database is named so, with no permission
warning about "stored and server keys" it does not hold.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram.store import CredentialStoreUnavailable
from sasl_scram.store import ScramDeletion
from sasl_scram.store import SQLiteCredentialStore
from sasl_scram.store.sqlite import NoStore
from tests.sasl_scram.store.test_contract import ups
from tokenauth import TokenStoreUnavailable
from tokenauth.stores._sqlite import SQLiteTokenStore


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def tables(path: Path) -> set[str]:
    db = sqlite3.connect(path)
    try:
        return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        db.close()


def test_create_false_on_no_store_creates_nothing(tmp_path: Path) -> None:
    (tmp_path / "empty.db").touch(mode=0o644)
    foreign = tmp_path / "foreign.db"
    db = sqlite3.connect(foreign)
    db.execute("CREATE TABLE notes (text TEXT)")
    db.close()
    before = snapshot(tmp_path)
    for name in ("no/such.db", "empty.db", "foreign.db"):
        path = tmp_path / name
        with pytest.raises(CredentialStoreUnavailable) as caught:
            SQLiteCredentialStore(path, poll_interval=0, create=False)
        assert isinstance(caught.value.__cause__, NoStore), caught.value
        assert str(caught.value).startswith(f"no SQLite credential store at {path}: ")
        assert snapshot(tmp_path) == before
    with pytest.raises(TokenStoreUnavailable) as token_error:
        SQLiteTokenStore(tmp_path / "empty.db", poll_interval=0, create=False)
    assert isinstance(token_error.value.__cause__, NoStore)
    assert "no SQLite token store at" in str(token_error.value)
    assert snapshot(tmp_path) == before


def test_create_false_reads_and_deletes_without_adding_tables(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    writer = SQLiteCredentialStore(path, poll_interval=0)
    assert writer.alter([], [ups("alice"), ups("bob")])[0].error.name == "NONE"
    writer.close()
    # A store from before the secrets table: a reader must not add it.
    db = sqlite3.connect(path)
    db.execute("DROP TABLE scram_secrets")
    db.close()
    store = SQLiteCredentialStore(path, poll_interval=0, create=False)
    try:
        assert {d.user for d in store.describe().results} == {"alice", "bob"}
        [deleted] = store.alter([ScramDeletion("bob", SCRAM_SHA_256.type_byte)], [])
        assert deleted.error.name == "NONE", deleted
        assert [d.user for d in store.describe().results] == ["alice"]
    finally:
        store.close()
    assert "scram_secrets" not in tables(path)


@pytest.mark.parametrize("create", [True, False])
def test_a_file_that_is_not_a_database_is_named_so_without_a_warning(
    tmp_path: Path, create: bool, caplog: pytest.LogCaptureFixture
) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(bytes(range(256)) * 16)
    os.chmod(garbage, 0o644)
    before = snapshot(tmp_path)
    caplog.set_level(logging.WARNING)
    for path, why in (
        (str(garbage), "file is not a database"),
        ("/dev/null", "not a regular file"),
    ):
        with pytest.raises(CredentialStoreUnavailable) as caught:
            SQLiteCredentialStore(path, poll_interval=0, create=create)
        assert str(caught.value) == f"{path} is not a SQLite credential store: {why}"
    assert not caplog.records, caplog.text
    assert snapshot(tmp_path) == before


def test_a_writer_creates_the_schema_in_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.touch(mode=0o600)
    SQLiteCredentialStore(path, poll_interval=0).close()
    assert {"scram_credentials", "scram_changes", "scram_secrets"} <= tables(path)


@pytest.mark.parametrize("create", [True, False])
def test_a_store_others_may_read_still_gets_the_warning(
    tmp_path: Path, create: bool, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "c.db"
    SQLiteCredentialStore(path, poll_interval=0).close()
    os.chmod(path, 0o644)
    caplog.set_level(logging.WARNING)
    SQLiteCredentialStore(path, poll_interval=0, create=create).close()
    [record] = caplog.records
    assert "holds stored and server keys; run chmod 600" in record.getMessage()
