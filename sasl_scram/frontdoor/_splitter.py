"""Streaming frame splitters for both directions of a forwarded connection.

A Kafka frame is an int32 size then that many bytes. The splitters are fed
whatever the socket gives and emit what to send on: for a frame nobody needs
to parse, slices of the fed chunk (``memoryview``, no copy) as the bytes
arrive, tracking only how much of the frame is left; a frame that must be
parsed (a response carrying broker addresses, a request the edge answers
itself) is buffered whole, bounded by ``max_buffered``, and emitted once
rewritten. Work is per frame, never per byte.

What is passed on is the chunk given to :meth:`feed` itself when all of it
passes, else views into it; a chunk that is not ``bytes`` (a view of the
caller's buffer) is copied once first, so nothing emitted points into a
buffer its caller may reuse. Frame heads are read from those ``bytes`` in
place (``_wire``), which compiled code does without a call per integer.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Generic
from typing import TypeVar

from sasl_scram.frontdoor._errors import PeerProtocolError
from sasl_scram.frontdoor._filters import AT_EDGE
from sasl_scram.frontdoor._filters import RequestOutcome
from sasl_scram.frontdoor._filters import Respond
from sasl_scram.frontdoor._filters import Rewrite
from sasl_scram.frontdoor._inflight import InFlight
from sasl_scram.frontdoor._inflight import InFlightQueue
from sasl_scram.frontdoor._inflight import expects_response
from sasl_scram.frontdoor._wire import read_i16
from sasl_scram.frontdoor._wire import read_i32

__all__ = ["LocalRequest", "RequestSplitter", "ResponseSplitter"]

_SIZE = struct.Struct(">i")
# api key (int16), api version (int16), correlation id (int32): the start of
# every request header.
_REQUEST_HEAD = 8
# The most bytes held to read a frame's head: a Produce request's client id and
# transactional id are int16-length strings, plus the header's tagged fields.
MAX_HEAD_BYTES = 1 << 17

Chunk = bytes | memoryview
#: Told each passed-on frame's API key and size.
Observer = Callable[[int, int], None]
#: ``(api key, version, buffer, start, end)``, ``start`` where the client id
#: begins: read the request whole (True), stream it (False), or more bytes (None).
HeadDecider = Callable[[int, int, bytes, int, int], "bool | None"]
T = TypeVar("T")
Out = TypeVar("Out")


@dataclass(frozen=True, slots=True)
class LocalRequest:
    """A whole request the edge answers itself (never forwarded upstream).

    Attributes:
        entry: its api key, version and correlation id.
        payload: the frame without its size, header included.
    """

    entry: InFlight
    # Not in the repr: a request's bytes can carry a SASL proof or a token's HMAC.
    payload: bytes = field(repr=False)


def _piece(data: bytes, start: int, stop: int) -> Chunk:
    """``data[start:stop]`` without a copy: the read itself when it is all of it."""
    if start == 0 and stop == len(data):
        return data
    return memoryview(data)[start:stop]


class _FrameStream(Generic[T, Out]):
    """The per-frame state machine both directions share.

    Subclasses say, from the first bytes of a frame, whether to pass it on
    (``False``) or buffer it whole (``True``), and what to emit for a whole
    one. A failure is sticky: the stream is out of step with the peer.
    """

    def __init__(
        self, max_frame: int, max_buffered: int, min_size: int, observe: Observer | None
    ) -> None:
        self._observe = observe  # told each frame's API key and size (metrics)
        self.max_frame = max_frame
        self.max_buffered = max_buffered
        self._min_size = min_size
        self._remaining = 0  # bytes of the current passed-on frame still to come
        self._carry = bytearray()  # the head of a frame split across chunks
        self._carry_read = 0  # how much of the carry its head was last read from
        self._whole: bytearray | None = None  # the frame being buffered whole
        self._need = 0
        self._tag: T | None = None
        self._failed: str | None = None
        # Set by _complete to stop after a whole frame (what follows waits in
        # _rest for resume()).
        self._stopped = False
        self._rest = b""
        #: The most bytes held after a stop (what was read before the caller
        #: stopped reading): past it the stream fails.
        self.max_rest = 1 << 20
        # Answers made at the edge are due at each frame's end (responses only).
        self._answers: InFlightQueue | None = None

    def _classify(self, buf: bytes, start: int, end: int, size: int) -> tuple[bool, T] | None:
        """From the frame's bytes ``buf[start:end]`` after its size: pass or buffer,
        and a tag for :meth:`_complete`; ``None`` when more bytes are needed."""
        raise NotImplementedError

    def _complete(self, tag: T, payload: bytes) -> Out | Chunk | None:
        """What a whole frame becomes: emitted unless ``None``; may set ``_stopped``."""
        raise NotImplementedError

    def idle(self) -> bool:
        """Whether the stream stands between frames (nothing partly read)."""
        return not (self._remaining or self._carry or self._whole is not None)

    @property
    def stopped(self) -> bool:
        """Whether a whole frame stopped the stream (see :meth:`resume`)."""
        return self._stopped

    def feed(self, data: Chunk) -> list[Chunk | Out]:
        if self._failed is not None:
            raise PeerProtocolError(self._failed)
        if self._stopped:
            # The caller stops reading when the stream stops; what was already
            # read waits with the rest.
            if len(self._rest) + len(data) > self.max_rest:
                self._failed = f"more than {self.max_rest} bytes sent while a request waits"
                raise PeerProtocolError(self._failed)
            self._rest += bytes(data)
            return []
        if type(data) is not bytes:
            # A socket read is bytes already; a view (a caller's own buffer)
            # is copied once, so what is emitted outlives that buffer.
            data = bytes(data)
        try:
            return self._feed(data)
        except PeerProtocolError as exc:
            self._failed = str(exc)
            raise

    def resume(self) -> list[Chunk | Out]:
        """Go on after the whole frame that stopped the stream, with the bytes
        that came after it (it may stop again at the next one)."""
        self._stopped = False
        rest, self._rest = self._rest, b""
        return self.feed(rest) if rest else []

    def _feed(self, data: bytes) -> list[Chunk | Out]:
        out: list[Chunk | Out] = []
        n = len(data)
        i = 0
        span = -1  # where the run of passed-on bytes began in data (-1: none)
        while i < n:
            if self._stopped:
                self._rest = data[i:]
                break
            if self._remaining:
                if span < 0:
                    span = i
                take = min(self._remaining, n - i)
                i += take
                self._remaining -= take
                if not self._remaining and self._answers is not None and self._answers.answers:
                    out.append(_piece(data, span, i))
                    span = -1
                    out.extend(self._answers.pop_answers())
            elif self._whole is not None:
                take = min(self._need, n - i)
                self._whole += _piece(data, i, i + take)
                i += take
                self._need -= take
                self._finish_whole(out)
            elif self._carry or n - i < 4:
                if span >= 0:
                    out.append(_piece(data, span, i))
                    span = -1
                i = self._feed_carry(data, i, out)
            else:
                size = self._size(read_i32(data, i))
                end = min(n, i + 4 + size)
                got = self._classify(data, i + 4, end, size)
                if got is None:
                    self._check_head(end - i, size)
                    if span >= 0:
                        out.append(_piece(data, span, i))
                        span = -1
                    self._carry += _piece(data, i, end)
                    self._carry_read = end - i
                    i = end
                elif got[0]:
                    if span >= 0:
                        out.append(_piece(data, span, i))
                        span = -1
                    self._start_whole(got[1], size, _piece(data, i + 4, end))
                    i = end
                    self._finish_whole(out)
                else:
                    if span < 0:
                        span = i
                    self._remaining = 4 + size
        if span >= 0:
            out.append(_piece(data, span, i))
        return out

    def _feed_carry(self, data: bytes, i: int, out: list[Chunk | Out]) -> int:
        """Grow the held head of a frame from ``data[i:]``; return the new ``i``.

        The caller has emitted what it passed on before ``i``.
        """
        carry = self._carry
        n = len(data)
        if len(carry) < 4:
            take = min(4 - len(carry), n - i)
            carry += _piece(data, i, i + take)
            i += take
            if len(carry) < 4:
                return i
        size = self._size(read_i32(bytes(carry[:4]), 0))
        take = min(4 + size - len(carry), n - i, max(MAX_HEAD_BYTES - len(carry), 0))
        carry += _piece(data, i, i + take)
        i += take
        held = len(carry)
        if held < 4 + size and held < MAX_HEAD_BYTES and held < 2 * self._carry_read:
            # The head is read again (from a copy, as bytes) only once the
            # carry has doubled, or holds the whole frame, or reaches the
            # bound: a head sent a byte at a time costs copies linear in its
            # length, not quadratic. Every frame is sent whole, so the wait ends.
            return i
        self._carry_read = held
        head = bytes(carry)
        got = self._classify(head, 4, held, size)
        if got is None:
            self._check_head(held, size)
            return i
        self._carry = bytearray()
        self._carry_read = 0
        if got[0]:
            self._start_whole(got[1], size, _piece(head, 4, len(head)))
            self._finish_whole(out)
        else:
            out.append(head)
            self._remaining = 4 + size - len(head)
            if not self._remaining and self._answers is not None and self._answers.answers:
                out.extend(self._answers.pop_answers())
        return i

    def _size(self, size: int) -> int:
        if size < self._min_size or size > self.max_frame:
            raise PeerProtocolError(
                f"frame of {size} bytes outside {self._min_size}..{self.max_frame}"
            )
        return size

    def _check_head(self, held: int, size: int) -> None:
        if held >= 4 + size:
            raise PeerProtocolError("frame too short for its header")
        if held >= MAX_HEAD_BYTES:
            raise PeerProtocolError(f"frame header longer than {MAX_HEAD_BYTES} bytes")

    def _buffer_limit(self, tag: T) -> int:
        """The most bytes of a frame read whole."""
        return self.max_buffered

    def _start_whole(self, tag: T, size: int, first: Chunk) -> None:
        limit = self._buffer_limit(tag)
        if size > limit:
            raise PeerProtocolError(f"frame of {size} bytes to parse exceeds {limit}")
        self._whole = bytearray(first)
        self._need = size - len(first)
        self._tag = tag

    def _finish_whole(self, out: list[Chunk | Out]) -> None:
        if self._need or self._whole is None:
            return
        payload = bytes(self._whole)
        tag = self._tag
        assert tag is not None
        self._whole = None
        self._tag = None
        item = self._complete(tag, payload)
        if item is not None:
            out.append(item)
        if self._answers is not None and self._answers.answers:
            out.extend(self._answers.pop_answers())


class ResponseSplitter(_FrameStream[InFlight, bytes]):
    """The upstream byte stream to the client: each response matched to its request.

    Args:
        in_flight: the connection's queue; each response pops its oldest entry.
        rewrite: the payload (correlation id on, without the size) of a response
            to rewrite, to the new payload.
        rewritten: the API keys whose responses go through ``rewrite``; so
            does a response whose request has a ``reshape``, and one whose
            request has a ``watch``, when it is at most ``max_watched`` bytes.
        max_frame: the largest response accepted at all.
        max_buffered: the largest response buffered whole to rewrite.
        max_watched: the largest response buffered whole only to be watched; a
            bigger one streams through, its watch told ``None``.
        observe: told each response's API key and size (metrics).
    """

    def __init__(
        self,
        in_flight: InFlightQueue,
        rewrite: Callable[[InFlight, bytes], bytes],
        rewritten: Collection[int],
        *,
        max_frame: int,
        max_buffered: int,
        max_watched: int = 0,
        observe: Observer | None = None,
    ) -> None:
        super().__init__(max_frame, max_buffered, 4, observe)
        self._in_flight = in_flight
        self._rewrite = rewrite
        # Sets and a dict, whatever was given: compiled, a membership test is a
        # direct call, where a Container or a Mapping costs a method lookup.
        self._rewritten = frozenset(rewritten)
        self._answers = in_flight
        self.max_watched = max_watched

    def _classify(
        self, buf: bytes, start: int, end: int, size: int
    ) -> tuple[bool, InFlight] | None:
        if end - start < 4:
            return None
        entry = self._in_flight.pop(read_i32(buf, start))
        if self._observe is not None:
            self._observe(entry.api_key, 4 + size)
        if entry.api_key in self._rewritten or entry.reshape is not None:
            return True, entry
        watch = entry.watch
        if watch is None:
            return False, entry
        if size <= self.max_watched:
            return True, entry
        watch.response(None)
        return False, entry

    def pending(self) -> InFlight | None:
        """The request whose response is being read whole, if one is."""
        return self._tag if self._whole is not None else None

    def _complete(self, tag: InFlight, payload: bytes) -> bytes:
        new = self._rewrite(tag, payload)
        return _SIZE.pack(len(new)) + new


class RequestSplitter(_FrameStream[InFlight, LocalRequest]):
    """A client's byte stream to upstream: each request's header read, its body not.

    Forwarded requests that get a response enter ``in_flight``; requests for
    ``local`` API keys are buffered whole and, without ``decide``, emitted as
    :class:`LocalRequest`. With ``decide`` (a :class:`FilterChain`'s
    ``on_request``), each whole request goes where its outcome says: forwarded
    as it came or rewritten, answered in its place in ``in_flight``, or
    emitted as a :class:`LocalRequest` for the edge.

    Args:
        in_flight: the connection's queue of forwarded requests.
        local: the API keys whose requests are buffered whole.
        max_frame: the largest request accepted (Kafka's ``socket.request.max.bytes``).
        max_buffered: the largest request the edge answers itself (an ``edge_keys``
            one); a request a filter reads whole is bounded by ``max_frame`` only,
            as Kafka reads every request whole.
        edge_keys: the API keys the edge answers itself (default: all of ``local``).
        head, head_keys: for a ``local`` request of ``head_keys``, ``head`` is
            asked from its first bytes whether to read it whole (``True``) or
            let it stream through unread (``False``); ``None``: more bytes needed.
        forwarded: when given, the ``(min, max)`` versions forwarded per API key
            (what the front door advertises); a request outside them fails,
            as Kafka closes a connection on an unsupported API or version, so
            a client that ignores ApiVersions cannot make the cluster answer
            with a version whose broker addresses are not rewritten.
        stop_at_local: stop after each :class:`LocalRequest` (:attr:`stopped`)
            until :meth:`resume`, so its answer can wait for those of the
            forwarded requests before it without anything after it moving.
        observe: told each forwarded request's API key and size (metrics).
        watched, unread: of the ``local`` keys, those only watched (the audit
            trail): a request of theirs larger than ``max_buffered`` streams
            through unread, as any other, and ``unread`` is told its entry.
    """

    def __init__(
        self,
        in_flight: InFlightQueue,
        local: Collection[int],
        *,
        max_frame: int,
        max_buffered: int,
        forwarded: Mapping[int, tuple[int, int]] | None = None,
        stop_at_local: bool = False,
        observe: Observer | None = None,
        decide: Callable[[InFlight, bytes], RequestOutcome] | None = None,
        edge_keys: Collection[int] | None = None,
        head: HeadDecider | None = None,
        head_keys: Collection[int] = (),
        watched: Collection[int] = (),
        unread: Callable[[InFlight], None] | None = None,
    ) -> None:
        super().__init__(max_frame, max_buffered, _REQUEST_HEAD, observe)
        self._in_flight = in_flight
        # Sets and a dict, whatever was given: compiled, a membership test is a
        # direct call, where a Container or a Mapping costs a method lookup.
        self._local = frozenset(local)
        self._edge_keys = self._local if edge_keys is None else frozenset(edge_keys)
        self._head = head
        self._head_keys = frozenset(head_keys)
        self._watched = frozenset(watched)
        self._unread = unread
        self._forwarded: dict[int, tuple[int, int]] | None = None
        if isinstance(forwarded, dict):
            self._forwarded = forwarded  # read only: shared, not copied per connection
        elif forwarded is not None:
            self._forwarded = dict(forwarded)
        # A local request is answered once every forwarded one before it has
        # been: nothing after it is read (nor enters in_flight) until then.
        self._stop_at_local = stop_at_local
        self._decide = decide

    def _classify(
        self, buf: bytes, start: int, end: int, size: int
    ) -> tuple[bool, InFlight] | None:
        if end - start < _REQUEST_HEAD:
            return None
        api_key = read_i16(buf, start)
        version = read_i16(buf, start + 2)
        correlation_id = read_i32(buf, start + 4)
        unread = False
        if api_key in self._local:
            whole = True
            if api_key in self._head_keys:
                assert self._head is not None
                self._check_forwarded(api_key, version)
                got = self._head(api_key, version, buf, start + _REQUEST_HEAD, end)
                if got is None:
                    return None
                whole = got
            if whole:
                if size <= self.max_buffered or api_key not in self._watched:
                    return True, InFlight(correlation_id, api_key, version)
                # Only watched, and too large to read whole: it streams as any other.
                unread = True
        self._check_forwarded(api_key, version)
        answered = expects_response(buf, start + _REQUEST_HEAD, end, api_key, version)
        if answered is None:
            return None
        entry = InFlight(correlation_id, api_key, version, answered)
        self._in_flight.push(entry)
        if self._observe is not None:
            self._observe(api_key, 4 + size)
        if unread and self._unread is not None:
            self._unread(entry)
        return False, entry

    def _buffer_limit(self, tag: InFlight) -> int:
        return self.max_buffered if tag.api_key in self._edge_keys else self.max_frame

    def _check_forwarded(self, api_key: int, version: int) -> None:
        forwarded = self._forwarded
        if forwarded is not None:
            versions = forwarded.get(api_key)
            if versions is None or not versions[0] <= version <= versions[1]:
                raise PeerProtocolError(f"API {api_key} version {version} is not forwarded")

    def _complete(self, tag: InFlight, payload: bytes) -> LocalRequest | bytes | None:
        outcome = AT_EDGE if self._decide is None else self._decide(tag, payload)
        if outcome is AT_EDGE:
            self._stopped = self._stop_at_local
            return LocalRequest(tag, payload)
        self._check_forwarded(tag.api_key, tag.api_version)
        if type(outcome) is Respond:
            tag.answer = outcome.payload
            self._in_flight.push(tag)
            return None
        if type(outcome) is Rewrite:
            payload = outcome.payload
        answered = expects_response(
            payload, _REQUEST_HEAD, len(payload), tag.api_key, tag.api_version
        )
        tag.expects_response = answered is not False
        self._in_flight.push(tag)
        if self._observe is not None:
            self._observe(tag.api_key, 4 + len(payload))
        return _SIZE.pack(len(payload)) + payload
