"""A real ``kafka-scram serve`` process and a raw Kafka-protocol peer for hostile tests.

The server runs as its own process (:class:`tests.support.serve_process.ServeProcess`)
so that its memory (RSS from ``/proc/<pid>/status``) can be measured; the peer
speaks the wire protocol byte by byte, so it can do what no well-behaved client
does.
"""

from __future__ import annotations

import base64
import contextlib
import socket
import struct
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SaltedPasswordCache
from sasl_scram import ScramClient
from sasl_scram import ScramMechanism
from sasl_scram import _crypto
from sasl_scram.kafka import FrameBuffer
from sasl_scram.kafka import decode_response
from sasl_scram.kafka import encode_request
from sasl_scram.store import SQLiteCredentialStore
from tests.support.endpoint_harness import seed_users
from tests.support.serve_process import ServeProcess

SASL_HANDSHAKE, SASL_AUTHENTICATE, METADATA, API_VERSIONS = 17, 36, 3, 18


def seed(db: Path) -> None:
    """Create the store with admin (super user) and alice."""
    db.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    store = SQLiteCredentialStore(db, poll_interval=0)
    try:
        seed_users(store)
    finally:
        store.close()


class Serve(ServeProcess):
    """``kafka-scram serve`` on the SQLite store ``db`` with admin as its super user,
    started on entering a ``with`` block (see :class:`tests.support.serve_process.ServeProcess`)."""

    def __init__(
        self,
        tmp_path: Path,
        db: Path,
        properties: Mapping[str, str] | None = None,
        umask: int | None = None,
        args: Sequence[str] = (),
    ) -> None:
        props = {
            "scram.credential.store.path": str(db),
            "super.users": "User:admin",
            **(properties or {}),
        }
        super().__init__(tmp_path, props, umask=umask, args=args)


def seeded_serve_port(tmp: Path) -> Iterator[int]:
    """A module's shared ``serve`` on a freshly seeded store under ``tmp``: its port."""
    db = tmp / "data" / "creds.db"
    seed(db)
    with Serve(tmp, db) as serve:
        yield serve.port


#: Linux's IP_BIND_ADDRESS_NO_PORT: a bound socket's port is picked at connect,
#: unique per destination, not per address (thousands of logins a second from
#: one address would otherwise run out of ports held in TIME_WAIT).
_BIND_ADDRESS_NO_PORT = getattr(socket, "IP_BIND_ADDRESS_NO_PORT", 24)


def _connect(port: int, timeout: float, source: str | None) -> socket.socket:
    if source is None:
        return socket.create_connection(("127.0.0.1", port), timeout)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.IPPROTO_IP, _BIND_ADDRESS_NO_PORT, 1)
        sock.settimeout(timeout)
        sock.bind((source, 0))
        sock.connect(("127.0.0.1", port))
    except BaseException:
        sock.close()
        raise
    return sock


class Peer(contextlib.AbstractContextManager["Peer"]):
    """One raw connection speaking Kafka's protocol; closed on leaving a ``with`` block."""

    def __init__(self, port: int, timeout: float = 15, source: str | None = None) -> None:
        # ``source``: another loopback address (127.0.0.2) to connect from.
        self.sock = _connect(port, timeout, source)
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

    def __exit__(self, *exc: object) -> None:
        self.close()


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
