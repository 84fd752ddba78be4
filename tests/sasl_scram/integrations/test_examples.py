"""Each example in examples/ runs against the endpoint, with a user and with a token."""

from __future__ import annotations

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
