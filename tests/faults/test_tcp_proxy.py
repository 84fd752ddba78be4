"""The fault tests' TCP proxy itself: forwards, counts, partitions both ways, heals."""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Iterator

import pytest

from tests.support.polling import wait_until
from tests.support.tcp_proxy import TcpProxy


class _Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        try:
            while data := self.request.recv(4096):
                self.request.sendall(data)
        except ConnectionResetError:
            # The proxy's refuse() resets its upstream side too, by design;
            # socketserver would print the traceback, after the test's capture.
            pass


@pytest.fixture
def echo_port() -> Iterator[int]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Echo)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _roundtrip(port: int, payload: bytes = b"ping", timeout: float = 2.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(payload)
        return sock.recv(4096)


def test_forwards_and_counts(echo_port: int) -> None:
    with TcpProxy("127.0.0.1", echo_port) as proxy:
        assert _roundtrip(proxy.port) == b"ping"
        assert _roundtrip(proxy.port, b"pong") == b"pong"
        assert proxy.accepted == 2


def test_refuse_resets_open_and_new_connections_until_healed(echo_port: int) -> None:
    with TcpProxy("127.0.0.1", echo_port) as proxy:
        sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=2)
        sock.sendall(b"a")
        assert sock.recv(10) == b"a"
        proxy.partition("refuse")
        with pytest.raises(OSError):
            sock.sendall(b"b")
            if not sock.recv(10):
                raise ConnectionResetError("closed")
        sock.close()
        with pytest.raises(OSError):
            if not _roundtrip(proxy.port):
                raise ConnectionResetError("closed")
        proxy.heal()
        assert _roundtrip(proxy.port) == b"ping"
        assert proxy.accepted == 3


@pytest.mark.slow
def test_drop_is_a_black_hole(echo_port: int) -> None:
    with TcpProxy("127.0.0.1", echo_port) as proxy:
        sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=0.5)
        proxy.partition("drop")
        sock.sendall(b"lost")
        with pytest.raises(TimeoutError):
            sock.recv(10)
        with pytest.raises(TimeoutError):
            _roundtrip(proxy.port, timeout=0.5)
        sock.close()
        proxy.heal()
        assert _roundtrip(proxy.port) == b"ping"


@pytest.mark.slow
def test_resume_forwards_new_connections_and_leaves_the_hole_hanging(echo_port: int) -> None:
    with TcpProxy("127.0.0.1", echo_port) as proxy:
        proxy.partition("drop")
        hung = socket.create_connection(("127.0.0.1", proxy.port), timeout=0.5)
        hung.sendall(b"lost")
        assert wait_until(lambda: proxy.accepted == 1, 5) is not None  # in the hole
        proxy.resume()
        assert _roundtrip(proxy.port) == b"ping"
        with pytest.raises(TimeoutError):
            hung.recv(10)  # neither answered nor closed
        hung.close()
        assert proxy.accepted == 2
