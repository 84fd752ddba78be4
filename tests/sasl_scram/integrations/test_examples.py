"""Each example in examples/ runs against the endpoint, with a user and with a token."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import TokenEndpoint
from .conftest import client_properties
from .conftest import user_line
from .conftest import write_properties

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


# Item 7 of issue 26: the examples in the environment `make run` builds, which
# holds the package's own dependencies and kafka-python only (its [kafka-python]
# extra): the other client libraries are absent, as after `make run`.
NOT_IN_MAKE_RUN = ("aiokafka", "confluent_kafka", "puresasl", "pure_sasl", "pyspark", "py4j")
EXTRAS = {
    "aiokafka_client": "aiokafka",
    "pure_sasl_client": "pure-sasl",
    "confluent_kafka_client": "confluent",
    "spark_structured_streaming": "spark",
}


@pytest.fixture(scope="module")
def make_run_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A sys.path of this checkout and the shared site-packages minus the other clients."""
    site = Path(next(p for p in sys.path if p.endswith("site-packages")))
    links = tmp_path_factory.mktemp("make-run-site")
    for entry in site.iterdir():
        if not entry.name.lower().startswith(NOT_IN_MAKE_RUN) and not entry.name.endswith(".pth"):
            (links / entry.name).symlink_to(entry)
    return os.pathsep.join([str(ROOT), str(links)])


def run_in_make_run(example: str, path: str, *args: str) -> subprocess.CompletedProcess[str]:
    # -S: no site-packages but the ones on PYTHONPATH.
    return subprocess.run(
        [sys.executable, "-S", str(ROOT / "examples" / f"{example}.py"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": path},
        check=False,
    )


@pytest.mark.parametrize("example", sorted(EXTRAS))
def test_example_without_its_client_library_names_the_extra(
    make_run_path: str, tmp_path: Path, example: str
) -> None:
    props = write_properties(tmp_path / "c.properties", {"bootstrap.servers": "127.0.0.1:1"})
    args = (
        ["--client-properties", str(props), "--checkpoint", "c", "--output", "o", "--topic", "t"]
        if example == "spark_structured_streaming"
        else [str(props)]
    )
    error = _one_error(run_in_make_run(example, make_run_path, *args), example, 1)
    assert f".venv/bin/pip install -e '.[{EXTRAS[example]}]'" in error, error


@pytest.mark.parametrize("example", [*EXAMPLES, "spark_structured_streaming"])
def test_every_example_has_help(make_run_path: str, example: str) -> None:
    result = run_in_make_run(example, make_run_path, "--help")
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    assert "Usage: python examples/" in result.stdout or "usage: " in result.stdout
    assert "client.properties" in result.stdout


@pytest.mark.parametrize("example", EXAMPLES)
def test_a_missing_jaas_config_is_one_plain_line(tmp_path: Path, example: str) -> None:
    props = {"bootstrap.servers": "127.0.0.1:1", "security.protocol": "SASL_PLAINTEXT"}
    props["sasl.mechanism"] = "SCRAM-SHA-512"
    path = write_properties(tmp_path / "client.properties", props)
    error = _one_error(run(example, path), example, 1)
    assert "sasl.jaas.config" in error and ";;" not in error, error
    assert "check the user and password" not in error, error
