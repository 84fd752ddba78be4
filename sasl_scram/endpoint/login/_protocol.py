"""One accepted connection as an ``asyncio.Protocol``: the thin adapter between
the socket and :class:`ServerConnection`.

A protocol (not streams) keeps the per-request cost to a callback: no task and
no timer per read. Only API handlers run as tasks.

Memory per connection is bounded, before and after login, like Kafka's
``SocketServer``, which mutes a channel while a response is in flight:

* one request at a time: while a credential lookup or a handler runs, reading
  pauses;
* while the transport's write buffer is above :data:`WRITE_HIGH_WATER` (asyncio
  calls :meth:`ConnectionProtocol.pause_writing`), reading pauses too, whatever
  the answers are, so a peer that sends and never reads holds at most one read,
  one frame and the buffer's high-water mark.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any
from typing import Protocol
from typing import cast

from sasl_scram._server import CredentialRequest
from sasl_scram._server import Grant
from sasl_scram.audit import AUDIT_LOGGER_NAME
from sasl_scram.audit import audit
from sasl_scram.config import KafkaPrincipal
from sasl_scram.endpoint._config import EndpointConfig
from sasl_scram.endpoint._extension import CloseRequest
from sasl_scram.endpoint._extension import Handler
from sasl_scram.endpoint._extension import RequestContext
from sasl_scram.endpoint._listeners import ListenerAddress
from sasl_scram.endpoint._metrics import AuthMetrics
from sasl_scram.endpoint.login._busy_poll import BusyPoller
from sasl_scram.endpoint.login._connection import ApiCall
from sasl_scram.endpoint.login._connection import Authenticated
from sasl_scram.endpoint.login._connection import Close
from sasl_scram.endpoint.login._connection import ConnectionSettings
from sasl_scram.endpoint.login._connection import CredentialNeeded
from sasl_scram.endpoint.login._connection import Output
from sasl_scram.endpoint.login._connection import Send
from sasl_scram.endpoint.login._connection import ServerConnection
from sasl_scram.endpoint.login._connection import refuse_forwarded_login
from sasl_scram.endpoint.login._deadlines import ConnectionDeadlines
from sasl_scram.endpoint.login._verdicts import VerdictPacer

__all__ = ["ConnectionHost", "ConnectionProtocol", "EdgeSide", "Forwarding"]

log = logging.getLogger("sasl_scram.endpoint")
_audit_log = logging.getLogger(AUDIT_LOGGER_NAME)

#: Reading pauses while this much is waiting to be sent (asyncio's flow control).
WRITE_HIGH_WATER = 256 * 1024
WRITE_LOW_WATER = 64 * 1024
#: Frames this big are buffered, decoded and answered in a worker thread.
LARGE_INPUT = 256 * 1024


def loggable(text: str) -> str:
    """``text`` for a log line: unchanged when printable; else with each line break,
    control or format character (and backslash) escaped as ``repr`` does, so a name a
    peer or an administrator chose cannot end the record and forge the next one, nor
    drive the terminal reading it (docs/security.md)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() and c != "\\" else repr(c)[1:-1] for c in text)


class ConnectionHost(Protocol):
    """What a connection needs from the server that accepted it.

    :class:`ScramEndpoint` implements it; a connection never sees the server
    class itself, so the two modules do not import each other.
    """

    @property
    def config(self) -> EndpointConfig: ...
    @property
    def loop(self) -> asyncio.AbstractEventLoop: ...
    @property
    def settings(self) -> ConnectionSettings: ...
    @property
    def clock_ms(self) -> Callable[[], int]: ...
    @property
    def connections(self) -> dict[ConnectionProtocol, None]: ...
    @property
    def deadlines(self) -> ConnectionDeadlines[ConnectionProtocol] | None: ...
    @property
    def busy_poller(self) -> BusyPoller | None: ...
    @property
    def metrics(self) -> AuthMetrics | None: ...
    @property
    def pacer(self) -> VerdictPacer: ...
    @property
    def forwards(self) -> bool:
        """Whether connections are forwarded to a cluster after login (a front door)."""

    def handler(self, api_key: int) -> Handler | None: ...
    def admit_user(self, user: str, conn_id: str) -> Callable[[], None] | None:
        """``scram.max.connections.per.user``: the release of the place a first
        login of ``user`` takes, or ``None``: refused (said and counted)."""

    def user_refusal(self, user: str) -> str:
        """What a login refused by that cap is told."""

    def lookup_may_block(self, request: CredentialRequest) -> bool: ...
    def grant(self, request: CredentialRequest, conn_id: str) -> Grant | None: ...
    def forward(
        self,
        connection: EdgeSide,
        verdict: Authenticated,
        held: bytes,
        rest: list[Output],
    ) -> Forwarding:
        """Forward ``connection`` from its first login on, whose verdict is held
        (``held``: answers already due; ``rest``: the outputs from the verdict
        on) until the cluster has taken our login for it too."""


