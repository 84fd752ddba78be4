"""What a client has asked upstream and not yet been answered, in order.

A client connection maps to its own upstream connections, so correlation ids
pass through unchanged, and Kafka answers the requests of one connection in
the order they arrived (``SocketServer`` mutes a channel until its response is
sent). Each response therefore matches the oldest entry still waiting.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Protocol

from sasl_scram.frontdoor._errors import PeerProtocolError
from sasl_scram.frontdoor._wire import read_i16
from sasl_scram.frontdoor._wire import read_uvarint

__all__ = ["InFlight", "InFlightQueue", "ResponseWatch", "expects_response", "produce_acks"]

_SIZE = struct.Struct(">i")
_PRODUCE = 0
# ProduceRequest.json: transactional_id from v3, flexible (compact strings,
# request header v2) from v9.
_PRODUCE_TRANSACTIONAL_SINCE = 3
_PRODUCE_FLEXIBLE_SINCE = 9


class ResponseWatch(Protocol):
    """What a request filter that only reads its request's response is told
    (:attr:`InFlight.watch`), once: the response, or that it was lost."""

    def response(self, payload: bytes | None) -> None:
        """The response as the client gets it (correlation id first, without
        the size), or ``None``: it was too large to read whole and streamed
        through unread."""

    def lost(self) -> None:
        """No response will be seen: the connection closed first."""


class InFlight:
    """One forwarded request: what its response will be read as.

    A plain class rather than a dataclass: one is built per request on the hot
    path, and mypyc compiles a dataclass's generated ``__init__`` as
    interpreted code (it was 3 % of the front door's CPU per Produce).
    """

    __slots__ = ("answer", "api_key", "api_version", "correlation_id", "expects_response",
                 "reshape", "watch")  # fmt: skip

    def __init__(
        self,
        correlation_id: int,
        api_key: int,
        api_version: int,
        expects_response: bool = True,
        answer: bytes | None = None,
    ) -> None:
        self.correlation_id = correlation_id
        self.api_key = api_key
        self.api_version = api_version
        self.expects_response = expects_response
        #: A response the edge made (a request filter's answer): sent to the
        #: client in this request's place, never asked of the cluster.
        self.answer = answer
        #: Set by a request filter that must see this request's response: the
        #: response (correlation id first, without the size) is buffered whole
        #: and becomes what this returns (after the response filters of its API
        #: key).
        self.reshape: Callable[[bytes], bytes] | None = None
        #: Set by a request filter that only reads this request's response (the
        #: audit trail): the response is read whole only when it is small enough
        #: (``ResponseSplitter``'s ``max_watched``), and never changed.
        self.watch: ResponseWatch | None = None

    def _key(self) -> tuple[object, ...]:
        return (self.correlation_id, self.api_key, self.api_version, self.expects_response,
                self.answer, self.reshape, self.watch)  # fmt: skip

    def __eq__(self, other: object) -> bool:
        return isinstance(other, InFlight) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable, like a dataclass with eq

    def __repr__(self) -> str:
        # Never the answer's bytes: an edge answer can carry a token's HMAC.
        answered = ", answered at the edge" if self.answer is not None else ""
        return (
            f"InFlight(correlation_id={self.correlation_id}, api_key={self.api_key},"
            f" api_version={self.api_version}, expects_response={self.expects_response}"
            f"{answered})"
        )


class InFlightQueue:
    """A bounded FIFO of the requests of one client connection awaiting answers.

    Only requests that get a response are queued: a Produce with ``acks=0`` gets
    none (Kafka's ``KafkaApis.handleProduceRequest`` sends nothing back).

    A list and the index of its oldest entry rather than a ``deque``: compiled,
    a list's append, index and length are direct calls, where each ``deque``
    operation is a method lookup, and this queue is pushed and popped once per
    forwarded request. Answered entries are dropped when the queue empties
    (the usual case between bursts) or once ``max_in_flight`` of them have
    piled up, so the list holds fewer than twice ``max_in_flight`` entries and
    each operation costs O(1) amortized.
    """

    __slots__ = ("_entries", "_head", "answers", "max_in_flight")

    def __init__(self, max_in_flight: int) -> None:
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        self._entries: list[InFlight] = []
        self._head = 0  # the oldest entry still waiting
        self.max_in_flight = max_in_flight
        #: How many entries hold an answer made at the edge.
        self.answers = 0

    def __len__(self) -> int:
        return len(self._entries) - self._head

    def push(self, entry: InFlight) -> None:
        if not entry.expects_response:
            return
        if len(self._entries) - self._head >= self.max_in_flight:
            raise PeerProtocolError(f"more than {self.max_in_flight} requests in flight")
        if entry.answer is not None:
            self.answers += 1
        self._entries.append(entry)

    def _advance(self) -> InFlight:
        """Take the oldest entry (there is one)."""
        entries = self._entries
        head = self._head
        entry = entries[head]
        head += 1
        if head == len(entries):
            entries.clear()
            head = 0
        elif head >= self.max_in_flight:
            del entries[:head]
            head = 0
        self._head = head
        return entry

    def pop_answers(self) -> list[bytes]:
        """The frames of the edge's answers now at the head, oldest first: each is
        due once every request before it has been answered."""
        out = []
        while self._head < len(self._entries):
            answer = self._entries[self._head].answer
            if answer is None:
                break
            self._advance()
            self.answers -= 1
            out.append(_SIZE.pack(len(answer)) + answer)
        return out

    def drain(self) -> list[InFlight]:
        """Every entry, oldest first, leaving the queue empty: the connection closed."""
        entries = self._entries[self._head :]
        self._entries.clear()
        self._head = 0
        self.answers = 0
        return entries

    def pop(self, correlation_id: int) -> InFlight:
        """The oldest entry, which a response with ``correlation_id`` answers."""
        if self._head >= len(self._entries):
            raise PeerProtocolError(f"response {correlation_id} to no request in flight")
        entry = self._entries[self._head]
        if entry.correlation_id != correlation_id or entry.answer is not None:
            raise PeerProtocolError(
                f"response {correlation_id} does not answer the oldest request "
                f"{entry.correlation_id}"
            )
        return self._advance()


def produce_acks(buf: bytes, pos: int, end: int, version: int) -> int | None:
    """A Produce request's ``acks``, read from its header's client id on.

    ``pos`` is where the client id starts (after api key, version and
    correlation id); ``None`` when ``buf[pos:end]`` is too short to tell. The
    client id is a classic string in every header version; header v2 (Produce
    v9+) adds tagged fields; then v3+ has a nullable transactional id (compact
    from v9) before ``acks``.
    """
    if pos + 2 > end:
        return None
    pos += 2 + max(read_i16(buf, pos), 0)
    flexible = version >= _PRODUCE_FLEXIBLE_SINCE
    if flexible:
        got = read_uvarint(buf, pos, end)
        if got is None:
            return None
        count, pos = got
        for _ in range(count):
            for _ in range(2):  # the tag, then the size
                got = read_uvarint(buf, pos, end)
                if got is None:
                    return None
                size, pos = got
            pos += size
    if version >= _PRODUCE_TRANSACTIONAL_SINCE:
        if flexible:
            got = read_uvarint(buf, pos, end)
            if got is None:
                return None
            length, pos = got
            pos += max(length - 1, 0)
        else:
            if pos + 2 > end:
                return None
            pos += 2 + max(read_i16(buf, pos), 0)
    if pos + 2 > end:
        return None
    return read_i16(buf, pos)


def expects_response(buf: bytes, pos: int, end: int, api_key: int, version: int) -> bool | None:
    """Whether a request gets a response; ``None`` while too few bytes are here."""
    if api_key != _PRODUCE:
        return True
    acks = produce_acks(buf, pos, end, version)
    return None if acks is None else acks != 0
