"""A real ``kafka-scram serve`` on a ZooKeeper that dies: token logins and
password logins are refused alike, with Kafka's ordinary authentication failure, and
the outage is a handful of log lines: no traceback, no kazoo chatter."""

from __future__ import annotations

import io
import signal
from pathlib import Path

import jaas
from sasl_scram import SCRAM_SHA_256
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import KafkaConnectionError
from sasl_scram.admin import SaslCredentials
from sasl_scram.cli import main
from sasl_scram.config import ClientConfig
from tests.sasl_scram.endpoint.test_serve_cli import start
from tests.support.polling import wait_until
from tests.support.zookeeper_server import ZooKeeperServer
from tests.support.zookeeper_server import free_port
from tokenauth import DelegationTokenClient


def _login(port: int, user: str, password: str, token: bool = False) -> int:
    """0 when the login succeeds, else Kafka's error code."""
    try:
        KafkaConnection(
            f"127.0.0.1:{port}",
            SaslCredentials(SCRAM_SHA_256, user, password, token_auth=token),
            timeout=5,
        ).close()
    except KafkaConnectionError as exc:
        return exc.error_code or -1
    return 0


def test_token_and_password_logins_fail_closed_alike(
    dedicated_zookeeper: ZooKeeperServer, tmp_path: Path
) -> None:
    hosts = dedicated_zookeeper.hosts
    add = "SCRAM-SHA-256=[iterations=4096,password=alice-secret]"
    argv = ["configs", "--zookeeper", hosts, "--alter", "--add-config", add, "--user", "alice"]
    assert main(argv, stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO()) == 0
    port = free_port()
    config = tmp_path / "server.properties"
    config.write_text(
        f"listeners=SASL_PLAINTEXT://127.0.0.1:{port}\n"
        f"zookeeper.connect={hosts}\n"
        "zookeeper.session.timeout.ms=30000\n"
        "zookeeper.connection.timeout.ms=2000\n"
        "delegation.token.secret.key=token-secret\n"
        "scram.store.max.staleness.ms=500\n"
    )
    proc = start(config)
    try:
        client_props = {
            "bootstrap.servers": f"127.0.0.1:{port}",
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.jaas.config": jaas.scram_login_line("alice", "alice-secret"),
        }
        with DelegationTokenClient.connect(ClientConfig.from_properties(client_props)) as c:
            token = c.create_token()
        assert _login(port, token.token_id, token.hmac_base64, token=True) == 0
        dedicated_zookeeper.kill()
        assert wait_until(lambda: _login(port, "alice", "alice-secret") == 58, 15) is not None
        for _ in range(20):
            assert _login(port, "alice", "alice-secret") == 58
            assert _login(port, token.token_id, token.hmac_base64, token=True) == 58
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=20)
    lines = stderr.splitlines()
    assert "Traceback" not in stderr
    assert not [line for line in lines if "kazoo" in line or "Connection dropped" in line]
    refusals = [line for line in lines if "refusing login" in line]
    assert len(refusals) == 2, refusals  # one per kind of outage, rate-limited
    assert any("TokenStoreUnavailable" in line or "token store" in line for line in refusals)
    # Besides the endpoint's usual line for each failed login (Kafka's "Failed
    # authentication with /HOST:PORT ...", logged for any refused login) and
    # the audit trail's line for each login (a stream of its own, routed apart
    # by --log-config), the outage is a few lines.
    outage = [
        line
        for line in lines
        if "Failed authentication with" not in line and " kafka_scram.audit " not in line
    ]
    assert len(outage) < 20, stderr