class Forwarding(Protocol):
    """A front door's forwarding of one logged-in connection (``_forward.py``'s
    ``ProxyAdapter``): from the held verdict on, the client's bytes go there."""

    def client_data(self, data: bytes) -> None: ...
    def client_writable(self, writable: bool) -> None: ...
    def local_settled(self) -> None: ...
    def close(self) -> None: ...
    def cluster_identity(self) -> tuple[str, str]:
        """Who the cluster sees for this connection, as a login's audit line
        names it (``("clusterPrincipal", "User:svc")``)."""


class ConnectionProtocol(asyncio.Protocol):
    # Slots: one of these is built per connection, and read on every request.
    __slots__ = (
        "_authed",
        "_backlog_scheduled",
        "_closed_event",
        "_closing",
        "_conn",
        "_deadlines",
        "_endpoint",
        "_forward",
        "_forward_paused",
        "_forwards",
        "_hold",
        "_large",
        "_listener",
        "_loop",
        "_lost",
        "_opened",
        "_peername",
        "_poller",
        "_reading_paused",
        "_released",
        "_task",
        "_transport",
        "_user_place",
        "_write_paused",
        "address_place",
        "conn_id",
    )

    def __init__(self, endpoint: ConnectionHost, listener: ListenerAddress, conn_id: str) -> None:
        self._endpoint = endpoint
        self._listener = listener
        self.conn_id = conn_id
        self._conn = ServerConnection(endpoint.settings, endpoint.clock_ms, listener.protocol)
        self._transport: asyncio.Transport | None = None
        # The host's loop, not asyncio.get_running_loop(): that one calls
        # getpid() each time, a system call per connection.
        self._loop = endpoint.loop
        deadlines = endpoint.deadlines
        assert deadlines is not None, "the endpoint is not started"
        self._deadlines = deadlines
        self._poller = endpoint.busy_poller
        # Authenticated once: from then on reads count as activity (idle deadline).
        self._authed = False
        self._opened = 0.0
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._lost = False
        # Why reading is paused: the peer does not read, or the close is delayed.
        self._write_paused = False
        self._hold = False
        # The outputs being run are a verdict released after its hold.
        self._released = False
        self._reading_paused = False
        self._backlog_scheduled = False
        self._large = False  # the request in flight came in a big frame (decoded in a thread)
        self._peername: object = None
        # Created only when someone waits (shutdown): most connections never need one.
        self._closed_event: asyncio.Event | None = None
        self._forward_paused = False  # a front door's forwarding pauses reads
        # A front door: after the first login, the connection is forwarded.
        self._forwards = endpoint.forwards
        self._forward: Forwarding | None = None
        self.address_place: Callable[[], None] | None = None  # see _give_places_back
        self._user_place: Callable[[], None] | None = None

    async def wait_closed(self) -> None:
        """Return once the connection is gone."""
        if self._lost:
            return
        if self._closed_event is None:
            self._closed_event = asyncio.Event()
        await self._closed_event.wait()

    @property
    def busy(self) -> bool:
        return self._task is not None

    @property
    def listener_name(self) -> str:
        return self._listener.name

    @property
    def authenticated_mechanism(self) -> str | None:
        """The SASL mechanism of an authenticated connection (for the metrics' gauges):
        one whose verdict went out, not one held (the budget, a front door waiting
        for the cluster), which the client has not heard and may time out."""
        session = self._conn.session if self._authed and self._conn.authenticated else None
        return session.mechanism.mechanism_name if session is not None else None

    # -- asyncio callbacks ----------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses: a cast, no check.
        self._transport = cast(asyncio.Transport, transport)
        self._transport.set_write_buffer_limits(high=WRITE_HIGH_WATER, low=WRITE_LOW_WATER)
        self._endpoint.connections[self] = None
        # Formatted only when a line names it (a failed login, DEBUG).
        self._peername = transport.get_extra_info("peername")
        if log.isEnabledFor(logging.DEBUG):
            log.debug("[%s] connection from %s", self.conn_id, _peer(self._peername))
        now = self._opened = time.monotonic()
        self._deadlines.connected(self, now)
        if self._poller is not None:
            self._poller.poke(now)

    def data_received(self, data: bytes) -> None:
        # A forwarded connection's reads go to its ForwardedReads instead.
        poller = self._poller
        if self._authed or poller is not None:
            now = time.monotonic()
            if self._authed:
                self._deadlines.touch(self, now)
            if poller is not None:
                poller.poke(now)
        conn = self._conn
        if (
            self._authed
            and conn.authenticated
            and conn.buffered() + len(data) >= LARGE_INPUT
            and conn.completes_frame(len(data))
        ):
            # A big frame (a super user may send up to socket.request.max.bytes)
            # is buffered here as it comes (receive() checks its size first) and
            # decoded in a thread once whole: one hop per frame, not per read.
            self._large = True
            self._task = self._loop.create_task(_receive_in_thread(self, data))
            self._update_reading()
            return
        self._run(self._conn.receive(data))

    def pause_writing(self) -> None:
        self._write_paused = True
        self._update_reading()
        if self._forward is not None:
            self._forward.client_writable(False)

    def resume_writing(self) -> None:
        self._write_paused = False
        self._update_reading()
        self._continue_backlog()
        if self._forward is not None:
            self._forward.client_writable(True)

    def _continue_backlog(self) -> None:
        """Answer frames left buffered by a drain that reached its output budget."""
        conn = self._conn
        if conn.backlog and not (self._write_paused or self._task or self._backlog_scheduled):
            self._backlog_scheduled = True
            self._loop.call_soon(self._drain_backlog)

    def _drain_backlog(self) -> None:
        self._backlog_scheduled = False
        transport = self._transport
        if transport is None or self._closing or self._write_paused or self._task is not None:
            return
        self._run(self._conn.drain())

    def _update_reading(self) -> None:
        """Read only when nothing is in flight and the peer keeps up with our answers."""
        transport = self._transport
        if transport is None or self._closing:
            return
        pause = self._write_paused or self._hold or self._forward_paused
        pause = pause or self._task is not None or self._conn.backlog
        if pause != self._reading_paused:
            self._reading_paused = pause
            if pause:
                transport.pause_reading()
            else:
                transport.resume_reading()

    def eof_received(self) -> bool | None:
        self.close("peer closed")
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._deadlines.remove(self)
        if self._task is not None:
            self._task.cancel()
        self._endpoint.connections.pop(self, None)
        self._lost = True
        _give_places_back(self)
        if self._forward is not None:
            self._forward.close()
        if self._closed_event is not None:
            self._closed_event.set()
        if log.isEnabledFor(logging.DEBUG):  # one call, not log.debug's two
            log.debug("[%s] closed", self.conn_id)

    # -- deadlines (called by ConnectionDeadlines) -----------------------------------
    def authentication_timed_out(self) -> None:
        # Not the state machine's state: a success held past the failure budget
        # has not reached the client, and times out as a held failure does.
        if not self._authed:
            log.info("[%s] authentication timed out", self.conn_id)
            self.close("authentication timeout")

    def idle_expired(self) -> bool:
        """Close if quiet for ``connections.max.idle.ms``; False while a request runs."""
        if self.busy:
            return False
        log.info("[%s] closing idle connection", self.conn_id)
        self.close("idle")
        return True

    # -- the state machine's outputs -------------------------------------------------
    def close(self, reason: str) -> None:
        if self._transport is not None and not self._closing:
            self._closing = True
            self._transport.close()

    def _run(self, outputs: list[Output]) -> None:
        transport = self._transport
        assert transport is not None
        if len(outputs) == 1 and type(outputs[0]) is Send:
            # The usual answer: one response to one request.
            if not self._closing:
                transport.write(outputs[0].data)
                if self._conn.backlog or self._reading_paused:
                    self._update_reading()
                    self._continue_backlog()
            return
        # Responses to frames that arrived together leave in one write: a
        # pipelining client then wakes once, not once per response.
        self._run_all(transport, outputs, [])

    def _run_all(
        self, transport: asyncio.Transport, outputs: list[Output], sends: list[bytes]
    ) -> None:
        """Carry out ``outputs``; ``sends``: answers already due, written first."""
        try:
            self._dispatch(transport, outputs, sends)
        finally:
            if not self._closing:
                _flush(transport, sends)
                if self._conn.backlog or self._reading_paused:
                    # Frames left over wait for the peer to read what we wrote.
                    self._update_reading()
                    self._continue_backlog()

    def _dispatch(
        self, transport: asyncio.Transport, outputs: list[Output], sends: list[bytes]
    ) -> None:
        # ``outputs`` is ours: a credential's answer is appended to it as we go.
        i = 0
        while i < len(outputs):
            item = outputs[i]
            i += 1
            if type(item) is Send:
                sends.append(item.data)
            elif isinstance(item, CredentialNeeded):
                if self._endpoint.lookup_may_block(item.request):
                    # A lazy cache miss reads ZooKeeper: never on the event loop.
                    self._task = self._loop.create_task(_grant_in_thread(self, item))
                    self._update_reading()
                    return
                grant = self._endpoint.grant(item.request, self.conn_id)
                outputs.extend(self._conn.provide_credential(grant))
            elif isinstance(item, ApiCall):
                # Reading pauses until the handler answers: responses keep order.
                self._task = self._loop.create_task(_call(self, item))
                self._update_reading()
                return
            elif isinstance(item, Authenticated):
                if self._user_place is None and not _admit_user(self, transport, item, sends):
                    return
                if not self._released and self._hold_verdict(item, outputs[i - 1 :], sends):
                    return
                # The client waits for server-final: send it before the bookkeeping.
                _flush(transport, sends)
                self._authenticated(item)
            elif isinstance(item, Close):
                failed = item.after_failed_authentication
                if failed and not self._released and self._hold_verdict(item, [item], sends):
                    return
                _log_close(self.conn_id, _peer(self._peername), self._listener.name, item)
                # What was answered before the close still goes out (close flushes).
                _flush(transport, sends)
                _count_failure(self._endpoint.metrics, self._listener.name, item)
                if self._released and failed:
                    # Out with the response, the close would cost kafka-python the error.
                    self._hold = True
                    self._loop.call_later(self._endpoint.pacer.failed_delay_s, self.close, "")
                else:
                    self.close(item.reason)
                return

    def _hold_verdict(
        self, verdict: Authenticated | Close, rest: list[Output], sends: list[bytes]
    ) -> bool:
        """Hold a verdict as long as ``_verdicts.py`` says; True when held: ``sends``
        (answered, not written yet) and ``rest`` (the verdict on) go out later.

        A front door holds a first login's success until the cluster has taken
        our login for it too: a refusal there is then a failed login, not a hang.
        """
        if self._forwards and self._forward is None and type(verdict) is Authenticated:
            held = b"".join(sends)
            sends.clear()
            self._forward = self._endpoint.forward(EdgeSide(self), verdict, held, rest)
            _forward_reads(self, self._forward)
            return True
        delay = self._endpoint.pacer.delay(self._listener.name, self._peername, verdict)
        if delay <= 0:
            return False
        self._hold = True
        self._update_reading()
        self._loop.call_later(delay, self._release_verdict, b"".join(sends), rest)
        sends.clear()
        return True

    def _release_verdict(self, held: bytes, rest: list[Output]) -> None:
        self._hold = False
        transport = self._transport
        if transport is None or self._closing or transport.is_closing():
            return
        self._released = True
        try:
            # Not written ahead of ``rest``: a failed login's line is logged
            # before its response leaves, so whoever hears it finds the line.
            self._run_all(transport, rest, [held] if held else [])
        finally:
            self._released = False
        if self._forward is not None:
            self._forward.local_settled()

    def _authenticated(self, item: Authenticated) -> None:
        # Here the verdict is final: it is being sent (a front door's first
        # login once the cluster took our login for it too).
        _record_login(self, item)
        now = time.monotonic()
        if not item.reauthentication:
            self._authed = True
            self._deadlines.authenticated(self, now)
        if (metrics := self._endpoint.metrics) is not None:
            _count_success(metrics, self._listener.name, item, self._opened, now)

    def _resume(self, outputs: list[Output]) -> None:
        """After work off the loop: go on, unless the connection went away meanwhile.

        ``_run`` resumes reading afterwards when nothing else holds it paused.
        """
        if self._transport is None or self._transport.is_closing():
            return
        self._run(outputs)
        if self._forward is not None:
            self._forward.local_settled()


