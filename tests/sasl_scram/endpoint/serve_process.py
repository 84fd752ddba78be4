"""A real ``kafka-scram serve`` process and a raw Kafka-protocol peer for hostile tests.

The server runs as its own process so that its memory (RSS from
``/proc/<pid>/status``) can be measured; the peer speaks the wire protocol
byte by byte, so it can do what no well-behaved client does.
"""

from __future__ import annotations

import base64
import os
import signal
import socket
import struct
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sasl_scram import SCRAM_SHA_256, SaltedPasswordCache, ScramClient, ScramMechanism, _crypto
from sasl_scram.kafka import FrameBuffer, decode_response, encode_request
from sasl_scram.store import SQLiteCredentialStore
from tests.cli_process import EXE, child_env
from tests.endpoint_harness import seed_users
from tests.zookeeper_server import free_port

SASL_HANDSHAKE, SASL_AUTHENTICATE, METADATA, API_VERSIONS = 17, 36, 3, 18


def seed(db: Path) -> None:
    """Create the store with admin (super user) and alice."""
    db.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    store = SQLiteCredentialStore(db, poll_interval=0)
    try:
        seed_users(store)
    finally:
        store.close()


class Serve:
    """``kafka-scram serve`` on a free loopback port, its log in a file."""

    def __init__(
        self,
        tmp_path: Path,
        db: Path,
        properties: Mapping[str, str] | None = None,
        umask: int | None = None,
    ) -> None:
        self.port = free_port()
        props = {
            "listeners": f"SASL_PLAINTEXT://127.0.0.1:{self.port}",
            "scram.credential.store.path": str(db),
            "super.users": "User:admin",
            **(properties or {}),
        }
        config = tmp_path / f"server-{self.port}.properties"
        config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        self.log = tmp_path / f"serve-{self.port}.log"

        def set_umask() -> None:
            if umask is not None:
                os.umask(umask)

        with self.log.open("w") as log:
            self.proc = subprocess.Popen(
                [EXE, "serve", "--config", str(config)],
                env=child_env(),
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                preexec_fn=set_umask,  # only os.umask, before exec
            )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert "kafka-scram endpoint ready" in line, self.log.read_text()

    def rss(self) -> int:
        """The server's resident set size in bytes."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmRSS")

    def wait_for_log(self, text: str, timeout: float = 10) -> str:
        """The first log line containing ``text`` (the log is written as events happen)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.log.read_text().splitlines():
                if text in line:
                    return line
            time.sleep(0.02)
        raise AssertionError(f"{text!r} not logged: {self.log.read_text()[-2000:]}")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.communicate(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.communicate()

    def __enter__(self) -> Serve:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Peer:
    """One raw connection speaking Kafka's protocol."""

    def __init__(self, port: int, timeout: float = 15) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.frames = FrameBuffer(1 << 27)
        self.corr = 0

    @property
    def local_port(self) -> int:
        return int(self.sock.getsockname()[1])

    def send(self, key: int, version: int, body: dict[str, Any]) -> None:
        self.corr += 1
        self.sock.sendall(encode_request(key, version, self.corr, "hostile", body))

    def receive_frame(self) -> bytes:
        """One response frame's payload, undecoded."""
        while (payload := self.frames.next_frame()) is None:
            data = self.sock.recv(1 << 20)
            if not data:
                raise ConnectionError("closed by the server")
            self.frames.feed(data)
        return payload

    def receive(self, key: int, version: int) -> dict[str, Any]:
        _, body = decode_response(key, version, self.receive_frame())
        return body

    def call(self, key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        self.send(key, version, body)
        return self.receive(key, version)

    def server_first(self, client_first: bytes, mech: ScramMechanism = SCRAM_SHA_256) -> bytes:
        """Handshake and client-first; the server-first message."""
        shake = self.call(SASL_HANDSHAKE, 1, {"mechanism": mech.mechanism_name})
        assert shake["error_code"] == 0, shake
        first = self.call(SASL_AUTHENTICATE, 2, {"auth_bytes": client_first})
        assert first["error_code"] == 0, first
        return bytes(first["auth_bytes"])

    def login(
        self,
        user: str,
        password: str,
        mech: ScramMechanism = SCRAM_SHA_256,
        cache: SaltedPasswordCache | None = None,
        token: bool = False,
    ) -> dict[str, Any]:
        """A whole SCRAM exchange; the last SaslAuthenticate response."""
        kwargs: dict[str, Any] = {"token_auth": token}
        if cache is not None:
            kwargs["key_cache"] = cache
        client = ScramClient(mech, user, password, **kwargs)
        server_first = self.server_first(client.client_first(), mech)
        final = client.receive_server_first(server_first)
        return self.call(SASL_AUTHENTICATE, 2, {"auth_bytes": final})

    def closed(self) -> bool:
        """Whether the server closed the connection (waits for it)."""
        try:
            return self.sock.recv(1) == b""
        except (ConnectionResetError, BrokenPipeError):
            return True

    def close(self) -> None:
        self.sock.close()


def forged_final(
    client_first: bytes, server_first: bytes, password: str, nonce: str, mech: ScramMechanism
) -> bytes:
    """A client-final with ``nonce`` and a valid proof over what is sent."""
    fields = dict(part.split("=", 1) for part in server_first.decode().split(","))
    salt = base64.b64decode(fields["s"])
    salted = _crypto.salted_password(mech, password.encode(), salt, int(fields["i"]))
    client_key = _crypto.client_key(mech, salted)
    stored_key = _crypto.hash_digest(mech, client_key)
    without_proof = f"c=biws,r={nonce}"
    bare = client_first.decode().split(",", 2)[2]
    auth = f"{bare},{server_first.decode()},{without_proof}".encode()
    proof = _crypto.xor(client_key, _crypto.hmac_digest(mech, stored_key, auth))
    return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()


def metadata_request(topics: int, name_size: int = 20, correlation_id: int = 1) -> bytes:
    """A framed Metadata v1 request naming ``topics`` topics, built without dicts."""
    assert topics <= 10 ** (name_size - 1), "names would not fit"
    header = struct.pack(">hhih", METADATA, 1, correlation_id, 7) + b"hostile"
    names = b"".join(
        struct.pack(">h", name_size) + f"t{i:0{name_size - 1}d}".encode() for i in range(topics)
    )
    payload = header + struct.pack(">i", topics) + names
    return struct.pack(">i", len(payload)) + payload
