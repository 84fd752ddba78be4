"""The ACL table in the SQLite store's file: its schema added to existing files, the
rows, durability, and processes on one file following each other."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram.authz import AclBindingFilter
from sasl_scram.kafka import ErrorCode
from sasl_scram.store import AclStoreUnavailable
from sasl_scram.store import NoStore
from sasl_scram.store import SQLiteAclStore
from sasl_scram.store import SQLiteCredentialStore
from tests.sasl_scram.authz.helpers import PREFIXED
from tests.sasl_scram.authz.helpers import Op
from tests.sasl_scram.authz.helpers import allow
from tests.sasl_scram.authz.helpers import deny
from tests.sasl_scram.store.sqlite.test_store import run_child
from tests.sasl_scram.store.test_contract import ok
from tests.sasl_scram.store.test_contract import ups
from tests.support.polling import wait_until
from tests.support.sqlite_rows import insert_rows

ACL_TABLES = {"kafka_acls", "kafka_acl_changes"}


def tables(path: Path) -> set[str]:
    db = sqlite3.connect(path)
    try:
        return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        db.close()


def rows(path: Path, query: str) -> list[tuple[object, ...]]:
    db = sqlite3.connect(path)
    try:
        return db.execute(query).fetchall()
    finally:
        db.close()


def old_credential_file(path: Path) -> None:
    """A credential store from before the ACL table, holding one user."""
    store = SQLiteCredentialStore(path, poll_interval=0)
    assert store.alter([], [ups("alice")]) == [ok("alice")]
    store.close()
    db = sqlite3.connect(path)
    db.execute("DROP TABLE kafka_acls")
    db.execute("DROP TABLE kafka_acl_changes")
    db.close()
    assert not tables(path) & ACL_TABLES


def test_the_credential_store_adds_the_acl_tables_to_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "creds.db"
    old_credential_file(path)
    for _ in range(2):  # idempotent, as the schema's other tables
        store = SQLiteCredentialStore(path, poll_interval=0)
        assert store.lookup("alice", SCRAM_SHA_256) is not None
        store.close()
        assert tables(path) >= ACL_TABLES
    acls = SQLiteAclStore(path, poll_interval=0, create=False)
    try:
        assert len(acls.acls()) == 0
    finally:
        acls.close()


def test_a_reader_on_a_file_without_the_acl_table_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "creds.db"
    old_credential_file(path)
    before = path.read_bytes()
    with pytest.raises(AclStoreUnavailable) as caught:
        SQLiteAclStore(path, poll_interval=0, create=False)
    assert isinstance(caught.value.__cause__, NoStore)
    assert str(caught.value).startswith(f"no SQLite ACL store at {path}: the file has no ")
    assert path.read_bytes() == before


def test_one_row_per_acl_in_kafkas_names_and_a_change_row_per_update(tmp_path: Path) -> None:
    path = tmp_path / "creds.db"
    store = SQLiteAclStore(path, poll_interval=0)
    try:
        store.create_acls(
            [allow("orders", Op.READ), deny("ord", Op.ALL, "User:*", pattern=PREFIXED)]
        )
        store.create_acls([allow("orders", Op.READ)])  # no change: no change row
    finally:
        store.close()
    assert sorted(rows(path, "SELECT * FROM kafka_acls")) == [
        ("TOPIC", "LITERAL", "orders", "User:alice", "*", "READ", "ALLOW"),
        ("TOPIC", "PREFIXED", "ord", "User:*", "*", "ALL", "DENY"),
    ]
    assert rows(path, "SELECT seq, resource FROM kafka_acl_changes") == [
        (1, "TOPIC:LITERAL:orders"),
        (2, "TOPIC:PREFIXED:ord"),
    ]


def test_a_created_acl_survives_a_crash_right_after_the_call(tmp_path: Path) -> None:
    path = tmp_path / "creds.db"
    child = run_child(
        f"""
        import os
        from sasl_scram.authz import *
        from sasl_scram.store import SQLiteAclStore
        store = SQLiteAclStore({str(path)!r})
        entry = AccessControlEntry("User:alice", "*", AclOperation.READ, AclPermissionType.ALLOW)
        pattern = ResourcePattern(ResourceType.TOPIC, "orders", PatternType.LITERAL)
        binding = AclBinding(pattern, entry)
        print(store.create_acls([binding])[0].error.name, flush=True)
        os.kill(os.getpid(), 9)  # no close, no checkpoint
        """
    )
    assert child.stdout.strip() == "NONE", child.stderr
    assert child.returncode == -9
    store = SQLiteAclStore(path, poll_interval=0, create=False)
    try:
        assert store.describe_acls() == (allow("orders", Op.READ),)
    finally:
        store.close()


def test_two_stores_on_one_file_follow_each_other(tmp_path: Path) -> None:
    path = tmp_path / "creds.db"
    first = SQLiteAclStore(path, poll_interval=0.02)
    second = SQLiteAclStore(path, poll_interval=0.02)
    heard: list[str] = []
    second.add_listener(heard.append)
    try:
        read = allow("orders", Op.READ)
        first.create_acls([read])
        assert wait_until(lambda: second.acls().bindings == {read}, 1.0) is not None
        assert heard == ["TOPIC:LITERAL:orders"]
        second.delete_acls([AclBindingFilter.ANY])
        assert wait_until(lambda: len(first.acls()) == 0, 1.0) is not None
    finally:
        first.close()
        second.close()


def test_a_delete_reaches_acls_another_process_wrote_since_the_last_poll(tmp_path: Path) -> None:
    path = tmp_path / "creds.db"
    writer = SQLiteAclStore(path, poll_interval=0)
    stale = SQLiteAclStore(path, poll_interval=0)  # never polls unless told
    try:
        read = allow("orders", Op.READ)
        writer.create_acls([read])
        assert len(stale.acls()) == 0
        # A MATCH or ANY filter is applied to every pattern in the file, not the copy.
        [result] = stale.delete_acls([AclBindingFilter.ANY])
        assert result.deleted == (read,)
        writer.refresh()
        assert len(writer.acls()) == 0
    finally:
        writer.close()
        stale.close()


def test_credentials_and_acls_share_the_file_without_crossing(tmp_path: Path) -> None:
    path = tmp_path / "creds.db"
    creds = SQLiteCredentialStore(path, poll_interval=0.02)
    acls = SQLiteAclStore(path, poll_interval=0.02)
    heard: list[str] = []
    acls.add_listener(heard.append)
    try:
        assert creds.alter([], [ups("alice")]) == [ok("alice")]
        acls.create_acls([allow("orders", Op.READ)])
        other = SQLiteCredentialStore(path, poll_interval=0)
        assert other.lookup("alice", SCRAM_SHA_256) is not None
        other.close()
        assert heard == ["TOPIC:LITERAL:orders"]
    finally:
        creds.close()
        acls.close()


def test_a_row_no_authorizer_holds_is_skipped_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "creds.db"
    SQLiteAclStore(path, poll_interval=0).close()
    insert_rows(
        path,
        "kafka_acls",
        [
            ("TOPIC", "LITERAL", "t", "User:a", "*", "FLY", "ALLOW"),
            ("TOPIC", "LITERAL", "t", "nobody", "*", "READ", "ALLOW"),
            ("Topic", "LITERAL", "t", "User:a", "*", "READ", "ALLOW"),
            ("TOPIC", "LITERAL", "t", "User:a", "*", "READ", "ALLOW"),
        ],
    )
    caplog.set_level(logging.WARNING, "sasl_scram.store.sqlite")
    store = SQLiteAclStore(path, poll_interval=0)
    try:
        assert store.describe_acls() == (allow("t", Op.READ, "User:a"),)
    finally:
        store.close()
    assert len([r for r in caplog.records if "skipping an ACL row" in r.message]) == 3


def test_a_locked_file_fails_the_write_loudly(tmp_path: Path) -> None:
    path = tmp_path / "creds.db"
    store = SQLiteAclStore(path, poll_interval=0, busy_timeout=0.1)
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        [result] = store.create_acls([allow("orders", Op.READ)])
        assert result.error == ErrorCode.UNKNOWN_SERVER_ERROR
        assert (result.message or "").startswith("ACL store error; the change was not applied")
        assert len(store.acls()) == 0
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
        store.close()
