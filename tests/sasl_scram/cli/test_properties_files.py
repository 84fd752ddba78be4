"""Kafka's ``.properties`` files through the command line: read as Kafka reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli_process import kafka_scram
from tests.support.serve_process import start_serve
from tests.support.serve_process import stop_serve
from tests.support.zookeeper_server import free_port


@pytest.mark.slow
def test_serve_and_command_config_read_iso_8859_1_files(tmp_path: Path) -> None:
    """A Latin-1 byte in a comment, as Kafka's own configuration files may hold."""
    port = free_port()
    config = tmp_path / "server.properties"
    config.write_bytes(
        b"# Kafka-scram, caf\xe9 edition\n"
        + f"listeners=SASL_PLAINTEXT://127.0.0.1:{port}\n"
        f"scram.credential.store.path={tmp_path}/creds.db\n"
        "super.users=User:admin\nscram.bootstrap.user=admin\n"
        f"scram.bootstrap.client.properties={tmp_path}/admin.properties\n".encode()
    )
    proc = start_serve(config)
    try:
        assert proc.stdout is not None
        while "already exists" not in (line := proc.stdout.readline()) and "created" not in line:
            assert line, "serve ended early"
        command_config = tmp_path / "admin-latin1.properties"
        command_config.write_bytes(
            b"# r\xe9sum\xe9 of the admin's login\n" + (tmp_path / "admin.properties").read_bytes()
        )
        described = kafka_scram(
            "--debug",
            "configs",
            "--bootstrap-server",
            f"127.0.0.1:{port}",
            "--command-config",
            str(command_config),
            "--describe",
            "--entity-type",
            "users",
        )
        assert described.returncode == 0, described.stderr
        assert "user-principal 'admin' are" in described.stdout
        assert "UTF-8" not in described.stderr
    finally:
        stop_serve(proc)
    assert proc.returncode == 0


@pytest.mark.slow
def test_a_warning_of_a_command_is_labelled_as_one(tmp_path: Path) -> None:
    # UTF-8 in a --command-config file: Kafka would read it otherwise (one
    # character per byte). The warning carries the command and "warning:", as
    # the error line carries "error:".
    command_config = tmp_path / "utf8.properties"
    command_config.write_text("client.id=jos\u00e9\n", encoding="utf-8")
    result = kafka_scram(
        "configs",
        "--bootstrap-server",
        f"127.0.0.1:{free_port()}",
        "--command-config",
        str(command_config),
        "--describe",
        "--entity-type",
        "users",
    )
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"kafka-scram configs: warning: {command_config}:1: UTF-8 text"), (
        result.stderr
    )
    assert lines[1].startswith("kafka-scram configs: error: "), result.stderr
