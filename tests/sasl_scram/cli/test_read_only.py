"""A command that only reads never creates a store.

``configs --describe`` on a store that is not there is one error line; only a
command that writes (``configs --alter``, ``serve``) creates one. A directory
given as the store is one error line too.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from tests.support.cli_process import assert_one_error
from tests.support.cli_process import kafka_scram

DESCRIBE = ("--describe", "--entity-type", "users")


@pytest.mark.slow
def test_describe_on_a_missing_sqlite_store_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "dir" / "x.db"
    for who in ((), ("--entity-name", "alice")):
        error = _fails_in_one_line(f"sqlite:{missing}", *DESCRIBE, *who)
        assert f"no SQLite credential store at {missing}" in error, error
        assert not (tmp_path / "no").exists()
    # A command that writes creates it; then describing it works.
    add = ("--alter", "--user", "alice", "--add-config", "SCRAM-SHA-256=[password=alice-secret]")
    _succeeds(f"sqlite:{missing}", *add)
    assert "user-principal 'alice'" in _succeeds(f"sqlite:{missing}", *DESCRIBE)


@pytest.mark.slow
def test_a_directory_as_the_store_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    folder.mkdir(mode=0o755)
    alter = ("--alter", "--user", "a", "--add-config", "SCRAM-SHA-256=[password=x]")
    for args in (DESCRIBE, alter):
        error = _fails_in_one_line(f"sqlite:{folder}", *args)
        assert f"{folder} is a directory" in error
    assert list(folder.iterdir()) == []


def test_describe_on_a_missing_zookeeper_chroot_creates_nothing(zookeeper_hosts: str) -> None:
    result = kafka_scram(
        "configs", "--zookeeper", zookeeper_hosts, *DESCRIBE, "--zookeeper-timeout", "5"
    )
    error = assert_one_error(result, "configs", status=1)
    assert result.stderr.count("\n") == 1, result.stderr
    assert "/config/users does not exist" in error and "a read creates nothing" in error
    _assert_no_chroot(zookeeper_hosts)


def test_a_delete_only_alter_creates_no_zookeeper_chroot(zookeeper_hosts: str) -> None:
    # kafka-configs refuses to delete a credential that does not exist before it
    # writes anything: the chroot and /config stay absent, as after a read.
    result = kafka_scram(
        "configs", "--zookeeper", zookeeper_hosts, "--zookeeper-timeout", "5",
        "--alter", "--user", "alice", "--delete-config", "SCRAM-SHA-256",
    )  # fmt: skip
    error = assert_one_error(result, "configs", status=1)
    assert "Invalid config(s): SCRAM-SHA-256 (the user has no such credential" in error, error
    _assert_no_chroot(zookeeper_hosts)


def _succeeds(store: str, *args: str) -> str:
    """``configs --store STORE ARGS...`` exits 0; its output."""
    result = kafka_scram("configs", "--store", store, *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _fails_in_one_line(store: str, *args: str) -> str:
    """``configs --store STORE ARGS...`` fails (exit 1) with its error line and
    nothing else: no output, no WARNING (a chmod hint) before it."""
    result = kafka_scram("configs", "--store", store, *args)
    error = assert_one_error(result, "configs", status=1)
    assert result.stderr.count("\n") == 1 and not result.stdout, result.stderr
    return error


def _assert_no_chroot(zookeeper_hosts: str) -> None:
    """The chroot of ``host:port/chroot`` does not exist: nothing was created."""
    hosts, chroot = zookeeper_hosts.split("/", 1)
    client = KazooClient(hosts=hosts)
    client.start(timeout=10)
    try:
        assert client.exists(f"/{chroot}") is None
    finally:
        client.stop()
        client.close()


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file in ``folder`` with its bytes: a read must leave it exactly so."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _foreign_database(path: Path) -> None:
    """A SQLite file that is not ours: a database without the store's tables."""
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE notes (text TEXT)")


@pytest.mark.slow
def test_describe_on_a_file_without_a_store_writes_nothing(tmp_path: Path) -> None:
    empty, foreign = tmp_path / "empty.db", tmp_path / "foreign.db"
    empty.touch(mode=0o644)
    _foreign_database(foreign)
    os.chmod(foreign, 0o644)
    before = _snapshot(tmp_path)
    for path in (empty, foreign):
        for who in ((), ("--entity-name", "alice")):
            error = _fails_in_one_line(f"sqlite:{path}", *DESCRIBE, *who)
            assert f"no SQLite credential store at {path}" in error, error
            assert "--alter --add-config" in error, error
            assert _snapshot(tmp_path) == before


@pytest.mark.slow
def test_a_file_that_is_not_a_store_is_one_line(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(bytes(range(256)) * 16)
    os.chmod(garbage, 0o644)
    before = _snapshot(tmp_path)
    add = ("--alter", "--user", "a", "--add-config", "SCRAM-SHA-256=[password=x]")
    delete = ("--alter", "--user", "a", "--delete-config", "SCRAM-SHA-256")
    for args in (DESCRIBE, add, delete):
        for path, why in ((garbage, "file is not a database"), ("/dev/null", "not a regular file")):
            error = _fails_in_one_line(f"sqlite:{path}", *args)
            assert f"{path} is not a SQLite credential store: {why}" in error, error
    assert _snapshot(tmp_path) == before


@pytest.mark.slow
def test_a_delete_only_alter_creates_no_store(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "x.db"
    empty = tmp_path / "empty.db"
    empty.touch(mode=0o600)
    delete = ("--alter", "--user", "alice", "--delete-config", "SCRAM-SHA-256")
    for path in (missing, empty):
        error = _fails_in_one_line(f"sqlite:{path}", *delete)
        assert error.endswith(
            "ResourceNotFoundException: Attempt to delete a user credential that does not exist"
        ), error
    assert not (tmp_path / "no").exists()
    assert _snapshot(tmp_path) == {"empty.db": b""}
    # An alter that adds creates the store; then a deletion from it works.
    both = "SCRAM-SHA-256=[password=alice-secret],SCRAM-SHA-512=[password=x]"
    _succeeds(f"sqlite:{missing}", "--alter", "--user", "alice", "--add-config", both)
    deleted = _succeeds(f"sqlite:{missing}", *delete)
    assert deleted == "Completed updating config for user alice.\n"
    assert _succeeds(f"sqlite:{missing}", *DESCRIBE) == (
        "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-512=iterations=4096\n"
    )


@pytest.mark.slow
def test_describe_of_a_store_leaves_its_folder_as_it_was(tmp_path: Path) -> None:
    store = tmp_path / "c.db"
    added = kafka_scram(
        "configs", "--store", f"sqlite:{store}", "--alter", "--user", "alice",
        "--add-config", "SCRAM-SHA-256=[password=alice-secret]",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    before = _snapshot(tmp_path)
    described = kafka_scram("configs", "--store", f"sqlite:{store}", *DESCRIBE)
    assert described.returncode == 0 and "user-principal 'alice'" in described.stdout
    assert not described.stderr
    assert _snapshot(tmp_path) == before
