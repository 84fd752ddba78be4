"""Each example in examples/ runs against the endpoint, with a user and with a token."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools.fetch_spark_connector import connector_jar
from tools.fetch_spark_connector import ivy_dir

from .conftest import TokenEndpoint
from .conftest import client_properties
from .conftest import user_line
from .conftest import write_properties

# Each case runs an example script in a child Python (client libraries imported).
pytestmark = pytest.mark.slow

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
    # An example says where it connects first (_example.py), then the one error line.
    lines = [
        line
        for line in result.stderr.splitlines()
        if line.strip() and not line.startswith("connecting to ")
    ]
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
    # The refusal is said once: not the error's name again and again, nor the
    # client's log line that repeats it.
    name = error.split(": error: ", 1)[1].split(" ", 1)[0].rstrip(":")
    assert error.count(name) == 1, error
    assert error.count("Authentication failed") <= 1, error


@pytest.mark.parametrize("example", EXAMPLES)
@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_example_with_an_unreadable_file_is_a_failure(
    tmp_path: Path, example: str, kind: str
) -> None:
    path = tmp_path / "nonexistent" if kind == "missing" else tmp_path
    error = _one_error(run(example, path), example, 1)
    assert f"{path} is not a file; give a client.properties file" in error, error


# The client libraries take a host without a port as port 9092 (and fail to
# connect there); pure_sasl_client opens the socket itself, so it checks the port.
@pytest.mark.parametrize(
    ("example", "servers"),
    [*((example, "") for example in EXAMPLES), ("pure_sasl_client", "127.0.0.1")],
)
def test_a_bad_bootstrap_servers_names_the_key(tmp_path: Path, example: str, servers: str) -> None:
    props = {"bootstrap.servers": servers, "security.protocol": "SASL_PLAINTEXT"}
    props.update({"sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": user_line()})
    path = write_properties(tmp_path / "client.properties", props)
    error = _one_error(run(example, path), example, 1)
    assert error.split(": error: ", 1)[1].startswith(f"{path}: bootstrap.servers: "), error
    assert ("'127.0.0.1' is not host:port" if servers else "required, e.g.") in error, error


# The examples in the environment `make run` builds, which
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


def test_quickstart_help_prints_usage_and_runs_nothing(make_run_path: str) -> None:
    result = run_in_make_run("quickstart", make_run_path, "--help")
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    assert "usage: " in result.stdout
    assert "stored credential" not in result.stdout, result.stdout


@pytest.mark.parametrize("args", [["--bogus"], ["extra"]])
def test_quickstart_with_an_unknown_argument_is_a_usage_error(
    make_run_path: str, args: list[str]
) -> None:
    result = run_in_make_run("quickstart", make_run_path, *args)
    assert "unrecognized arguments" in _one_error(result, "quickstart", 2)
    assert result.stdout == ""


# The Spark example's errors below all come before Spark would start. JAVA_HOME
# names no JDK, so a run that got as far as Spark fails at once with Spark's
# error (instead of starting a JVM and fetching the connector), and the test fails.
SPARK = "spark_structured_streaming"
JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";'


def run_spark(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    query = ["--topic", "t", "--output", str(tmp_path / "out"), "--checkpoint", str(tmp_path / "c")]
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / f"{SPARK}.py"), *query, *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "JAVA_HOME": str(tmp_path / "no-jdk")},
        check=False,
    )


def spark_properties(tmp_path: Path, **props: str) -> str:
    base = {"bootstrap.servers": "127.0.0.1:1", "sasl.mechanism": "SCRAM-SHA-512"}
    base["security.protocol"] = "SASL_PLAINTEXT"
    return str(write_properties(tmp_path / "client.properties", {**base, **props}))


def test_spark_example_reads_the_client_properties_before_spark(tmp_path: Path) -> None:
    error = _one_error(
        run_spark(tmp_path, "--client-properties", spark_properties(tmp_path)), SPARK, 1
    )
    assert "sasl.jaas.config: required" in error, error


def test_spark_example_at_a_serve_without_a_front_door_says_so(
    token_endpoint: TokenEndpoint, tmp_path: Path
) -> None:
    """A bare serve logs the user in and creates tokens, but holds no topics: the
    example says so before Spark starts (which, without a JDK, would fail)."""
    props = client_properties(token_endpoint.ep, user_line(), "SCRAM-SHA-512")
    path = write_properties(tmp_path / "client.properties", props)
    error = _one_error(run_spark(tmp_path, "--client-properties", str(path)), SPARK, 1)
    assert f"{token_endpoint.bootstrap} is a kafka-scram serve without a front door" in error
    assert "holds no topics" in error and "upstream.bootstrap.servers" in error, error
    assert "docs/front-door.md" in error and "password" not in error, error


def test_spark_example_needs_bootstrap_servers_before_spark(tmp_path: Path) -> None:
    path = spark_properties(tmp_path, **{"sasl.jaas.config": JAAS, "bootstrap.servers": ""})
    error = _one_error(run_spark(tmp_path, "--client-properties", path), SPARK, 1)
    assert "bootstrap.servers" in error and '"p"' not in error, error


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], "--client-properties"),
        (["--client-properties", "x", "--bogus"], "--bogus"),
        (["--client-properties", "x", "--trigger-ms", "soon"], "--trigger-ms"),
        (["--client-properties", "x", "--renew-ratio", "2"], "--renew-ratio"),
        (["--client-properties", "x", "--mechanism", "PLAIN"], "--mechanism"),
    ],
)
def test_spark_example_usage_errors_are_one_line(
    tmp_path: Path, args: list[str], expected: str
) -> None:
    args = [
        spark_properties(tmp_path, **{"sasl.jaas.config": JAAS}) if a == "x" else a for a in args
    ]
    assert expected in _one_error(run_spark(tmp_path, *args), SPARK, 2)


# A file that cannot be read is a failure (exit 1), as kafka-scram's
# `--command-config /missing` is; only a missing or malformed argument is a usage error.
@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_spark_example_with_an_unreadable_file_is_a_failure(tmp_path: Path, kind: str) -> None:
    path = str(tmp_path / "nonexistent") if kind == "missing" else str(tmp_path)
    error = _one_error(run_spark(tmp_path, "--client-properties", path), SPARK, 1)
    assert f"{path} is not a file" in error, error


def test_spark_example_debug_adds_the_traceback(tmp_path: Path) -> None:
    result = run_spark(tmp_path, "--debug", "--client-properties", spark_properties(tmp_path))
    assert result.returncode == 1, result.stderr
    assert "Traceback" in result.stderr and "ClientConfigError" in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"{SPARK}.py: error: ") and "sasl.jaas.config" in last, last


def test_spark_example_without_a_jdk_is_one_line(tmp_path: Path) -> None:
    path = spark_properties(tmp_path, **{"sasl.jaas.config": JAAS})
    result = run_spark(tmp_path, "--client-properties", path, "--ivy", str(tmp_path / "ivy"))
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    # Lines before it are spark-submit's own, about the missing java.
    ours = [line for line in result.stderr.splitlines() if line.startswith(f"{SPARK}.py: ")]
    assert ours == [result.stderr.strip().splitlines()[-1]], result.stderr
    assert "JAVA_HOME" in ours[0], ours


def test_example_interrupted_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = importlib.util.spec_from_file_location("_example", ROOT / "examples" / "_example.py")
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)

    def interrupted(path: str) -> int:
        raise KeyboardInterrupt

    path = write_properties(tmp_path / "c.properties", {"bootstrap.servers": "127.0.0.1:1"})
    try:
        status = example.run_example(interrupted, ["demo.py", str(path)])
    except KeyboardInterrupt:  # it would stop the whole test session
        pytest.fail("Ctrl-C went through run_example")
    assert status == 130
    assert capsys.readouterr().err == "connecting to 127.0.0.1:1 ...\ndemo.py: error: interrupted\n"


def _spark_cannot_start() -> str:
    """Why a real Spark session cannot start here without the network, or ''."""
    if importlib.util.find_spec("pyspark") is None:
        return "pyspark is not installed"
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "no JDK"
    import pyspark

    if not connector_jar(pyspark.__version__).is_file():
        return "Spark's Kafka connector is not cached (make spark)"
    return ""


@pytest.mark.jvm
def test_spark_example_failing_after_spark_started_ends_with_its_error(tmp_path: Path) -> None:
    """Spark starts (about 10 s), then the login fails: the error is the last line."""
    reason = _spark_cannot_start()
    if reason:
        pytest.skip(reason)
    path = spark_properties(tmp_path, **{"sasl.jaas.config": JAAS})
    args = ["--topic", "t", "--output", str(tmp_path / "out"), "--checkpoint", str(tmp_path / "c")]
    args += ["--client-properties", path, "--ivy", str(ivy_dir())]
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / f"{SPARK}.py"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"},
        check=False,
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    ours = [line for line in lines if line.startswith(f"{SPARK}.py: ")]
    assert ours == lines[-1:] and "127.0.0.1:1" in ours[0], result.stderr
    # Neither py4j's INFO line at exit nor Spark's INFO lines (pyspark's level is WARN).
    assert "py4j" not in result.stderr and " INFO " not in result.stderr, result.stderr
