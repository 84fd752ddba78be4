"""What other local users can see of ``kafka-scram serve``'s state.

Every file holding stored or server keys is owner-only from its creation. The
processes run with umask 000, so that only the modes the code asks for count.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.sasl_scram.endpoint.serve_process import Peer
from tests.sasl_scram.endpoint.serve_process import Serve
from tests.sasl_scram.endpoint.serve_process import seed
from tests.support.cli_process import EXE
from tests.support.cli_process import child_env
from tests.support.endpoint_harness import ALICE


def mode(path: Path) -> str:
    return oct(path.stat().st_mode & 0o777)


def test_serve_creates_its_state_owner_only(tmp_path: Path) -> None:
    state = tmp_path / "state"
    db = state / "creds.db"
    props = {
        "scram.bootstrap.user": "admin",
        "scram.bootstrap.client.properties": str(state / "admin.properties"),
        "delegation.token.secret.key": "token-secret",
    }
    with Serve(tmp_path, db, props, umask=0) as serve:
        # The bootstrap files are written after the ready line: wait for them.
        serve.wait_for_log("Listening on")
        with Peer(serve.port) as peer:
            assert peer.login("nobody", "x")["error_code"] == 58
        for _ in range(500):
            if (state / "admin-kcat.conf").exists():
                break
            time.sleep(0.01)
        assert mode(state) == "0o700"
        for name in ("creds.db", "creds.db-wal", "creds.db-shm"):
            assert mode(state / name) == "0o600", name
        for name in ("admin.properties", "admin-kcat.conf"):
            assert mode(state / name) == "0o600", name


@pytest.mark.slow
@pytest.mark.parametrize("directory", ["existing", "missing"])
def test_configs_store_creates_an_owner_only_database(tmp_path: Path, directory: str) -> None:
    db = tmp_path / "new" / "creds.db"
    if directory == "existing":
        db.parent.mkdir()
    proc = subprocess.run(
        [
            EXE,
            "configs",
            "--store",
            f"sqlite:{db}",
            "--alter",
            "--add-config",
            "SCRAM-SHA-256=[password=bob-secret]",
            "--entity-type",
            "users",
            "--entity-name",
            "bob",
        ],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        preexec_fn=lambda: os.umask(0),  # only os.umask, before exec
    )
    assert proc.returncode == 0, proc.stderr
    if directory == "missing":
        assert mode(db.parent) == "0o700"
    assert mode(db) == "0o600"
    assert "bob-secret" not in proc.stdout + proc.stderr


@pytest.mark.slow
def test_a_store_readable_by_others_gets_a_warning_naming_it(tmp_path: Path) -> None:
    db = tmp_path / "data" / "creds.db"
    seed(db)
    db.chmod(0o644)
    with Serve(tmp_path, db) as serve:
        line = serve.wait_for_log(f"{db} is readable or writable by group or others")
        assert " WARNING " in line
        with Peer(serve.port) as peer:
            assert peer.login(*ALICE)["error_code"] == 0


@pytest.mark.slow
def test_a_shared_bootstrap_password_file_gets_a_warning(tmp_path: Path) -> None:
    db = tmp_path / "data" / "creds.db"
    props = {
        "scram.bootstrap.user": "admin",
        "scram.bootstrap.client.properties": str(tmp_path / "data" / "admin.properties"),
    }
    with Serve(tmp_path, db, props) as serve:
        kcat = tmp_path / "data" / "admin-kcat.conf"
        for _ in range(500):
            if kcat.exists():
                break
            time.sleep(0.01)
    kcat.chmod(0o644)
    with Serve(tmp_path, db, props) as serve:
        line = serve.wait_for_log(f"{kcat} is readable or writable by group or others")
        assert " WARNING " in line


def test_every_folder_serve_makes_is_owner_only_whatever_the_umask(tmp_path: Path) -> None:
    """Parents included: a folder others may write above the state folder lets them
    swap the state folder for one of theirs."""
    db = tmp_path / "a" / "b" / "state" / "creds.db"
    admin = tmp_path / "x" / "y" / "admin.properties"
    props = {"scram.bootstrap.user": "admin", "scram.bootstrap.client.properties": str(admin)}
    with Serve(tmp_path, db, props, umask=0o002) as serve:
        serve.wait_for_log("Listening on")
    for folder in ("a", "a/b", "a/b/state", "x", "x/y"):
        assert mode(tmp_path / folder) == "0o700", folder
    assert "chmod o-w" not in serve.log_text()


def test_a_state_folder_others_may_write_is_one_warning(tmp_path: Path) -> None:
    state = tmp_path / "shared"
    state.mkdir()
    state.chmod(0o777)
    with Serve(tmp_path, state / "creds.db", {"scram.workers": "2"}) as serve:
        serve.wait_for_log("2 workers serving")
    warnings = [line for line in serve.log_lines() if "chmod o-w" in line]
    assert len(warnings) == 1, serve.log_text()
    assert " WARNING " in warnings[0] and str(state) in warnings[0]