# The connection caps: the places a connection holds in their counts.
def _admit_user(
    p: ConnectionProtocol, transport: asyncio.Transport, verdict: Authenticated, sends: list[bytes]
) -> bool:
    """``scram.max.connections.per.user`` at a first login: True when the user has
    room (a re-authentication keeps its place). Else the login fails with the cap's
    reason in place of its success (the last answer due), before any cluster
    connection is opened for it, and the connection closes after
    ``connection.failed.authentication.delay.ms``, so that the client reads why.
    The host logs it, at most once a minute per user.

    The refusal is a right password's verdict: past the failure budget it is
    held for its turn like any other (``_verdicts.py``), or a guesser would hear
    the right password at once while every wrong one waits."""
    if verdict.reauthentication:
        return True
    user = verdict.session.authorization_id
    place = p._endpoint.admit_user(user, p.conn_id)
    if place is not None:
        p._user_place = place
        return True
    if sends:
        sends.pop()  # the success (server-final) goes no further
    refusal = [
        out.data
        for out in refuse_forwarded_login(p._conn, p._endpoint.user_refusal(user))
        if type(out) is Send
    ]
    p._hold = True
    p._update_reading()
    delay = p._endpoint.pacer.delay(p._listener.name, p._peername, verdict)
    if delay > 0:
        _flush(transport, sends)  # the answers due before the verdict
        p._loop.call_later(delay, _refuse_user, p, refusal)
    else:
        sends.extend(refusal)
        _refuse_user(p, sends)
    return False


