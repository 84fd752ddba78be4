"""Changing the port as the error and ``serve --help`` say.

``--override listeners=...`` on the shipped ``config/server.properties`` must
send clients to the port that serves: the banner, Metadata and the written
``admin.properties`` follow the listener (Kafka's ``advertised.listeners``
defaults to ``listeners``). Where a file pins ``advertised.listeners`` to
another port, a WARNING names the mismatch and both keys.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from sasl_scram.config import read_properties
from tests.support.cli_process import ROOT
from tests.support.cli_process import kafka_scram
from tests.support.serve_process import read_banner
from tests.support.serve_process import start_serve
from tests.support.serve_process import stop_serve
from tests.support.zookeeper_server import free_port

SHIPPED = ROOT / "config" / "server.properties"


def _serve(tmp_path: Path, *overrides: str, config: Path = SHIPPED) -> subprocess.Popen[str]:
    state = tmp_path / "state"
    args = [
        f"scram.credential.store.path={state}/credentials.db",
        f"scram.bootstrap.client.properties={state}/admin.properties",
        *overrides,
    ]
    return start_serve(config, *(arg for item in args for arg in ("--override", item)))


def _describe(port: int, properties: Path) -> subprocess.CompletedProcess[str]:
    return kafka_scram(
        "configs", "--bootstrap-server", f"127.0.0.1:{port}", "--command-config",
        str(properties), "--describe", "--entity-type", "users", timeout=20,
    )  # fmt: skip


@pytest.mark.slow
def test_overriding_listeners_moves_every_address_clients_are_given(tmp_path: Path) -> None:
    admin = tmp_path / "state" / "admin.properties"
    for port in (free_port(), free_port()):  # the second start: the user exists already
        proc = _serve(tmp_path, f"listeners=SASL_PLAINTEXT://127.0.0.1:{port}")
        try:
            banner = read_banner(proc)
            ports = set(re.findall(r"127\.0\.0\.1:(\d+)", banner))
            assert ports == {str(port)}, banner
            assert read_properties(admin)["bootstrap.servers"] == f"127.0.0.1:{port}"
            kcat = read_properties(admin.with_name("admin-kcat.conf"))
            assert kcat["bootstrap.servers"] == f"127.0.0.1:{port}"
            # A client following the written file logs in at once (Metadata included).
            described = _describe(port, admin)
            assert described.returncode == 0, described.stderr
            assert "user-principal 'admin'" in described.stdout
        finally:
            err = stop_serve(proc)
        assert "WARNING" not in err, err


@pytest.mark.slow
def test_a_pinned_advertised_listener_on_another_port_is_a_warning(tmp_path: Path) -> None:
    config = tmp_path / "server.properties"
    config.write_text(
        SHIPPED.read_text() + "advertised.listeners=SASL_PLAINTEXT://127.0.0.1:9092\n"
    )
    port = free_port()
    proc = _serve(tmp_path, f"listeners=SASL_PLAINTEXT://127.0.0.1:{port}", config=config)
    try:
        read_banner(proc)
    finally:
        err = stop_serve(proc)
    warnings = [line for line in err.splitlines() if " WARNING " in line]
    assert len(warnings) == 1, err
    assert f"{config}:" in warnings[0] and "--override" in warnings[0]
    assert "127.0.0.1:9092" in warnings[0] and f"127.0.0.1:{port}" in warnings[0]
    assert "listeners" in warnings[0] and "advertised.listeners" in warnings[0]


def test_make_run_takes_a_port() -> None:
    dry = subprocess.run(
        ["make", "-n", "run", "PORT=19093"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert dry.returncode == 0, dry.stderr
    recipe = dry.stdout.replace("\\\n", " ")
    serve = next(line for line in recipe.splitlines() if "kafka-scram serve" in line)
    assert "--override listeners=SASL_PLAINTEXT://127.0.0.1:19093" in serve
