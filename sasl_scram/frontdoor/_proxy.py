"""One forwarded connection's life after its login at the edge, sans-IO.

:class:`ProxyConnection` is driven as the login's ``ServerConnection`` is:
fed the client's bytes, the cluster's bytes and clock ticks, it returns
actions for its adapter to carry out (bytes for the client or the cluster, a
request for the edge to answer, a re-login at the cluster, reading paused or
resumed, a timer, a close). Its :class:`Phase` says where it stands:

``OPENING``
    The edge accepted the login; the upstream connection is being opened and
    logged in. What the client sends is held (reading pauses at
    ``pause_held``). The client hears its verdict once the cluster has taken
    our login, or earlier when the cluster is slow to (:meth:`verdict_sent`):
    its requests then wait here.
``FORWARDING``
    Requests go up, responses come down, each through the filter chain.
``ANSWERING_LOCALLY``
    A request the edge answers itself (re-authentication, the token RPCs,
    KIP-554) waits until every request before it has been answered, then is
    handed to the edge; nothing after it is read until the edge is done.
    Kafka answers one connection's requests in order, and so do we.
``REAUTH_DUE``
    Our session at the cluster nears its end (KIP-368,
    ``connections.max.reauth.ms``): nothing new is forwarded; once nothing is
    in flight, the connection logs in again there. A request for the edge
    read meanwhile is answered first; the re-login stays due.
``RELOGGING``
    The re-login at the cluster is under way; the client's bytes are held,
    and the cluster is read even while the client does not read (its answer
    is the re-login's, never the client's).
``CLOSED``
    Nothing more happens.

The forwarding fast path (:meth:`ProxyConnection.forward_client`,
:meth:`~ProxyConnection.forward_cluster`) delivers the same actions with less:
in ``FORWARDING``, an event whose only effect is chunks for the other side
returns those chunks (the splitter's list) and builds no action nor list of
actions; any other event returns ``None`` and leaves its actions, in the
general path's order, to :meth:`~ProxyConnection.take_actions`. Both paths run
the same transitions from the same helpers; the state stays here.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from collections.abc import Mapping
from typing import Final
from typing import cast

from sasl_scram.frontdoor._bounds import ProxyBounds
from sasl_scram.frontdoor._chain import BoundChain
from sasl_scram.frontdoor._errors import FrontDoorError
from sasl_scram.frontdoor._inflight import InFlightQueue
from sasl_scram.frontdoor._splitter import Chunk
from sasl_scram.frontdoor._splitter import LocalRequest
from sasl_scram.frontdoor._splitter import Observer
from sasl_scram.frontdoor._splitter import RequestSplitter
from sasl_scram.frontdoor._splitter import ResponseSplitter

__all__ = [
    "RELOGIN",
    "Action",
    "AnswerLocally",
    "CloseConnection",
    "Phase",
    "ProxyConnection",
    "ReadClient",
    "ReadCluster",
    "Relogin",
    "SetTimer",
    "ToClient",
    "ToCluster",
]

# A response streams through unbuffered: the frame size is the only check.
_ANY_FRAME: Final = (1 << 31) - 1


class Phase(enum.Enum):
    OPENING = "opening"
    FORWARDING = "forwarding"
    ANSWERING_LOCALLY = "answering locally"
    REAUTH_DUE = "re-authentication due"
    RELOGGING = "re-logging in"
    CLOSED = "closed"


class ToClient:
    """Write ``chunks`` to the client, in order (views into what was fed)."""

    __slots__ = ("chunks",)

    def __init__(self, chunks: list[Chunk]) -> None:
        self.chunks = chunks


class ToCluster:
    """Write ``chunks`` to the cluster, in order."""

    __slots__ = ("chunks",)

    def __init__(self, chunks: list[Chunk]) -> None:
        self.chunks = chunks


class AnswerLocally:
    """Hand ``frame`` (size included) to the edge's own request machinery; then
    call :meth:`ProxyConnection.local_answered` once the edge has answered."""

    __slots__ = ("frame",)

    def __init__(self, frame: bytes) -> None:
        self.frame = frame


class Relogin:
    """Log in again on the upstream connection (KIP-368), then call
    :meth:`ProxyConnection.relogin_done` or :meth:`ProxyConnection.relogin_failed`."""

    __slots__ = ()


RELOGIN: Final = Relogin()


class ReadClient:
    """Resume (True) or pause (False) reading the client."""

    __slots__ = ("reading",)

    def __init__(self, reading: bool) -> None:
        self.reading = reading


class ReadCluster:
    """Resume (True) or pause (False) reading the cluster."""

    __slots__ = ("reading",)

    def __init__(self, reading: bool) -> None:
        self.reading = reading


class SetTimer:
    """Call :meth:`ProxyConnection.tick` at monotonic time ``at`` (replacing
    any earlier timer)."""

    __slots__ = ("at",)

    def __init__(self, at: float) -> None:
        self.at = at


class CloseConnection:
    """Close the client connection (and so its upstream one), logging ``reason``
    at INFO; ``event``: the forwarding metric's upstream event to count, if any."""

    __slots__ = ("event", "reason")

    def __init__(self, reason: str, event: str | None = None) -> None:
        self.reason = reason
        self.event = event