def _refuse_user(p: ConnectionProtocol, refusal: list[bytes]) -> None:
    """Send a login's refusal by the per-user cap, and close after the KIP-306 delay."""
    transport = p._transport
    if transport is None or transport.is_closing():
        return
    _flush(transport, refusal)
    p._loop.call_later(p._endpoint.pacer.failed_delay_s, p.close, "")


def _give_places_back(p: ConnectionProtocol) -> None:
    """A connection lost gives back its address's place (``max.connections.per.ip``,
    set by the acceptor as it made the protocol) and its user's."""
    if p.address_place is not None:
        p.address_place()
    if p._user_place is not None:
        p._user_place()


# A connection's work off the loop, one piece at a time (its ``_task``): each
# ends by resuming the connection with the state machine's outputs.
async def _receive_in_thread(protocol: ConnectionProtocol, data: bytes) -> None:
    """Decode a big frame (a super user's, up to ``socket.request.max.bytes``)."""
    try:
        outputs = await asyncio.to_thread(protocol._conn.receive, data)
    finally:
        protocol._task = None
    protocol._resume(outputs)


async def _grant_in_thread(protocol: ConnectionProtocol, item: CredentialNeeded) -> None:
    """A credential look-up that may block (a lazy cache miss reads ZooKeeper)."""
    try:
        grant = await protocol._loop.run_in_executor(
            None, protocol._endpoint.grant, item.request, protocol.conn_id
        )
        outputs = protocol._conn.provide_credential(grant)
    finally:
        protocol._task = None
    protocol._resume(outputs)


