"""Kafka's authentication metrics (``socket-server-metrics``) on ``scram.metrics.listener``,
scraped over HTTP from a real ``kafka-scram serve``."""

from __future__ import annotations

import re
import signal
import socket
import urllib.request
from pathlib import Path

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram import ScramClient
from sasl_scram.kafka import decode_response
from sasl_scram.kafka import encode_request
from tests.sasl_scram.endpoint.test_serve_cli import serve_until_exit
from tests.sasl_scram.endpoint.test_serve_cli import start
from tests.sasl_scram.endpoint.test_serve_cli import write_config
from tests.support.endpoint_harness import ALICE
from tests.support.endpoint_harness import RunningEndpoint
from tests.support.zookeeper_server import free_port


class Client:
    """A Java-style SASL client on one socket: ApiVersions, then logins (KIP-368 re-auth)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.correlation = 0
        self.roundtrip(18, 3, {"client_software_name": "test", "client_software_version": "1"})

    def roundtrip(self, api_key: int, version: int, body: dict[str, object]) -> dict[str, object]:
        self.correlation += 1
        self.sock.sendall(encode_request(api_key, version, self.correlation, "test", body))
        size = int.from_bytes(self._exact(4), "big")
        correlation, answer = decode_response(api_key, version, self._exact(size))
        assert correlation == self.correlation
        return answer

    def _exact(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            more = self.sock.recv(n - len(data))
            assert more, "the server closed the connection"
            data += more
        return data

    def login(self, user: str, password: str, version: int = 2, token: bool = False) -> bool:
        """SaslHandshake v1 and two SaslAuthenticate (v0 cannot re-authenticate)."""
        assert self.roundtrip(17, 1, {"mechanism": "SCRAM-SHA-256"})["error_code"] == 0
        client = ScramClient(SCRAM_SHA_256, user, password, token_auth=token)
        first = self.roundtrip(36, version, {"auth_bytes": client.client_first()})
        assert first["error_code"] == 0
        final = client.receive_server_first(first["auth_bytes"])  # type: ignore[arg-type]
        answer = self.roundtrip(36, version, {"auth_bytes": final})
        if answer["error_code"]:
            return False
        client.receive_server_final(answer["auth_bytes"])  # type: ignore[arg-type]
        return client.complete


def samples_of(text: str) -> dict[str, float]:
    """``name{labels}`` -> value, for the kafka_scram_ lines of a scrape."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        match = re.fullmatch(r"(kafka_scram_[a-z_]+(?:\{[^}]*\})?) (\S+)", line)
        if match:
            out[match.group(1)] = float(match.group(2))
    return out


@pytest.mark.slow
def test_metrics_count_logins_failures_and_reauthentications(tmp_path: Path) -> None:
    port, metrics_port = free_port(), free_port()
    config = write_config(
        tmp_path,
        port,
        f"scram.metrics.listener=127.0.0.1:{metrics_port}\n"
        "connections.max.reauth.ms=60000\n"
        "connection.failed.authentication.delay.ms=0\n",
    )
    proc = start(config)
    try:
        assert proc.stdout is not None
        assert "Bootstrap super user" in "".join(proc.stdout.readline() for _ in range(3))
        kcat_conf = (tmp_path / "data" / "admin-kcat.conf").read_text()
        password = re.search(r"^sasl\.password=(.*)$", kcat_conf, re.M).group(1)  # type: ignore[union-attr]
        kept = []
        for _ in range(5):
            client = Client(port)
            assert client.login("admin", password)
            kept.append(client)
        for _ in range(3):
            assert not Client(port).login("admin", "not-the-password")
        # Two re-authentications on two connections: KafkaChannel refuses a second
        # one on the same connection within a second of the first (error 34).
        for client in kept[:2]:
            assert client.login("admin", password)
        # An answer after the last login: the server's bookkeeping of it is done.
        kept[0].roundtrip(18, 3, {"client_software_name": "test", "client_software_version": "1"})
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as r:
            scrape = r.read().decode()
        for client in kept:
            client.sock.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=15)
    labels = '{listener="SASL_PLAINTEXT",mechanism="SCRAM-SHA-256"}'
    samples = samples_of(scrape)
    assert samples[f"kafka_scram_successful_authentication_total{labels}"] == 5
    assert samples[f"kafka_scram_failed_authentication_total{labels}"] == 3
    assert samples[f"kafka_scram_successful_reauthentication_total{labels}"] == 2
    assert samples[f"kafka_scram_failed_reauthentication_total{labels}"] == 0
    assert samples[f"kafka_scram_successful_authentication_no_reauth_total{labels}"] == 0
    latency = f"kafka_scram_reauthentication_latency_ms_count{labels}"
    assert samples[latency] == 2
    assert samples[f"kafka_scram_authentication_latency_ms_count{labels}"] == 5
    assert samples[f"kafka_scram_authenticated_connections{labels}"] == 5
    assert samples['kafka_scram_connections{listener="SASL_PLAINTEXT"}'] == 5
    # No user names in the metrics; the URL is logged once at start.
    assert "admin" not in scrape
    assert f"Metrics at http://127.0.0.1:{metrics_port}/metrics" in stderr


