"""Each listener's accept loop: its sockets, and what happens when descriptors run out.

Neither event loop's own server survives running out of file descriptors:
asyncio's logs an error with a traceback at every failure and stops accepting
for a second each time; uvloop's (libuv's) accepts and closes every pending
connection to free one descriptor, then closes the listener itself, silently.
So the endpoint accepts itself, on either loop: a failed ``accept()`` for want of
descriptors (EMFILE, ENFILE, ENOBUFS, ENOMEM) pauses the listener and tries again
every :data:`RETRY_SECONDS`, leaving the waiting connections in the kernel's
queue, and says so once per :data:`LOG_INTERVAL`, with the limit and its fix.
"""

from __future__ import annotations

import _socket
import asyncio
import errno
import functools
import logging
import resource
import socket
import ssl
import time
from collections.abc import Callable
from collections.abc import Coroutine
from typing import Any

__all__ = [
    "DESCRIPTOR_MARGIN",
    "LOG_INTERVAL",
    "RETRY_SECONDS",
    "Acceptor",
    "listener_options",
    "warn_low_descriptor_limit",
]

log = logging.getLogger("sasl_scram.endpoint")

#: The failures that mean "no descriptor or buffer now", not "this connection".
_SHORTAGE = frozenset((errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM))
#: How soon a paused listener tries again: descriptors free up as connections close.
RETRY_SECONDS = 0.05
#: The shortage is logged at most once per this many seconds (each accept fails).
LOG_INTERVAL = 60.0
#: Descriptors a process holds besides its connections: listeners, the store's
#: files or ZooKeeper session, the metrics listener, logs, pipes (a margin).
DESCRIPTOR_MARGIN = 64
#: Connections accepted per wake-up, as asyncio's own loop takes at most its backlog.
_BATCH = 128


class _Accepted(socket.socket):
    """An accepted connection whose ``family`` and ``type`` are the plain integers.

    ``connect_accepted_socket`` reads them three times per connection (uvloop's
    checks of the family and the stream type), and :class:`socket.socket` turns
    each into an :class:`enum.IntEnum` member in Python, a few microseconds of
    each login's CPU at concurrency 1. The values compare equal either way.
    """

    __slots__ = ()
    family = property(_socket.socket.family.__get__)
    type = property(_socket.socket.type.__get__)


class _Connecting:
    """``connect_accepted_socket``'s coroutine, stepped by hand as a Task would.

    A Task per accepted connection cost a quarter of the CPU a Java client's whole
    login took at concurrency 1: its creation, a context copy, three more loop
    callbacks and its done callback. Stepped here, the transport and protocol are
    made within the accept callback; what is left waits on the loop's own future
    (the call of ``connection_made``, or a TLS handshake).
    """

    __slots__ = ("_acceptor", "_conn", "_coro", "_release")

    def __init__(
        self, acceptor: Acceptor, conn: socket.socket, release: Callable[[], None] | None = None
    ) -> None:
        self._acceptor = acceptor
        self._conn = conn
        # The place its address holds (max.connections.per.ip): the protocol gives
        # it back when it is lost; here, if the connection fails before that.
        self._release = release
        factory = (
            acceptor.factory if release is None else functools.partial(acceptor.factory, release)
        )
        self._coro: Coroutine[Any, Any, object] = acceptor.loop.connect_accepted_socket(
            factory, conn, ssl=acceptor.ssl_context
        )

    def step(self, _: object = None) -> None:
        """Run the coroutine to its next wait (a future, or ``None``: one loop pass)."""
        try:
            waiting = self._coro.send(None)
        except StopIteration:
            self._acceptor.connecting.discard(self)
            return
        except (Exception, asyncio.CancelledError) as exc:  # a TLS handshake that failed
            self._acceptor.connecting.discard(self)
            log.debug("connection from an accepted socket failed: %s", exc)
            self._conn.close()
            if self._release is not None:
                self._release()
            return
        self._acceptor.connecting.add(self)
        if waiting is None:
            self._acceptor.loop.call_soon(self.step)
        else:
            waiting.add_done_callback(self.step)

    def cancel(self) -> None:
        """Give up (the listener closes): the coroutine closes its transport, which
        owns the descriptor from then on."""
        self._coro.close()
        if self._release is not None:
            self._release()