async def _call(protocol: ConnectionProtocol, call: ApiCall) -> None:
    """An API handler's answer; reading stays paused meanwhile, so responses keep order."""
    p = protocol
    try:
        body = await _handle(p._endpoint, p._listener, p.conn_id, call, p._peername)
        if isinstance(body, str):
            outputs = protocol._conn.fail_call(body)
        else:
            # The answer to a big request is big too: encode it in a thread.
            respond = protocol._conn.respond
            outputs = await asyncio.to_thread(respond, body) if protocol._large else respond(body)
    finally:
        protocol._task = None
        protocol._large = False  # whatever happened, the next answer is judged afresh
    if protocol._transport is not None and not protocol._transport.is_closing():
        protocol._deadlines.touch(protocol, time.monotonic())
    protocol._resume(outputs)


class ForwardedReads:
    """The client transport's protocol once its connection is forwarded (from
    the held verdict of its first login on).

    Every read then goes to the forwarding and counts as activity (the idle
    deadline); the other callbacks go to the connection's
    :class:`ConnectionProtocol`, which still owns its life. A compiled class
    with the forwarding's ``client_data`` bound once: the transport's call per
    read reaches it with no attribute lookup on an asyncio protocol class and
    no method lookup through the ``Forwarding`` protocol type.
    """

    __slots__ = ("_deadlines", "_deliver", "_protocol")

    def __init__(self, protocol: ConnectionProtocol, deliver: Callable[[bytes], None]) -> None:
        self._protocol = protocol
        self._deadlines = protocol._deadlines
        self._deliver = deliver

    def data_received(self, data: bytes) -> None:
        self._deadlines.touch(self._protocol, time.monotonic())
        self._deliver(data)

    def eof_received(self) -> bool | None:
        return self._protocol.eof_received()

    def pause_writing(self) -> None:
        self._protocol.pause_writing()

    def resume_writing(self) -> None:
        self._protocol.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._protocol.connection_lost(exc)