def test_failed_reauthentication_and_clients_that_cannot_reauthenticate() -> None:
    props = {
        "scram.metrics.listener": "127.0.0.1:0",
        "connections.max.reauth.ms": "60000",
        "connection.failed.authentication.delay.ms": "0",
    }
    with RunningEndpoint(properties=props) as ep:
        old_client = Client(ep.port)
        assert old_client.login(*ALICE, version=0)
        client = Client(ep.port)
        assert client.login(*ALICE)
        assert not client.login("alice", "not-the-password")
        old_client.roundtrip(18, 3, {"client_software_name": "t", "client_software_version": "1"})
        assert ep.endpoint.metrics is not None and ep.endpoint.metrics.address is not None
        host, port = ep.endpoint.metrics.address
        with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=10) as r:
            samples = samples_of(r.read().decode())
    labels = '{listener="SASL_PLAINTEXT",mechanism="SCRAM-SHA-256"}'
    assert samples[f"kafka_scram_successful_authentication_total{labels}"] == 2
    assert samples[f"kafka_scram_successful_authentication_no_reauth_total{labels}"] == 1
    assert samples[f"kafka_scram_failed_reauthentication_total{labels}"] == 1
    assert samples[f"kafka_scram_failed_authentication_total{labels}"] == 0
    assert samples[f"kafka_scram_authenticated_connections{labels}"] == 1


@pytest.mark.slow
def test_metrics_port_in_use_is_a_cli_error_without_traceback(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        config = write_config(tmp_path, free_port(), f"scram.metrics.listener=127.0.0.1:{busy}\n")
        proc = serve_until_exit(config)
    assert proc.returncode == 1
    assert (
        f"kafka-scram serve: error: scram.metrics.listener: cannot listen on 127.0.0.1:{busy}"
        in proc.stderr
    )
    assert "Traceback" not in proc.stderr


def test_the_event_loop_task_gauge_counts_the_loops_tasks() -> None:
    """The soak reads this gauge to see tasks leak; it must follow the loop."""
    import asyncio

    with RunningEndpoint(properties={"scram.metrics.listener": "127.0.0.1:0"}) as ep:
        assert ep.endpoint.metrics is not None and ep.endpoint.metrics.address is not None
        host, port = ep.endpoint.metrics.address

        def tasks() -> float:
            with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=10) as r:
                return samples_of(r.read().decode())["kafka_scram_event_loop_tasks"]

        before = tasks()
        release = asyncio.Event()

        async def held() -> None:
            await release.wait()

        async def hold(n: int) -> list[asyncio.Task[None]]:
            return [asyncio.get_running_loop().create_task(held()) for _ in range(n)]

        pending = ep.call(hold(7))
        assert tasks() == before + 7

        async def finish() -> None:
            release.set()
            await asyncio.gather(*pending)

        ep.call(finish())
        assert tasks() == before
