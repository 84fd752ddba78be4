"""Item 3 of issue 26: a command that only reads never creates a store.

``configs --describe`` on a store that is not there is one error line; only a
command that writes (``configs --alter``, ``serve``) creates one. A directory
given as the store is one error line too.
"""

from __future__ import annotations

from pathlib import Path

from kazoo.client import KazooClient

from tests.cli_process import assert_one_error
from tests.cli_process import kafka_scram

DESCRIBE = ("--describe", "--entity-type", "users")


def test_describe_on_a_missing_sqlite_store_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "dir" / "x.db"
    for who in ((), ("--entity-name", "alice")):
        result = kafka_scram("configs", "--store", f"sqlite:{missing}", *DESCRIBE, *who)
        error = assert_one_error(result, "configs", status=1)
        assert f"no SQLite credential store at {missing}" in error, error
        assert result.stderr.count("\n") == 1 and not result.stdout
        assert not (tmp_path / "no").exists()
    # A command that writes creates it; then describing it works.
    added = kafka_scram(
        "configs", "--store", f"sqlite:{missing}", "--alter", "--user", "alice",
        "--add-config", "SCRAM-SHA-256=[password=alice-secret]",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    described = kafka_scram("configs", "--store", f"sqlite:{missing}", *DESCRIBE)
    assert described.returncode == 0 and "user-principal 'alice'" in described.stdout


def test_a_directory_as_the_store_is_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    folder.mkdir(mode=0o755)
    alter = ("--alter", "--user", "a", "--add-config", "SCRAM-SHA-256=[password=x]")
    for args in (DESCRIBE, alter):
        result = kafka_scram("configs", "--store", f"sqlite:{folder}", *args)
        error = assert_one_error(result, "configs", status=1)
        assert result.stderr.count("\n") == 1, result.stderr
        assert f"{folder} is a directory" in error and "chmod" not in result.stderr
    assert list(folder.iterdir()) == []


def test_describe_on_a_missing_zookeeper_chroot_creates_nothing(zookeeper_hosts: str) -> None:
    result = kafka_scram(
        "configs", "--zookeeper", zookeeper_hosts, *DESCRIBE, "--zookeeper-timeout", "5"
    )
    error = assert_one_error(result, "configs", status=1)
    assert result.stderr.count("\n") == 1, result.stderr
    assert "/config/users does not exist" in error and "a read creates nothing" in error
    hosts, chroot = zookeeper_hosts.split("/", 1)
    client = KazooClient(hosts=hosts)
    client.start(timeout=10)
    try:
        assert client.exists(f"/{chroot}") is None
    finally:
        client.stop()
        client.close()
