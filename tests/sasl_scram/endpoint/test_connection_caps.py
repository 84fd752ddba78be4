"""The connection caps over real sockets: ``max.connections.per.ip`` (and its
overrides) as Kafka's ``ConnectionQuotas`` applies them, and
``scram.max.connections.per.user``, against a real endpoint on loopback.

Linux routes all of 127.0.0.0/8 to loopback, so a client can connect from
127.0.0.1 and from 127.0.0.2 and be two addresses to the endpoint.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import ssl
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram import ScramClient
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode
from sasl_scram.kafka import FrameBuffer
from sasl_scram.kafka import decode_response
from sasl_scram.kafka import encode_request
from tests.support.endpoint_harness import ADMIN
from tests.support.endpoint_harness import ALICE
from tests.support.endpoint_harness import RunningEndpoint
from tests.support.polling import wait_until
from tests.support.tls import self_signed

REFUSED_ADDRESS = "address already has the configured maximum of"
REFUSED_USER = "already has the configured maximum of"


class Client:
    """One raw connection from ``source`` (an address of loopback)."""

    def __init__(self, port: int, source: str = "127.0.0.1") -> None:
        self.sock = socket.create_connection(
            ("127.0.0.1", port), timeout=5, source_address=(source, 0)
        )
        self.frames = FrameBuffer(1 << 20)
        self.correlation = 0

    def call(self, key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        self.correlation += 1
        self.sock.sendall(encode_request(key, version, self.correlation, "caps", body))
        while (payload := self.frames.next_frame()) is None:
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("closed by the server")
            self.frames.feed(data)
        _, answer = decode_response(key, version, payload)
        return answer

    def served(self) -> bool:
        """Whether ApiVersions is answered (the connection was not closed at accept)."""
        try:
            body = {"client_software_name": "caps", "client_software_version": "1"}
            return bool(self.call(ApiKey.API_VERSIONS, 3, body)["error_code"] == 0)
        except (ConnectionError, OSError):
            return False

    def login(self, user: str, password: str) -> dict[str, Any]:
        """A whole SCRAM-SHA-256 exchange: the last SaslAuthenticate response."""
        shake = self.call(ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-256"})
        assert shake["error_code"] == 0, shake
        client = ScramClient(SCRAM_SHA_256, user, password)
        first = self.call(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": client.client_first()})
        assert first["error_code"] == 0, first
        final = client.receive_server_first(first["auth_bytes"])
        return self.call(ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": final})

    def closed_by_server(self) -> bool:
        """Whether the server closes the connection (read until it does, or 5 s)."""
        try:
            while data := self.sock.recv(65536):
                self.frames.feed(data)
        except (ConnectionResetError, BrokenPipeError):
            pass
        except TimeoutError:
            return False
        return True

    def close(self) -> None:
        self.sock.close()


@contextlib.contextmanager
def endpoint(**properties: str) -> Iterator[RunningEndpoint]:
    with RunningEndpoint(properties={k.replace("_", "."): v for k, v in properties.items()}) as ep:
        yield ep


@contextlib.contextmanager
def clients(port: int, n: int, source: str = "127.0.0.1") -> Iterator[list[Client]]:
    opened = [Client(port, source) for _ in range(n)]
    try:
        yield opened
    finally:
        for client in opened:
            client.close()


def scrape(ep: RunningEndpoint) -> str:
    metrics = ep.endpoint.metrics
    assert metrics is not None and metrics.address is not None
    host, port = metrics.address
    url = f"http://{host}:{port}/metrics"
    with urllib.request.urlopen(url, timeout=5) as response:
        return str(response.read().decode())


def refused_total(text: str, cap: str) -> float:
    name = f'kafka_scram_refused_connections_total{{cap="{cap}"}} '
    return sum(float(line[len(name) :]) for line in text.splitlines() if line.startswith(name))


# -- max.connections.per.ip ---------------------------------------------------------------


def test_connections_from_one_address_past_its_cap_are_closed_while_another_is_served(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="sasl_scram.endpoint")
    with (
        endpoint(max_connections_per_ip="2", scram_metrics_listener="127.0.0.1:0") as ep,
        clients(ep.port, 2) as held,
    ):
        assert all(client.served() for client in held)
        with clients(ep.port, 3) as over:
            # Closed right after accept, as Kafka's Acceptor closes them: nothing answered.
            for client in over:
                assert client.closed_by_server()
                assert not client.served()
            # Another address has its own count.
            with clients(ep.port, 2, source="127.0.0.2") as other:
                assert all(client.served() for client in other)
                assert other[0].login(*ALICE)["error_code"] == 0
        # A place is given back when its connection closes.
        held.pop().close()
        assert wait_until(lambda: ep.connection_count() == 1) is not None
        with clients(ep.port, 1) as again:
            assert again[0].served()
            assert again[0].login(*ALICE)["error_code"] == 0
        assert refused_total(scrape(ep), "max.connections.per.ip") == 3
    lines = [r.getMessage() for r in caplog.records if REFUSED_ADDRESS in r.getMessage()]
    # Three refusals, one line: at most one a minute, never a line per connection.
    assert len(lines) == 1, lines
    assert lines[0].startswith("Rejected connection from 127.0.0.1, ")
    assert "maximum of 2 connections (max.connections.per.ip" in lines[0]


def test_an_override_raises_one_address_cap() -> None:
    props = {"max_connections_per_ip": "1", "max_connections_per_ip_overrides": "127.0.0.2:3"}
    with endpoint(**props) as ep:
        with clients(ep.port, 3, source="127.0.0.2") as raised:
            assert all(client.served() for client in raised)
            with clients(ep.port, 1, source="127.0.0.2") as over:
                assert over[0].closed_by_server()
        with clients(ep.port, 1) as capped:
            assert capped[0].served()
            with clients(ep.port, 1) as over:
                assert over[0].closed_by_server()


def test_an_ipv4_mapped_override_is_the_ipv4_clients_cap() -> None:
    """Kafka's ``InetAddress.getByName("::ffff:127.0.0.2")`` is 127.0.0.2: the
    override applies to the IPv4 client, not to an address no client has."""
    props = {
        "max_connections_per_ip": "1",
        "max_connections_per_ip_overrides": "::ffff:127.0.0.2:2",
    }
    with endpoint(**props) as ep, clients(ep.port, 2, source="127.0.0.2") as raised:
        assert all(client.served() for client in raised)
        with clients(ep.port, 1, source="127.0.0.2") as over:
            assert over[0].closed_by_server()


def test_zero_refuses_every_address_but_the_overrides() -> None:
    props = {"max_connections_per_ip": "0", "max_connections_per_ip_overrides": "127.0.0.2:1"}
    with endpoint(**props) as ep:
        with clients(ep.port, 1) as refused:
            assert refused[0].closed_by_server()
        with clients(ep.port, 1, source="127.0.0.2") as allowed:
            assert allowed[0].login(*ALICE)["error_code"] == 0


def test_a_failed_tls_handshake_gives_its_place_back(tmp_path: Path) -> None:
    """Counted from accept, before TLS (as Kafka counts); a handshake that fails,
    which no protocol ever sees, still frees its address's place."""
    truststore, keystore = self_signed(tmp_path)
    props = {
        "listeners": "SASL_SSL://127.0.0.1:0",
        "ssl.keystore.location": str(keystore),
        "max.connections.per.ip": "1",
    }
    with RunningEndpoint(properties=props) as ep:
        for _ in range(3):
            with clients(ep.port, 1) as plain:
                plain[0].sock.sendall(b"not a TLS client hello" * 10)
                assert plain[0].closed_by_server()
        context = ssl.create_default_context(cafile=str(truststore))
        context.check_hostname = False
        with (
            socket.create_connection(("127.0.0.1", ep.port), timeout=5) as raw,
            context.wrap_socket(raw) as tls,
        ):
            assert tls.version() is not None  # the handshake was served


