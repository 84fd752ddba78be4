"""A password prompt left with Ctrl-D or Ctrl-C, on a real terminal.

The command runs on a pseudo-terminal (its controlling terminal, as in a
shell), so ``getpass`` prompts on it and the keys reach it as a user types them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli_process import EXE
from tests.support.cli_process import pty_run

CREDENTIAL = [EXE, "credential", "--mechanism", "SCRAM-SHA-256", "--password", "-"]
CONFIGS = [
    EXE, "configs", "--store", "sqlite:{tmp}/creds.db", "--alter", "--user", "alice",
    "--add-config", "SCRAM-SHA-512=[password=-]",
]  # fmt: skip


def _lines(output: str) -> list[str]:
    return [line for line in output.replace("\r\n", "\n").split("\n") if line.strip()]


@pytest.mark.slow
@pytest.mark.parametrize(("argv", "command"), [(CREDENTIAL, "credential"), (CONFIGS, "configs")])
@pytest.mark.parametrize(
    ("key", "status", "message"), [("\x04", 2, "no password given"), ("\x03", 130, "interrupted")]
)
def test_leaving_the_prompt_is_one_clean_line(
    tmp_path: Path, argv: list[str], command: str, key: str, status: int, message: str
) -> None:
    code, output = pty_run([a.replace("{tmp}", str(tmp_path)) for a in argv], [key])
    lines = _lines(output)
    # The prompt keeps its own line; the error starts a line of its own.
    assert lines[-1] == f"kafka-scram {command}: error: {message}", output
    assert lines[-2].rstrip().endswith("Password:") or lines[-2].rstrip().endswith(
        "Password for alice:"
    ), output
    assert "EOFError" not in output and "Traceback" not in output
    assert code == status, output


@pytest.mark.slow
def test_ctrl_d_at_the_confirmation_is_also_no_password() -> None:
    code, output = pty_run(CREDENTIAL, ["pencil-secret", "\x04"])
    lines = _lines(output)
    assert lines[-1] == "kafka-scram credential: error: no password given", output
    assert "Confirm password:" in lines[-2] and code == 2