def listener_options(sock: socket.socket, family: int) -> None:
    """What asyncio's ``create_server`` sets on a listening socket."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if family == socket.AF_INET6:  # as asyncio's create_server does
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)


def _listen(host: str | None, port: int, backlog: int, reuse_port: bool) -> list[socket.socket]:
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        ):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            listener_options(sock, family)
            if reuse_port:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind(address)
            sock.listen(backlog)
            sock.setblocking(False)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


class Acceptor:
    """One listener's sockets, accepting on ``loop`` into ``factory``'s protocols.

    With ``admit`` (the per-address caps), each connection's address is admitted
    first: a connection refused is closed at once, as Kafka's ``Acceptor``
    closes one past ``max.connections.per.ip``; one admitted gets a protocol from
    ``factory(release)``, ``release`` giving its address's place back.

    Raises (constructor):
        OSError: an address cannot be bound (in use, not on this host).
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        factory: Callable[..., asyncio.Protocol],
        address: tuple[str | None, int],
        *,
        name: str,
        backlog: int,
        ssl_context: ssl.SSLContext | None = None,
        reuse_port: bool = False,
        has_room: Callable[[], bool] = lambda: True,
        clock: Callable[[], float] = time.monotonic,
        admit: Callable[[str], Callable[[], None] | None] | None = None,
    ) -> None:
        self.loop = loop
        self.factory = factory
        self.ssl_context = ssl_context
        self.name = name
        self.sockets = _listen(address[0], address[1], backlog, reuse_port)
        self.clock = clock
        #: False at ``max.connections``: new connections wait in the listen queue.
        self.has_room = has_room
        #: ``max.connections.per.ip``: the address's place, or ``None`` (refused).
        self.admit = admit
        self._paused = False
        self._closed = False
        self._logged_at: float | None = None
        self._failures = 0
        #: Connections accepted whose protocol is not made yet (a TLS handshake).
        self.connecting: set[_Connecting] = set()
        self._watch()

    @property
    def pending(self) -> int:
        """Connections accepted whose protocol is not made yet (a TLS handshake)."""
        return len(self.connecting)

    def _watch(self) -> None:
        for sock in self.sockets:
            # The listener's kind as integers, read once: socket.accept() would
            # read them as enums (Python code) for every connection.
            kind = (int(sock.family), int(sock.type), sock.proto)
            self.loop.add_reader(sock.fileno(), self._accept, sock, kind)

    def _accept(self, sock: socket.socket, kind: tuple[int, int, int]) -> None:
        for _ in range(_BATCH):
            if not self.has_room():
                self._pause()
                return
            try:
                # The C half of socket.accept(); no setblocking(False) either:
                # libuv's uv_tcp_open and asyncio's transport both set O_NONBLOCK.
                fd, peer = sock._accept()  # type: ignore[attr-defined]
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue  # the peer gave up while it waited in the queue
            except OSError as exc:
                if exc.errno not in _SHORTAGE:
                    log.warning("accept() failed: %s", exc)
                    return
                self._short_of_descriptors(exc)
                return
            if self.admit is None:
                _Connecting(self, _Accepted(*kind, fileno=fd)).step()
                continue
            release = self.admit(peer[0])
            if release is None:
                # Kafka's Acceptor: TooManyConnectionsException, the channel closed.
                socket.close(fd)
                continue
            _Connecting(self, _Accepted(*kind, fileno=fd), release).step()

    def _short_of_descriptors(self, exc: OSError) -> None:
        """Pause (the connections wait in the kernel's queue), retry soon, say it once
        per :data:`LOG_INTERVAL`."""
        self._failures += 1
        now = self.clock()
        if self._logged_at is None or now - self._logged_at >= LOG_INTERVAL:
            soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
            log.error(
                "Cannot accept connections on %s: %s (%d failed accepts since the last "
                "message); this process may open %d files (RLIMIT_NOFILE): raise it with "
                "ulimit -n, or LimitNOFILE= in a systemd unit; connections wait in the "
                "listen queue and are accepted as descriptors free up (said at most once "
                "every %d s)",
                self.name, exc.strerror or exc, self._failures,
                soft, LOG_INTERVAL,
            )  # fmt: skip
            self._logged_at = now
            self._failures = 0
        self._pause()

    def _pause(self) -> None:
        """Accept nothing for :data:`RETRY_SECONDS`."""
        if not self._paused:
            self._paused = True
            for sock in self.sockets:
                self.loop.remove_reader(sock.fileno())
            self.loop.call_later(RETRY_SECONDS, self._resume)

    def _resume(self) -> None:
        if self._closed:
            return
        self._paused = False
        self._watch()

    def close(self) -> None:
        """Stop accepting and close the listening sockets (not the connections)."""
        if self._closed:
            return
        self._closed = True
        for sock in self.sockets:
            if not self._paused:
                self.loop.remove_reader(sock.fileno())
            sock.close()
        for connecting in list(self.connecting):
            connecting.cancel()
        self.connecting.clear()


def warn_low_descriptor_limit(max_connections: int, unlimited: int) -> None:
    """A WARNING at start when ``RLIMIT_NOFILE`` (soft) is below what
    ``max.connections`` implies for one process, plus :data:`DESCRIPTOR_MARGIN`;
    nothing when ``max.connections`` is ``unlimited`` (Kafka's default)."""
    if max_connections >= unlimited:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = max_connections + DESCRIPTOR_MARGIN
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return
    log.warning(
        "This process may open %d files (RLIMIT_NOFILE; hard limit %s), but "
        "max.connections=%d needs about %d in each serve process (%d more for listeners, "
        "the store and logs): raise it with ulimit -n, or LimitNOFILE= in a systemd "
        "unit, or lower max.connections",
        soft, "unlimited" if hard == resource.RLIM_INFINITY else hard, max_connections,
        needed, DESCRIPTOR_MARGIN,
    )  # fmt: skip
