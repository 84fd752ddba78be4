"""``kafka-scram credential``."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SCRAM_SHA_512
from sasl_scram import ScramCredential
from sasl_scram.cli._main import main

RFC_SALT = "W22ZaJ0SNY7soEsUEjb6gQ=="
RFC_CRED = (
    "salt=W22ZaJ0SNY7soEsUEjb6gQ==,stored_key=WG5d8oPm3OtcPnkdi4Uo7BkeZkBFzpcXkuLmtbsT4qY=,"
    "server_key=wfPLwcE6nTWhTAmQ7tl2KeoiWGPlZqQxSrmfPwDl2dU=,iterations=4096"
)


def run(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def credential(mechanism: str, password: str, *flags: str, stdin: str = "") -> tuple[int, str, str]:
    """``kafka-scram credential --mechanism <mechanism> --password <password> <flags>``."""
    return run("credential", "--mechanism", mechanism, "--password", password, *flags, stdin=stdin)


def test_rfc_vector() -> None:
    code, out, err = credential("SCRAM-SHA-256", "pencil", "--salt-base64", RFC_SALT)
    assert (code, out, err) == (0, RFC_CRED + "\n", "")


def test_password_from_stdin_and_fresh_salt() -> None:
    code, out, _ = credential("SCRAM-SHA-512", "-", "--iterations", "8192", stdin="s3cret\n")
    assert code == 0
    cred = ScramCredential.from_kafka_string(out.strip())
    assert cred.iterations == 8192 and cred.salt.isalnum()
    assert cred == ScramCredential.from_password(
        SCRAM_SHA_512, "s3cret", iterations=8192, salt=cred.salt
    )
    assert "s3cret" not in out


# The argv every usage-error case starts from, valid on its own.
SHA256_X = ["credential", "--mechanism", "SCRAM-SHA-256", "--password", "x"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["credential", "--password", "x"], "required: --mechanism"),
        (["credential", "--mechanism", "SCRAM-SHA-256"], "required: --password"),
        (["credential", "--mechanism", "SCRAM-SHA-1", "--password", "x"], "invalid choice"),
        ([*SHA256_X, "--iterations", "abc"], "invalid int"),
        ([*SHA256_X, "--iterations", "4095"], "between 4096 and 16384"),
        ([*SHA256_X, "--iterations", "16385"], "between 4096 and 16384"),
        ([*SHA256_X, "--salt-base64", "a b"], "not valid base64"),
        ([*SHA256_X, "--salt-base64", ""], "must not be empty"),
        (["credential", "--mechanism", "SCRAM-SHA-256", "--password", ""], "must not be empty"),
        ([*SHA256_X, "--bogus"], "unrecognized arguments"),
    ],
)
def test_usage_errors_are_one_line_exit_2(argv: list[str], message: str) -> None:
    code, out, err = run(*argv)
    assert code == 2 and out == ""
    lines = [line for line in err.splitlines() if "warning" not in line]
    assert len(lines) == 1 and message in lines[0], err


def test_empty_stdin_password() -> None:
    code, _, err = run("credential", "--mechanism", "SCRAM-SHA-256", "--password", "-", stdin="")
    assert code == 2 and "no password given: standard input ended" in err


@pytest.mark.slow
def test_console_script() -> None:
    exe = Path(sys.executable).parent / "kafka-scram"
    proc = subprocess.run(
        [
            str(exe),
            "credential",
            "--mechanism",
            "SCRAM-SHA-256",
            "--password",
            "-",
            "--salt-base64",
            RFC_SALT,
        ],
        input="pencil\n",
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout == RFC_CRED + "\n"
    proc = subprocess.run([str(exe), "credential"], capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert ScramCredential.from_kafka_string(RFC_CRED).matches_mechanism(SCRAM_SHA_256)
