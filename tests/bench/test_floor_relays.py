"""The side-by-side row's floors (bench/floor_relay.c and .py), started as the
bench starts them (``_floor.started``), relay every byte both ways over real
sockets: their CPU per MB is a floor only if they carry the traffic whole."""

from __future__ import annotations

import hashlib
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import _floor

# Several transfers at once, one larger than the relays' 256 KB buffers and the
# sockets' buffers together, so that flow control (a partial write, a paused
# read) is part of the run.
SIZES = (1, 1000, 300_000, 8_000_000)


@pytest.fixture
def echo() -> Iterator[str]:
    """A TCP echo server on loopback: its address."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn:
            while data := conn.recv(1 << 16):
                conn.sendall(data)

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        server.close()


def _round_trip(bootstrap: str, size: int) -> bool:
    """``size`` random bytes sent through the relay and back: whether they came back whole."""
    data = os.urandom(size)
    host, port = bootstrap.rsplit(":", 1)
    digest = hashlib.sha256()
    received = 0
    with socket.create_connection((host, int(port)), timeout=30) as conn:
        sender = threading.Thread(target=conn.sendall, args=(data,), daemon=True)
        sender.start()
        while received < size and (chunk := conn.recv(1 << 16)):
            digest.update(chunk)
            received += len(chunk)
        sender.join(30)
    return received == size and digest.digest() == hashlib.sha256(data).digest()


@pytest.mark.parametrize("kind", [_floor.C, _floor.PYTHON])
def test_each_floor_relays_every_byte_both_ways(kind: str, echo: str, tmp_path: Path) -> None:
    cpus = ",".join(map(str, sorted(os.sched_getaffinity(0))))
    with _floor.started(0, echo, cpus, tmp_path, kind) as relay:
        results: dict[int, bool] = {}
        threads = [
            threading.Thread(
                target=lambda n=n: results.__setitem__(n, _round_trip(relay.bootstrap, n))
            )
            for n in SIZES
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert results == {n: True for n in SIZES}
    # Its counters, printed when it stops, saw the same traffic.
    assert relay.counters["pairs"] == len(SIZES)
    assert relay.counters["to_upstream"] == relay.counters["to_client"] == sum(SIZES)
    assert relay.counters["refused"] == 0
