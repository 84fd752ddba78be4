"""A light Fetch load for ``bench_frontdoor.py``'s scaling row, as its own process.

``python bench/_fetch_load.py HOST PORT USER PASSWORD TOPIC CONNECTIONS [BYTES]``
logs in (SCRAM-SHA-256, the house's sans-IO ``ScramClient``) on the
bootstrap port, reads the topic's id and leader from Metadata v12 (the
leader's address is the front door's node port), opens CONNECTIONS
connections to the leader, logs each in, and prints ``ready``. It then reads
one line from standard input, ``START END`` (``time.monotonic()`` values:
CLOCK_MONOTONIC is one clock for every process of the machine, so the
measuring process sets the window its CPU samples cover), and on each
connection, a thread each, asks for partition 0 from offset 0 again and
again with Fetch v15, one request in flight, discarding the bytes with
``recv_into`` into one buffer. At END it prints one JSON line: the bytes and
responses received within [START, END), and its own CPU seconds.

Fetch v15 is the highest the front door forwards; the records were written
before, so the broker serves them from the page cache (``sendfile``), and a
Python thread per connection costs one kernel copy per byte: what it
measures is the front door's forwarding, not the load generator's.
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import threading
import time
import uuid
from typing import Any

from sasl_scram import SCRAM_SHA_256
from sasl_scram import ScramClient
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import decode_response
from sasl_scram.kafka import encode_request

# What one Fetch asks for: Kafka's consumer defaults (fetch.max.bytes 50 MiB,
# max.partition.fetch.bytes 1 MiB) with the partition's share raised, so that
# a response is several MiB and per-request costs do not dominate.
FETCH_MAX_BYTES = 50 << 20
PARTITION_MAX_BYTES = 8 << 20
FETCH_VERSION = 15
METADATA_VERSION = 12
BUFFER = 1 << 20


def call(sock: socket.socket, key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
    """One request and its response, blocking."""
    sock.sendall(encode_request(key, version, 1, "fetch-load", body))
    _, answer = decode_response(key, version, read_frame(sock))
    return answer


def read_frame(sock: socket.socket) -> bytes:
    (size,) = struct.unpack(">i", recv_exactly(sock, 4))
    return recv_exactly(sock, size)


def recv_exactly(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("closed by the front door")
        data += chunk
    return bytes(data)


def login(host: str, port: int, user: str, password: str) -> socket.socket:
    """A connection logged in with SCRAM-SHA-256 (SaslHandshake v1, SaslAuthenticate v2)."""
    sock = socket.create_connection((host, port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    client = ScramClient(SCRAM_SHA_256, user, password)
    call(sock, ApiKey.SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-256"})
    first = call(sock, ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": client.client_first()})
    final = client.receive_server_first(bytes(first["auth_bytes"]))
    answer = call(sock, ApiKey.SASL_AUTHENTICATE, 2, {"auth_bytes": final})
    if answer["error_code"] != 0:
        raise ConnectionError(f"login refused: error {answer['error_code']}")
    client.receive_server_final(bytes(answer["auth_bytes"]))
    return sock


def leader(sock: socket.socket, topic: str) -> tuple[str, int, bytes]:
    """The host and port (the front door's node port) of partition 0's leader, and
    the topic's id (Fetch v13+ names topics by id)."""
    body = {"topics": [{"topic_id": None, "name": topic}], "allow_auto_topic_creation": False}
    answer = call(sock, ApiKey.METADATA, METADATA_VERSION, body)
    (found,) = answer["topics"]
    node = next(p["leader_id"] for p in found["partitions"] if p["partition_index"] == 0)
    broker = next(b for b in answer["brokers"] if b["node_id"] == node)
    topic_id = found["topic_id"]
    return (
        broker["host"],
        broker["port"],
        topic_id.bytes if isinstance(topic_id, uuid.UUID) else bytes(topic_id),
    )


def fetch_request(topic_id: bytes, correlation_id: int, partition_max: int) -> bytes:
    """Fetch v15 (flexible; request header v2): partition 0 from offset 0, no
    fetch session (KIP-227: session id 0, epoch -1), no wait."""
    header = struct.pack(">hhih", ApiKey.FETCH, FETCH_VERSION, correlation_id, 10) + b"fetch-load"
    body = struct.pack(">iiibii", 0, 1, FETCH_MAX_BYTES, 0, 0, -1)
    partition = struct.pack(">iiqiqi", 0, -1, 0, -1, -1, partition_max) + b"\x00"
    # Compact arrays carry length + 1: one topic, one partition; no forgotten
    # topics (empty: 1), rack id "" (1), no tagged fields (0).
    topics = b"\x02" + topic_id + b"\x02" + partition + b"\x00"
    payload = header + b"\x00" + body + topics + b"\x01" + b"\x01" + b"\x00"
    return struct.pack(">i", len(payload)) + payload


class Counter:
    """Bytes and responses a connection received within the window."""

    def __init__(self) -> None:
        self.bytes = self.responses = 0


def fetch_loop(sock: socket.socket, request: bytes, start: float, end: float, out: Counter) -> None:
    """Fetch until ``end``, counting what arrives from ``start`` on."""
    buffer = bytearray(BUFFER)
    view = memoryview(buffer)
    size_bytes = bytearray(4)
    while True:
        sock.sendall(request)
        got = 0
        while got < 4:
            got += sock.recv_into(memoryview(size_bytes)[got:], 4 - got)
        left = struct.unpack(">i", size_bytes)[0]
        while left:
            n = sock.recv_into(view, min(left, BUFFER))
            if not n:
                raise ConnectionError("closed by the front door")
            left -= n
        now = time.monotonic()
        if now >= end:
            return
        if now >= start:
            out.bytes += 4 + struct.unpack(">i", size_bytes)[0]
            out.responses += 1


def main(argv: list[str]) -> None:
    host, port, user, password, topic = argv[0], int(argv[1]), argv[2], argv[3], argv[4]
    connections = int(argv[5])
    partition_max = int(argv[6]) if len(argv) > 6 else PARTITION_MAX_BYTES
    bootstrap = login(host, port, user, password)
    node_host, node_port, topic_id = leader(bootstrap, topic)
    socks = [login(node_host, node_port, user, password) for _ in range(connections)]
    # The first response must hold records: a small one is an error code, not data.
    socks[0].sendall(fetch_request(topic_id, 1, partition_max))
    first = len(read_frame(socks[0]))
    if first < min(partition_max, 1 << 16) // 2:
        raise SystemExit(f"_fetch_load.py: error: the first Fetch returned {first} bytes")
    print("ready", flush=True)
    start, end = map(float, sys.stdin.readline().split())
    counters = [Counter() for _ in socks]
    threads = [
        threading.Thread(
            target=fetch_loop, args=(s, fetch_request(topic_id, 2, partition_max), start, end, c)
        )
        for s, c in zip(socks, counters, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result = {
        "bytes": sum(c.bytes for c in counters),
        "responses": sum(c.responses for c in counters),
        "cpu_s": time.process_time(),
    }
    print(json.dumps(result), flush=True)
    for s in [bootstrap, *socks]:
        s.close()


if __name__ == "__main__":
    main(sys.argv[1:])