Action = (
    ToClient | ToCluster | AnswerLocally | Relogin | ReadClient | ReadCluster | SetTimer
) | CloseConnection

# The phases that hold what the client sends, and what they wait for.
_HOLDING: Final = {
    Phase.OPENING: "while the upstream connection opened",
    Phase.RELOGGING: "during a re-authentication at the cluster",
}


class ProxyConnection:
    """A forwarded client connection and its upstream connection, after login.

    Args:
        bounds: every limit, and what reaching each does.
        chain: the request and response filters, bound to this connection's session.
        forwarded: the ``(min, max)`` versions forwarded per API key; a request
            outside them closes the connection, as Kafka closes a connection on
            an unsupported version.
        session_valid: whether the edge session may still send requests
            (KIP-368: an expired one may only re-authenticate).
        observe_request, observe_response: told each forwarded frame's API key
            and size (metrics).
    """

    __slots__ = (
        "_bounds",
        "_client_reading",
        "_client_writable",
        "_cluster_writable",
        "_deferred",
        "_held",
        "_in_flight",
        "_local",
        "_reauth_at",
        "_reauth_pending",
        "_requests",
        "_responses",
        "_session_valid",
        "_spare",
        "_unwritten",
        "phase",
    )

    def __init__(
        self,
        bounds: ProxyBounds,
        chain: BoundChain,
        *,
        forwarded: Mapping[int, tuple[int, int]] | None = None,
        session_valid: Callable[[], bool] = lambda: True,
        observe_request: Observer | None = None,
        observe_response: Observer | None = None,
    ) -> None:
        self.phase = Phase.OPENING
        self._bounds = bounds
        self._in_flight = in_flight = InFlightQueue(bounds.max_in_flight)
        # Forwarded frames are counted once written (see _sending), not when read.
        self._unwritten = None if observe_request is None else _Unwritten(observe_request)
        self._requests = RequestSplitter(
            in_flight,
            chain.request_keys,
            max_frame=bounds.max_request,
            max_buffered=bounds.max_parsed_request,
            forwarded=forwarded,
            stop_at_local=True,
            observe=None if self._unwritten is None else self._unwritten.seen,
            decide=chain.on_request,
            edge_keys=chain.edge_keys,
            head=chain.on_head,
            head_keys=chain.head_keys,
            watched=chain.watched_keys,
            unread=chain.on_unread,
        )
        self._requests.max_rest = bounds.max_held
        self._responses = ResponseSplitter(
            in_flight,
            chain.on_response,
            chain.response_keys,
            max_frame=_ANY_FRAME,
            max_buffered=bounds.max_rewritten_response,
            max_watched=bounds.max_parsed_request,
            observe=observe_response,
        )
        self._held = bytearray()
        # A request for the edge, until it is handed over.
        self._local: LocalRequest | None = None
        self._reauth_at: float | None = None
        self._reauth_pending = False
        self._session_valid = session_valid
        self._cluster_writable = True
        self._client_reading = True  # as the adapter was last told
        self._client_writable = True  # else our cluster reads pause, but for a re-login
        # The fast path's actions when an event did more than forward chunks.
        self._deferred: list[Action] = []
        # Lent to _progress by the fast path, which finds it empty almost always.
        self._spare: list[Action] = []

    def __repr__(self) -> str:
        return f"<ProxyConnection {self.phase.value}, {len(self._in_flight)} in flight>"

    @property
    def in_flight(self) -> int:
        """Requests sent up (or answered at the edge) whose responses are not out yet."""
        return len(self._in_flight)

    # -- events in ----------------------------------------------------------------
    def upstream_ready(self, now: float, lifetime_ms: int, first: bytes = b"") -> list[Action]:
        """The upstream connection is logged in (and the client has its verdict).

        Args:
            now: the monotonic clock, in seconds.
            lifetime_ms: our session's lifetime at the cluster (0: for ever).
            first: what the client sent right after its login, read with it.
        """
        if self.phase is not Phase.OPENING:
            return []
        return self._go_on(now, lifetime_ms, first)

    def verdict_sent(self, first: bytes) -> list[Action]:
        """The client heard its verdict while the upstream connection still
        opens: ``first``, what it sent right after its login, is held ahead of
        anything it sent since."""
        if self.phase is not Phase.OPENING:
            return []
        return self._hold(first, ahead=True)

    def relogin_done(self, now: float, lifetime_ms: int) -> list[Action]:
        """The re-login at the cluster succeeded: go on with what was held."""
        if self.phase is not Phase.RELOGGING:
            return []
        return self._go_on(now, lifetime_ms)

    def relogin_failed(self, reason: str) -> list[Action]:
        return self._close(f"upstream re-authentication failed: {reason}", None)

    def client_data(self, data: bytes) -> list[Action]:
        phase = self.phase
        if phase is Phase.FORWARDING or phase is Phase.REAUTH_DUE:
            try:
                events = self._requests.feed(data)
            except FrontDoorError as exc:
                return self._close(f"client: {exc}", "protocol_error")
            return self._forward(events)
        if phase is Phase.ANSWERING_LOCALLY:
            try:
                self._requests.feed(data)  # held with the rest of the stream
            except FrontDoorError as exc:
                return self._close(f"client: {exc}", "protocol_error")
            return self._reading([])
        if phase in _HOLDING:
            return self._hold(data)
        return []

    def forward_client(self, data: bytes) -> list[Chunk] | None:
        """:meth:`client_data` delivered by the fast path: the chunks for the
        cluster when writing them is all it does, so that a forwarded frame costs
        no action object nor list; ``None`` when it does more: then
        :meth:`take_actions` (the same transitions, from the same helpers)."""
        if self.phase is not Phase.FORWARDING:
            self._deferred = self.client_data(data)
            return None
        try:
            events = self._requests.feed(data)
        except FrontDoorError as exc:
            self._deferred = self._close(f"client: {exc}", "protocol_error")
            return None
        if events and type(events[-1]) is LocalRequest:
            self._deferred = self._forward(events)
            return None
        chunks = cast("list[Chunk]", events)  # no LocalRequest: chunks only
        if chunks and not self._sending():
            self._deferred = self._close("session expired without re-authentication", None)
            return None
        # What _forward would add after the chunks: usually nothing.
        more = self._progress(self._spare)
        if more:
            self._spare = []
            self._deferred = [ToCluster(chunks), *more] if chunks else more
            return None
        return chunks

    def take_actions(self) -> list[Action]:
        """The actions of the last event the fast path answered ``None`` to."""
        actions, self._deferred = self._deferred, []
        return actions

    def _hold(self, data: bytes, ahead: bool = False) -> list[Action]:
        if ahead:
            self._held[:0] = data
        else:
            self._held += data
        if len(self._held) > self._bounds.max_held:
            during = _HOLDING[self.phase]
            return self._close(
                f"more than {self._bounds.max_held} bytes sent {during}", "protocol_error"
            )
        return self._reading([])

    def cluster_data(self, data: bytes) -> list[Action]:
        if self.phase is Phase.CLOSED:
            return []
        try:
            chunks = self._responses.feed(data)
        except FrontDoorError as exc:
            return self._close(f"cluster: {exc}", "protocol_error")
        out: list[Action] = [ToClient(chunks)] if chunks else []
        if self.phase is Phase.FORWARDING and self._client_reading:
            return out
        return self._progress(out)

    def forward_cluster(self, data: bytes) -> list[Chunk] | None:
        """:meth:`cluster_data` delivered by the fast path (see :meth:`forward_client`)."""
        if self.phase is not Phase.FORWARDING or not self._client_reading:
            self._deferred = self.cluster_data(data)
            return None
        try:
            chunks = self._responses.feed(data)
        except FrontDoorError as exc:
            self._deferred = self._close(f"cluster: {exc}", "protocol_error")
            return None
        return chunks

    def local_answered(self) -> list[Action]:
        """The edge has answered the request handed to it: go on with what followed."""
        if self.phase is not Phase.ANSWERING_LOCALLY or self._local is not None:
            return []
        self.phase = Phase.REAUTH_DUE if self._reauth_pending else Phase.FORWARDING
        self._reauth_pending = False
        try:
            events = self._requests.resume()
        except FrontDoorError as exc:
            return self._close(f"client: {exc}", "protocol_error")
        return self._forward(events)

    def tick(self, now: float) -> list[Action]:
        """The clock moved: a re-authentication at the cluster may be due."""
        at = self._reauth_at
        if at is None or self.phase is Phase.CLOSED:
            return []
        if now < at:
            # A loop's timer may fire a little early (uvloop's clock counts
            # milliseconds): ask again at the due time.
            return [SetTimer(at)]
        self._reauth_at = None
        if self.phase is Phase.FORWARDING:
            self.phase = Phase.REAUTH_DUE
        else:
            self._reauth_pending = True
        return self._progress([])

    def cluster_writable(self, writable: bool) -> list[Action]:
        """The upstream socket's buffer crossed its high (False) or low (True) mark."""
        self._cluster_writable = writable
        return self._reading([])

    def client_writable(self, writable: bool) -> list[Action]:
        """Back-pressure: a client that does not read its responses stops our
        reads from the cluster, never our buffering of them; from :meth:`_go_on`
        on while ``OPENING`` (nothing to pause) or ``RELOGGING`` (its answer is read)."""
        phase = self.phase
        if phase is Phase.CLOSED:
            return []
        self._client_writable = writable
        if phase is Phase.OPENING or phase is Phase.RELOGGING:
            return []
        return [ReadCluster(writable)]

    def upstream_lost(self, reason: str) -> list[Action]:
        return self._close(reason, None)

    def close(self) -> None:
        """The client connection is gone."""
        if self.phase is not Phase.CLOSED:
            self.phase = Phase.CLOSED
            _lose(self._in_flight, self._responses)

    # -- what follows ---------------------------------------------------------------
    def _go_on(self, now: float, lifetime_ms: int, first: bytes = b"") -> list[Action]:
        self.phase = Phase.REAUTH_DUE if self._reauth_pending else Phase.FORWARDING
        self._reauth_pending = False
        out: list[Action] = [] if self._client_writable else [ReadCluster(False)]
        if lifetime_ms > 0:
            self._reauth_at = at = now + lifetime_ms * self._bounds.reauth_at / 1000
            out.append(SetTimer(at))
        held, self._held = first + bytes(self._held), bytearray()
        if not held:
            return self._reading(out)
        return out + self.client_data(held)

    def _forward(self, events: list[Chunk | LocalRequest]) -> list[Action]:
        out: list[Action] = []
        if events and type(events[-1]) is LocalRequest:
            local = events.pop()
            assert isinstance(local, LocalRequest)
            self._local = local
            if self.phase is Phase.REAUTH_DUE:  # still due once the edge has answered
                self._reauth_pending = True
            self.phase = Phase.ANSWERING_LOCALLY
        if events:
            if not self._sending():
                return self._close("session expired without re-authentication", None)
            out.append(ToCluster(events))  # type: ignore[arg-type]
        return self._progress(out)

    def _sending(self) -> bool:
        """Requests go up now, unless the session expired (KIP-368: an expired
        session may only re-authenticate); whether they may."""
        if not self._session_valid():
            return False
        if self._unwritten is not None:
            self._unwritten.written()
        return True

    def _progress(self, out: list[Action]) -> list[Action]:
        """What the stream's state allows now: the edge's answers that are due, a
        local request whose turn has come, a due re-login; then reading."""
        idle = self._responses.idle()
        if self._in_flight.answers and idle:
            out.append(ToClient(list(self._in_flight.pop_answers())))
        if not len(self._in_flight) and idle:
            local = self._local
            if local is not None and self.phase is Phase.ANSWERING_LOCALLY:
                self._local = None
                payload = local.payload
                out.append(AnswerLocally(len(payload).to_bytes(4, "big") + payload))
            elif self.phase is Phase.REAUTH_DUE and self._requests.idle():
                self.phase = Phase.RELOGGING
                if not self._client_writable:  # its answer is read, or it times out
                    out.append(ReadCluster(True))
                out.append(RELOGIN)
        return self._reading(out)

    def _reading(self, out: list[Action]) -> list[Action]:
        phase = self.phase
        if phase is Phase.CLOSED:
            return out
        reading = not (
            phase is Phase.ANSWERING_LOCALLY
            or phase is Phase.RELOGGING
            or (phase is Phase.OPENING and len(self._held) >= self._bounds.pause_held)
            # Between two frames only: a frame half sent up is finished first.
            or (phase is Phase.REAUTH_DUE and self._requests.idle())
            or not self._cluster_writable
            or len(self._in_flight) >= self._bounds.pause_in_flight
        )
        if reading is not self._client_reading:
            self._client_reading = reading
            out.append(ReadClient(reading))
        return out

    def _close(self, reason: str, event: str | None) -> list[Action]:
        if self.phase is Phase.CLOSED:
            return []
        self.phase = Phase.CLOSED
        if self._unwritten is not None:
            self._unwritten.clear()
        _lose(self._in_flight, self._responses)
        return [CloseConnection(reason, event)]


class _Unwritten:
    """The forwarded frames read and not yet handed over for writing, told to
    ``observe`` (the metrics) once they are."""

    __slots__ = ("_observe", "_seen")

    def __init__(self, observe: Observer) -> None:
        self._observe = observe
        self._seen: list[tuple[int, int]] = []

    def seen(self, api_key: int, size: int) -> None:
        self._seen.append((api_key, size))

    def written(self) -> None:
        if self._seen:
            for api_key, size in self._seen:
                self._observe(api_key, size)
            self._seen.clear()

    def clear(self) -> None:
        self._seen.clear()


def _lose(in_flight: InFlightQueue, responses: ResponseSplitter) -> None:
    """Tell each request's watch that its response will never be seen: the
    cluster may have acted on the request all the same."""
    entries = in_flight.drain()
    pending = responses.pending()
    if pending is not None:
        entries.insert(0, pending)
    for entry in entries:
        if entry.watch is not None:
            entry.watch.lost()