def _forward_reads(protocol: ConnectionProtocol, forward: Forwarding) -> None:
    """From now on, the client's reads go to ``forward`` (:class:`ForwardedReads`)."""
    transport = protocol._transport
    assert transport is not None, "a verdict is only held on an open connection"
    # Transports call a protocol's methods by name; a compiled class cannot
    # derive from asyncio's Python ones.
    transport.set_protocol(
        cast(asyncio.BaseProtocol, ForwardedReads(protocol, forward.client_data))
    )


class EdgeSide:
    """What a front door's forwarding reaches of a connection at the edge: its
    transport, its login state machine, the verdict it holds, and the edge's
    own answering of the requests taken out of the forwarded stream.

    A view of one :class:`ConnectionProtocol`, so the forwarding side sees no
    more of it than this.
    """

    __slots__ = ("_protocol", "conn_id")

    def __init__(self, protocol: ConnectionProtocol) -> None:
        self._protocol = protocol
        self.conn_id = protocol.conn_id

    @property
    def client_transport(self) -> asyncio.Transport:
        transport = self._protocol._transport
        assert transport is not None
        return transport

    @property
    def server_connection(self) -> ServerConnection:
        return self._protocol._conn

    @property
    def client_host(self) -> str:
        """The client's address (the host Kafka's authorizer matches ACLs against)."""
        peer = self._protocol._peername
        return str(peer[0]) if isinstance(peer, tuple) and peer else ""

    @property
    def local_port(self) -> int:
        """The port the connection was accepted on (a node port names its broker)."""
        port: int = self.client_transport.get_extra_info("sockname")[1]
        return port

    def verdict_delay(self, verdict: Authenticated) -> float:
        """Seconds to hold ``verdict`` (KIP-306's delay, the failure budget)."""
        p = self._protocol
        return p._endpoint.pacer.delay(p._listener.name, p._peername, verdict)

    def release_verdict(self, held: bytes, rest: list[Output]) -> None:
        """Let the held verdict go out, once the cluster has answered."""
        self._protocol._release_verdict(held, rest)

    def set_forward_paused(self, paused: bool) -> None:
        p = self._protocol
        p._forward_paused = paused
        p._update_reading()

    def run_local(self, frame: bytes) -> None:
        """A request the edge answers itself, taken out of the forwarded stream."""
        p = self._protocol
        if p._transport is not None and not p._closing:
            p._run(p._conn.receive(frame))

    def busy_locally(self) -> bool:
        """Whether an answer of the edge is still to come (a handler, a
        credential lookup, a held verdict)."""
        p = self._protocol
        return p._task is not None or p._hold or p._conn.waiting

    def close(self, reason: str) -> None:
        self._protocol.close(reason)


def _log_close(conn_id: str, peer: str, listener: str, item: Close) -> None:
    if item.server_fault:
        log.error("[%s] closing: %s", conn_id, loggable(item.reason))
        return
    if not item.after_failed_authentication:
        log.debug("[%s] closing: %s", conn_id, loggable(item.reason))
        return
    # Like SaslServerAuthenticator: "Failed authentication with /host (...)" at INFO;
    # the claimed name (cut to 200 characters: a prober's may fill a frame), never a
    # secret. Kafka's reasons may name principals (KIP-368), so they are escaped too.
    log.info(
        "[%s] Failed authentication with %s (listener %s, mechanism %s, user %.200r): %s",
        conn_id,
        peer,
        listener,
        item.mechanism or "?",
        item.username,
        loggable(item.reason),
    )