# -- scram.max.connections.per.user ---------------------------------------------------------


def test_a_user_past_its_cap_is_refused_at_login_while_another_user_logs_in(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="sasl_scram.endpoint")
    with (
        endpoint(scram_max_connections_per_user="2", scram_metrics_listener="127.0.0.1:0") as ep,
        clients(ep.port, 2) as alices,
    ):
        for client in alices:
            assert client.login(*ALICE)["error_code"] == 0
        with clients(ep.port, 2) as more:
            for client in more:
                refused = client.login(*ALICE)
                assert refused["error_code"] == ErrorCode.SASL_AUTHENTICATION_FAILED
                assert refused["error_message"] == (
                    "User alice already has the configured maximum of 2 connections "
                    "(scram.max.connections.per.user)"
                )
                assert client.closed_by_server()
        # Another user is not held back by alice's connections.
        with clients(ep.port, 1) as admin:
            assert admin[0].login(*ADMIN)["error_code"] == 0
        # Her connections still serve; one closed gives its place back.
        assert alices[0].call(ApiKey.METADATA, 1, {"topics": []})["brokers"]
        alices.pop().close()
        assert wait_until(lambda: ep.connection_count() == 1) is not None
        with clients(ep.port, 1) as again:
            assert again[0].login(*ALICE)["error_code"] == 0
        assert refused_total(scrape(ep), "scram.max.connections.per.user") == 2
    lines = [r.getMessage() for r in caplog.records if REFUSED_USER in r.getMessage()]
    assert len(lines) == 1, lines  # once per user and minute
    assert "Refused User:'alice' after its login" in lines[0]
    assert "Failed authentication" not in caplog.text  # not logged as a wrong password


def test_the_cap_counts_logins_not_connections() -> None:
    """A connection that has not logged in holds no place of its user."""
    with endpoint(scram_max_connections_per_user="1") as ep, clients(ep.port, 3) as waiting:
        assert all(client.served() for client in waiting)
        assert waiting[0].login(*ALICE)["error_code"] == 0
        assert waiting[1].login(*ALICE)["error_code"] == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert waiting[2].login(*ADMIN)["error_code"] == 0
