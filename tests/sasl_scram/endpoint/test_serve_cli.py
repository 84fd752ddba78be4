"""``kafka-scram serve`` as a process: configuration, bootstrap user, SIGTERM."""

from __future__ import annotations

import io
import signal
import subprocess
from pathlib import Path

import pytest

from sasl_scram._errors import ScramConfigError
from sasl_scram.cli._main import main
from sasl_scram.endpoint import EndpointConfig
from tests.support.cli_process import EXE
from tests.support.cli_process import child_env
from tests.support.zookeeper_server import free_port


def write_config(tmp_path: Path, port: int, extra: str = "") -> Path:
    path = tmp_path / "server.properties"
    path.write_text(
        f"listeners=SASL_PLAINTEXT://127.0.0.1:{port}\n"
        f"scram.credential.store.path={tmp_path}/data/creds.db\n"
        "super.users=User:admin\n"
        "scram.bootstrap.user=admin\n"
        f"scram.bootstrap.client.properties={tmp_path}/data/admin.properties\n" + extra
    )
    return path


def serve_until_exit(config: Path) -> subprocess.CompletedProcess[str]:
    """``kafka-scram serve`` that is expected to stop by itself (a bad start)."""
    return subprocess.run(
        [EXE, "serve", "--config", str(config)],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def start(config: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [EXE, "serve", "--config", str(config)],
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "kafka-scram endpoint ready" in line, proc.stderr.read() if proc.stderr else ""
    return proc


def describe_users(port: int, client_properties: Path) -> tuple[int, str]:
    """``kafka-scram configs --bootstrap-server ... --describe --entity-type users``."""
    out = io.StringIO()
    code = main(
        [
            "configs",
            "--bootstrap-server",
            f"127.0.0.1:{port}",
            "--command-config",
            str(client_properties),
            "--describe",
            "--entity-type",
            "users",
        ],
        stdout=out,
        stderr=io.StringIO(),
        stdin=io.StringIO(),
    )
    return code, out.getvalue()


@pytest.mark.slow
def test_serve_bootstraps_admin_and_stops_on_sigterm(tmp_path: Path) -> None:
    port = free_port()
    proc = start(write_config(tmp_path, port))
    try:
        assert proc.stdout is not None
        banner = "".join(proc.stdout.readline() for _ in range(3))
        assert "Bootstrap super user 'admin' created" in banner
        props = tmp_path / "data" / "admin.properties"
        kcat_conf = tmp_path / "data" / "admin-kcat.conf"
        assert oct(props.stat().st_mode & 0o777) == "0o600"
        assert oct((tmp_path / "data" / "creds.db").stat().st_mode & 0o777) == "0o600"
        password = next(
            line for line in kcat_conf.read_text().splitlines() if line.startswith("sasl.password=")
        )
        # The kcat file holds librdkafka settings: confluent-kafka reads them as is
        # (Debian's kcat links librdkafka 2.0.2, whose client-final nonce Kafka
        # refuses since CVE-2024-56128, and so do we).
        from confluent_kafka.admin import AdminClient

        settings: dict[str, str | int | float | bool] = {}
        for line in kcat_conf.read_text().splitlines():
            key, sep, value = line.partition("=")
            if sep:
                settings[key] = value
        brokers = AdminClient(settings).list_topics(timeout=10).brokers
        assert [(b.host, b.port) for b in brokers.values()] == [("127.0.0.1", port)]
        code, described = describe_users(port, props)
        assert code == 0 and "user-principal 'admin' are SCRAM-SHA-256=iterations=8192" in described
    finally:
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=15)
    assert proc.returncode == 0
    # The password never reaches the terminal or the log.
    assert password.split("=", 1)[1] not in banner + stdout + stderr
    assert "Shutting down" in stderr
    # A second start keeps the user and does not rewrite the files.
    proc = start(write_config(tmp_path, port))
    try:
        assert proc.stdout is not None
        assert "already exists" in "".join(proc.stdout.readline() for _ in range(3))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=15)