def _count_failure(metrics: AuthMetrics | None, listener: str, item: Close) -> None:
    # Kafka's failed-authentication-total counts the authenticator's verdicts only.
    if item.after_failed_authentication and not item.cluster_refused and metrics is not None:
        metrics.failed(listener, item.mechanism or "", item.reauthentication)


def _count_success(
    metrics: AuthMetrics, listener: str, item: Authenticated, opened: float, now: float
) -> None:
    began = item.reauth_began if item.reauthentication else opened
    mechanism = item.session.mechanism.mechanism_name
    metrics.succeeded(
        listener, mechanism, item.reauthentication, item.client_supports_reauth, now - began
    )


def _log_login(conn_id: str, item: Authenticated) -> None:
    s = item.session
    log.debug(
        "[%s] %sauthenticated User:%s with %s%s",
        conn_id,
        "re-" if item.reauthentication else "",
        loggable(s.authorization_id),
        s.mechanism.mechanism_name,
        " (delegation token)" if s.token_authenticated else "",
    )


def _record_login(protocol: ConnectionProtocol, item: Authenticated) -> None:
    """A login's log line (at DEBUG, as Kafka logs them: at INFO a line costs
    more than the exchange) and its audit line (at INFO, naming who the
    cluster sees at a front door)."""
    if log.isEnabledFor(logging.DEBUG):
        _log_login(protocol.conn_id, item)
    if _audit_log.isEnabledFor(logging.INFO):
        _audit_login(protocol, item)


def _audit_login(protocol: ConnectionProtocol, item: Authenticated) -> None:
    """The audit trail's line of a login or KIP-368 re-authentication."""
    s = item.session
    peer = protocol._peername
    host, port = (str(peer[0]), peer[1]) if isinstance(peer, tuple) and peer else ("", "?")
    details: list[tuple[str, object]] = [
        ("mechanism", s.mechanism.mechanism_name),
        ("reauthentication", "true" if item.reauthentication else "false"),
        ("listener", protocol._listener.name),
        ("connectionId", protocol.conn_id),
        ("peerPort", port),
    ]
    if protocol._forward is not None:
        details.append(protocol._forward.cluster_identity())
    audit(
        KafkaPrincipal.user(s.authorization_id),
        True,
        "Authenticate",
        host,
        # A token's id names it, never its HMAC (the password of its login).
        ("DelegationToken" if s.token_authenticated else "User", s.username),
        "SaslAuthenticate",
        details,
    )


def _peer(peername: object) -> str:
    """The peer as Kafka logs it, /host, with the port to tell connections apart."""
    if isinstance(peername, tuple) and len(peername) >= 2:
        return f"/{peername[0]}:{peername[1]}"
    return "?"


async def _handle(
    host: ConnectionHost,
    listener: ListenerAddress,
    conn_id: str,
    call: ApiCall,
    peername: object = None,
) -> dict[str, Any] | str:
    """The handler's response body for an authenticated request, or why there is
    none (the API is not served, or the handler failed): the connection then
    closes, like Kafka."""
    handler = host.handler(call.header.api_key)
    if handler is None:
        return f"API key {call.header.api_key} is not served here"
    principal = KafkaPrincipal.user(call.session.authorization_id)
    ctx = RequestContext(
        principal=principal,
        session=call.session,
        security_protocol=listener.protocol,
        listener_name=listener.name,
        # Kafka's authorizer compares type and name; a token session acts as its
        # owner. Decided at login, with the request caps it set.
        super_user=call.super_user,
        client_id=call.header.client_id,
        connection_id=conn_id,
        # The peer's address without its port, as Kafka's authorizer log has it.
        client_host=str(peername[0]) if isinstance(peername, tuple) and peername else "",
    )
    try:
        body: dict[str, Any] = await handler(ctx, call.header.api_version, call.body)
    except CloseRequest as exc:
        return str(exc)
    except Exception:
        log.exception("[%s] handler for API key %s failed", conn_id, call.header.api_key)
        return "handler failed"
    return body


def _flush(transport: asyncio.Transport, sends: list[bytes]) -> None:
    """Write the answers gathered so far, as one write."""
    if sends:
        transport.write(sends[0] if len(sends) == 1 else b"".join(sends))
        sends.clear()
