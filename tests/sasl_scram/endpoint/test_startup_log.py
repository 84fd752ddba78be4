"""What ``kafka-scram serve`` says at start is true.

Tokens are reported enabled or disabled, not both; a ``server.properties`` that
holds a secret but that group or others may read gets a WARNING, as the SQLite
store and the bootstrap files do; the banner's commands run as printed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.cli_process import EXE
from tests.support.cli_process import child_env
from tests.support.serve_process import read_banner
from tests.support.serve_process import start_serve
from tests.support.serve_process import stop_serve


def _config(tmp_path: Path, extra: str = "", mode: int = 0o600) -> Path:
    from tests.support.zookeeper_server import free_port

    path = tmp_path / "server.properties"
    path.write_text(
        f"listeners=SASL_PLAINTEXT://127.0.0.1:{free_port()}\n"
        f"scram.credential.store.path={tmp_path}/state/creds.db\n"
        "super.users=User:admin\nscram.bootstrap.user=admin\n"
        f"scram.bootstrap.client.properties={tmp_path}/state/admin.properties\n" + extra
    )
    path.chmod(mode)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("secret", [False, True])
def test_tokens_are_enabled_or_disabled_not_both(tmp_path: Path, secret: bool) -> None:
    extra = "delegation.token.secret.key=startup-log-secret\n" if secret else ""
    log = stop_serve(start_serve(_config(tmp_path, extra), cwd=tmp_path))
    said = [line for line in log.splitlines() if "token" in line.lower()]
    state = "enabled" if secret else "disabled"
    assert any(f"Delegation tokens {state}" in line for line in said), log
    other = "disabled" if secret else "enabled"
    assert not [line for line in said if other in line], said
    assert "startup-log-secret" not in log


@pytest.mark.slow
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o600])
def test_a_shared_file_holding_a_secret_is_a_warning(tmp_path: Path, mode: int) -> None:
    config = _config(tmp_path, "delegation.token.secret.key=startup-log-secret\n", mode)
    log = stop_serve(start_serve(config, cwd=tmp_path))
    warnings = [line for line in log.splitlines() if " WARNING " in line and str(config) in line]
    if mode == 0o600:
        assert not warnings, log
        return
    assert len(warnings) == 1, log
    assert f"mode {mode:o}" in warnings[0] and "delegation.token.secret.key" in warnings[0]
    assert "chmod 600" in warnings[0] and "startup-log-secret" not in log


@pytest.mark.slow
def test_no_warning_for_a_shared_file_without_secrets(tmp_path: Path) -> None:
    log = stop_serve(start_serve(_config(tmp_path, mode=0o644), cwd=tmp_path))
    assert not [line for line in log.splitlines() if " WARNING " in line], log


@pytest.mark.slow
def test_the_banner_commands_run_as_printed(tmp_path: Path) -> None:
    """With kafka-scram not on PATH (as after `make run`), the printed command still runs."""
    env = child_env()
    bin_dir = str(Path(EXE).parent)
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != bin_dir)
    proc = start_serve(_config(tmp_path), cwd=tmp_path, env=env)
    try:
        banner = read_banner(proc)
        add_user = next(line for line in banner.splitlines() if "--entity-name alice" in line)
        done = subprocess.run(
            ["sh", "-c", add_user.strip()],
            cwd=tmp_path,
            env=env,
            input="alice-secret\n",
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, (add_user, done.stderr)
        assert "Completed updating config for user alice." in done.stdout
    finally:
        stop_serve(proc)


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]


def test_a_shared_file_whose_secret_is_overridden_is_still_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The file still holds a secret others may read, whatever --override sets."""
    from sasl_scram.cli._serve import load_properties
    from sasl_scram.endpoint import EndpointConfig

    config = _config(tmp_path, "delegation.token.secret.key=file-secret-" + "x" * 40 + "\n", 0o644)
    override = "delegation.token.secret.key=override-secret-" + "y" * 40
    with caplog.at_level("WARNING"):
        EndpointConfig.from_properties(load_properties(str(config), [override]))
    shared = [line for line in _warnings(caplog) if str(config) in line]
    assert len(shared) == 1, _warnings(caplog)
    assert "delegation.token.secret.key" in shared[0] and "chmod 600" in shared[0]
    assert "secret-" not in caplog.text


@pytest.mark.parametrize(
    ("value", "short"),
    [
        ("s" * 31, "the secret"),
        ("s" * 32, None),
        ("n" * 40 + ",old-short", "secret number 2"),
    ],
)
def test_a_token_secret_shorter_than_32_characters_is_a_warning(
    caplog: pytest.LogCaptureFixture, value: str, short: str | None
) -> None:
    from sasl_scram.endpoint import EndpointConfig

    given = {"scram.credential.store.path": ":memory:", "delegation.token.secret.key": value}
    with caplog.at_level("WARNING"):
        EndpointConfig.from_properties(given)
    said = [line for line in _warnings(caplog) if "shorter than 32 characters" in line]
    if short is None:
        assert not said, caplog.text
        return
    assert len(said) == 1, caplog.text
    assert "delegation.token.secret.key" in said[0] and short in said[0]
    # Neither the secret nor its length.
    for secret in value.split(","):
        assert secret not in caplog.text
        assert str(len(secret)) not in said[0]
