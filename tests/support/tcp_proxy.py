"""A small threaded TCP proxy on loopback that can partition and heal.

Put it between a client and a server (ZooKeeper, or a Kafka endpoint) to
simulate a network partition without touching either process::

    with TcpProxy("127.0.0.1", zk.port) as proxy:
        client = KazooClient(hosts=proxy.address)
        proxy.partition("refuse")   # reset every connection, refuse new ones
        proxy.heal()

Partition modes:

* ``"refuse"``: open connections are reset (RST) and new ones are accepted
  and reset at once, as when the far side's host is up but its port is not.
* ``"drop"``: a black hole. Open connections stay open but every byte in
  either direction is discarded; new connections are accepted and never
  forwarded. The client only notices through its own timeouts. ``heal()``
  resets them; ``resume()`` leaves them hanging and forwards new ones.

``accepted`` counts the connections the proxy accepted (including those
refused or black-holed during a partition), which shows a client's
reconnect rate. With ``record=True``, ``recorded`` keeps what each forwarded
connection's client sent, in the order the connections were accepted.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from typing import Literal

__all__ = ["PartitionMode", "TcpProxy"]

PartitionMode = Literal["refuse", "drop"]
_CHUNK = 65536
#: A relayed connection: the client's socket, then the upstream's.
Pair = tuple[socket.socket, socket.socket]
#: Where a direction's bytes are recorded, if they are.
Copy = bytearray | None


def _reset_pairs(pairs: list[tuple[socket.socket, socket.socket | None]]) -> None:
    for down, up in pairs:
        _reset(down)
        if up is not None:
            _reset(up)


def _reset(sock: socket.socket) -> None:
    """Close with RST (SO_LINGER 0) rather than an orderly FIN."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    # Closing does not wake a thread blocked in recv() on the socket; SHUT_RD does.
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RD)
    with contextlib.suppress(OSError):
        sock.close()


class TcpProxy:
    """Forward ``127.0.0.1:<port>`` to ``(target_host, target_port)``.

    Args:
        target_host: Where connections go.
        target_port: The target's port.
        port: The proxy's listening port; a free one by default. It stays the
            same for the proxy's life, so clients can reconnect after a heal.
        record: Keep the bytes clients send (``recorded``), to inspect a
            client's requests on the wire.
    """

    def __init__(
        self, target_host: str, target_port: int, port: int = 0, record: bool = False
    ) -> None:
        self.target = (target_host, target_port)
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", port))
        self._listener.listen(128)
        self.port: int = self._listener.getsockname()[1]
        self.accepted = 0
        self.record = record
        self.recorded: list[bytearray] = []
        self._mode: PartitionMode | None = None
        self._lock = threading.Lock()
        self._pairs: set[tuple[socket.socket, socket.socket | None]] = set()
        self._closed = False
        self._thread = threading.Thread(target=self._accept_loop, daemon=True, name="tcp-proxy")
        self._thread.start()

    @property
    def address(self) -> str:
        """``127.0.0.1:<port>``, for a connect string or a bootstrap list."""
        return f"127.0.0.1:{self.port}"

    @property
    def partitioned(self) -> PartitionMode | None:
        return self._mode

    def partition(self, mode: PartitionMode = "refuse") -> None:
        """Cut the link: ``refuse`` resets every connection, ``drop`` black-holes them."""
        with self._lock:
            self._mode = mode
            pairs = list(self._pairs) if mode == "refuse" else []
            if mode == "refuse":
                self._pairs.clear()
        _reset_pairs(pairs)

    def heal(self) -> None:
        """Restore the link. Black-holed connections are reset (their streams lost
        bytes and cannot resume); clients reconnect through the proxy."""
        with self._lock:
            mode, self._mode = self._mode, None
            pairs = list(self._pairs) if mode == "drop" else []
            if mode == "drop":
                self._pairs.clear()
        _reset_pairs(pairs)

    def resume(self) -> None:
        """Forward new connections again, but leave the black-holed ones in the hole:
        a server that accepted them while it started and never answers them
        (ZooKeeper 3.8 can, for a connection that arrives while it starts)."""
        with self._lock:
            self._mode = None

    def _accept_loop(self) -> None:
        while not self._closed:
            try:
                down, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self.accepted += 1
                mode = self._mode
            if mode == "refuse":
                _reset(down)
                continue
            if mode == "drop":
                with self._lock:
                    self._pairs.add((down, None))
                threading.Thread(target=self._discard, args=(down,), daemon=True).start()
                continue
            try:
                up = socket.create_connection(self.target, timeout=5)
            except OSError:
                _reset(down)  # the target is down: the client sees a refusal
                continue
            up.settimeout(None)
            with self._lock:
                self._pairs.add((down, up))
                sent = bytearray()
                if self.record:
                    self.recorded.append(sent)
            for src, dst, copy in ((down, up, sent if self.record else None), (up, down, None)):
                threading.Thread(
                    target=self._pipe, args=(src, dst, (down, up), copy), daemon=True
                ).start()

    def _discard(self, sock: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while sock.recv(_CHUNK):
                pass

    def _pipe(self, src: socket.socket, dst: socket.socket, pair: Pair, copy: Copy) -> None:
        try:
            while data := src.recv(_CHUNK):
                if self._mode == "drop":
                    continue  # the black hole swallows it
                if copy is not None:
                    copy += data
                dst.sendall(data)
        except OSError:
            pass
        finally:
            with self._lock:
                self._pairs.discard(pair)
            for sock in pair:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                with contextlib.suppress(OSError):
                    sock.close()

    def close(self) -> None:
        """Stop listening and close every connection."""
        self._closed = True
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._listener.close()
        with self._lock:
            pairs = list(self._pairs)
            self._pairs.clear()
        _reset_pairs(pairs)
        self._thread.join(5)

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
