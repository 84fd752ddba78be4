"""Each example in examples/ runs against the endpoint, with a user and with a token."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import TokenEndpoint, client_properties, user_line, write_properties

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ["kafka_python_client", "aiokafka_client", "pure_sasl_client", "confluent_kafka_client"]


def run(example: str, properties: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / f"{example}.py"), str(properties)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        check=False,
    )


@pytest.mark.parametrize("example", EXAMPLES)
@pytest.mark.parametrize("login", ["user", "token"])
def test_example(token_endpoint: TokenEndpoint, tmp_path: Path, example: str, login: str) -> None:
    line = user_line() if login == "user" else token_endpoint.token_line()
    path = write_properties(
        tmp_path / "client.properties", client_properties(token_endpoint.ep, line)
    )
    result = run(example, path)
    secret = line.split('password="')[1].split('"')[0]
    assert secret not in result.stdout + result.stderr
    if example == "confluent_kafka_client" and login == "token":
        assert result.returncode == 1
        assert "librdkafka" in result.stderr and "tokenauth" in result.stderr
        return
    assert result.returncode == 0, result.stderr
    if example == "pure_sasl_client":
        kind = "delegation token" if login == "token" else "user"
        assert f"authenticated ({kind}) via SCRAM-SHA-256" in result.stdout
    else:
        assert "topics: []" in result.stdout


def _one_error(result: subprocess.CompletedProcess[str], example: str, status: int) -> str:
    assert result.returncode == status, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and "Unclosed" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"{example}.py: error: "), result.stderr
    return lines[0]


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_without_arguments_is_a_usage_error(example: str) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / f"{example}.py")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != "KAFKA_CLIENT_PROPERTIES"},
        check=False,
    )
    assert "give one client.properties file" in _one_error(result, example, 2)


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_with_a_wrong_password_is_one_line(
    token_endpoint: TokenEndpoint, tmp_path: Path, example: str
) -> None:
    line = user_line(("alice", "not-the-password"))
    path = write_properties(
        tmp_path / "client.properties", client_properties(token_endpoint.ep, line)
    )
    error = _one_error(run(example, path), example, 1)
    assert "sasl.jaas.config" in error and "not-the-password" not in error