@pytest.mark.slow
def test_invalid_config_fails_at_start_naming_the_key(tmp_path: Path) -> None:
    config = write_config(tmp_path, free_port(), "connections.max.reauth.ms=soon\n")
    proc = serve_until_exit(config)
    assert proc.returncode == 1
    assert "connections.max.reauth.ms: expected an integer, got 'soon'" in proc.stderr


@pytest.mark.slow
def test_missing_config_file(tmp_path: Path) -> None:
    proc = subprocess.run(
        [EXE, "serve", "--config", str(tmp_path / "nope")],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 1 and "cannot read" in proc.stderr


BASE = {"scram.credential.store.path": "x.db"}


@pytest.mark.parametrize(
    ("props", "message"),
    [
        (
            {"listeners": "PLAINTEXT://127.0.0.1:9092"},
            "only SASL_PLAINTEXT, SASL_SSL are supported",
        ),
        ({"listeners": "SASL_PLAINTEXT//x:1"}, "is not of the form NAME://host:port"),
        ({"listeners": "SASL_PLAINTEXT://x:99999"}, "port 99999 is out of range"),
        ({"sasl.enabled.mechanisms": "PLAIN"}, "sasl.enabled.mechanisms: 'PLAIN' is not supported"),
        (
            {"super.users": "alice"},
            "super.users: expected a string in format principalType:principalName",
        ),
        (
            {"zookeeper.connect": "h:2181"},
            "either zookeeper.connect or scram.credential.store.path",
        ),
        ({"listeners": "SASL_PLAINTEXT://0.0.0.0:9092"}, "set advertised.listeners"),
        ({"listeners": "SASL_SSL://127.0.0.1:9093"}, "needs ssl.keystore.location"),
        (
            {
                "advertised.listeners": "OTHER://h:1",
                "listener.security.protocol.map": "OTHER:SASL_PLAINTEXT",
            },
            "OTHER is not one of the listeners",
        ),
        ({"scram.busy.poll.us": "-1"}, "scram.busy.poll.us: must be at least 0, got -1"),
        ({"scram.busy.poll.us": "fast"}, "scram.busy.poll.us: expected an integer"),
        ({"scram.busy.poll.us": "100001"}, "scram.busy.poll.us: at most 100000"),
    ],
)
def test_config_errors(props: dict[str, str], message: str) -> None:
    with pytest.raises(ScramConfigError, match=message.replace("(", r"\(")):
        EndpointConfig.from_properties({**BASE, **props})


def test_no_store_configured() -> None:
    with pytest.raises(ScramConfigError, match="no credential store"):
        EndpointConfig.from_properties({})


def test_unknown_key_warns(caplog: pytest.LogCaptureFixture) -> None:
    config = EndpointConfig.from_properties(
        {**BASE, "log.dirs": "/tmp", "super.users": "User:a;User:b"}
    )
    assert "Unknown configuration key 'log.dirs' is ignored" in caplog.text
    assert {str(p) for p in config.super_users} == {"User:a", "User:b"}
    assert config.failed_auth_delay_ms == 100 and config.sasl_max_receive == 524288


def test_config_repr_hides_secrets() -> None:
    config = EndpointConfig.from_properties(
        {
            **BASE,
            "scram.decoy.secret": "decoy-s3cret",
            "listeners": "SASL_SSL://localhost:9093",
            "ssl.keystore.location": "/etc/kafka/server.pem",
            "ssl.key.password": "key-s3cret",
            "delegation.token.secret.key": "token-s3cret",
        }
    )
    text = repr(config)
    assert "SASL_SSL" in text
    for secret in ("decoy-s3cret", "key-s3cret", "token-s3cret"):
        assert secret not in text


@pytest.mark.slow
def test_serve_with_busy_polling_authenticates_and_stops_on_sigterm(tmp_path: Path) -> None:
    port = free_port()
    proc = start(write_config(tmp_path, port, "scram.busy.poll.us=500\n"))
    try:
        assert proc.stdout is not None
        "".join(proc.stdout.readline() for _ in range(3))
        props = tmp_path / "data" / "admin.properties"
        for _ in range(3):
            code, described = describe_users(port, props)
            assert code == 0 and "user-principal 'admin'" in described
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=15)
    assert proc.returncode == 0, stderr
    assert "Shutting down" in stderr
