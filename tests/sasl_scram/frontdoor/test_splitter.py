"""The streaming splitters: frames pass through as slices of what was fed, in
any chunking, and only the frames to parse are buffered whole."""

from __future__ import annotations

import itertools
import struct
from collections.abc import Sequence

import pytest
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from sasl_scram.frontdoor import InFlight
from sasl_scram.frontdoor import InFlightQueue
from sasl_scram.frontdoor import LocalRequest
from sasl_scram.frontdoor import PeerProtocolError
from sasl_scram.frontdoor import RequestSplitter
from sasl_scram.frontdoor import ResponseSplitter
from tests.sasl_scram.frontdoor.test_inflight import produce_header_tail

METADATA, PRODUCE, FETCH, API_VERSIONS = 3, 0, 1, 18


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def response(correlation_id: int, body: bytes) -> bytes:
    return frame(struct.pack(">i", correlation_id) + body)


def request(api_key: int, version: int, correlation_id: int, rest: bytes) -> bytes:
    return frame(struct.pack(">hhi", api_key, version, correlation_id) + rest)


def chunked(data: bytes, cuts: Sequence[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def rewrite(entry: InFlight, payload: bytes) -> bytes:
    return payload + b"+rewritten"


def response_stream() -> tuple[InFlightQueue, bytes, bytes]:
    """Three responses (Fetch, Metadata, Fetch) and what the client should get."""
    queue = InFlightQueue(8)
    for cid, key in ((1, FETCH), (2, METADATA), (3, FETCH)):
        queue.push(InFlight(cid, key, 12))
    big = bytes(range(256)) * 40
    parts = [response(1, big), response(2, b"brokers"), response(3, b"")]
    expected = parts[0] + frame(struct.pack(">i", 2) + b"brokers+rewritten") + parts[2]
    return queue, b"".join(parts), expected


@settings(max_examples=200, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=20000), max_size=12))
@example(cuts=[10249])  # the next frame's first byte ends a chunk: held, not passed
def test_responses_in_any_chunking(cuts: list[int]) -> None:
    queue, data, expected = response_stream()
    splitter = ResponseSplitter(queue, rewrite, {METADATA}, max_frame=1 << 20, max_buffered=64)
    out = [bytes(piece) for chunk in chunked(data, cuts) for piece in splitter.feed(chunk)]
    assert b"".join(out) == expected
    assert len(queue) == 0 and splitter.idle()


def test_passthrough_is_the_chunk_or_views_into_it_not_copies() -> None:
    queue, data, expected = response_stream()
    splitter = ResponseSplitter(queue, rewrite, {METADATA}, max_frame=1 << 20, max_buffered=64)
    chunk = data[:5000]
    # A chunk passed on whole is the chunk itself.
    first = splitter.feed(chunk)
    assert len(first) == 1 and first[0] is chunk
    # Part of a chunk is a view of it: the first frame's tail, before the
    # Metadata response that is rewritten, is not copied.
    rest = data[5000:]
    second = splitter.feed(rest)
    assert isinstance(second[0], memoryview) and second[0].obj is rest
    assert b"".join(bytes(piece) for piece in [*first, *second]) == expected


def test_a_view_fed_is_copied_once_so_what_is_emitted_outlives_its_buffer() -> None:
    queue, data, expected = response_stream()
    splitter = ResponseSplitter(queue, rewrite, {METADATA}, max_frame=1 << 20, max_buffered=64)
    buffer = bytearray(data)
    out = splitter.feed(memoryview(buffer))
    buffer[:] = bytes(len(buffer))  # the caller reuses its buffer
    assert b"".join(bytes(piece) for piece in out) == expected


def test_rewritten_frame_over_the_bound_fails_sticky() -> None:
    queue = InFlightQueue(2)
    queue.push(InFlight(1, METADATA, 12))
    splitter = ResponseSplitter(queue, rewrite, {METADATA}, max_frame=1 << 20, max_buffered=10)
    with pytest.raises(PeerProtocolError, match="exceeds 10"):
        splitter.feed(response(1, b"x" * 20))
    with pytest.raises(PeerProtocolError, match="exceeds 10"):
        splitter.feed(b"")


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (response(9, b""), "does not answer the oldest request 1"),
        (struct.pack(">i", 2) + b"ab", "outside 4"),
        (struct.pack(">i", 1 << 21), "outside 4"),
    ],
)
def test_response_framing_errors(data: bytes, match: str) -> None:
    queue = InFlightQueue(2)
    queue.push(InFlight(1, FETCH, 12))
    splitter = ResponseSplitter(queue, rewrite, {METADATA}, max_frame=1 << 20, max_buffered=64)
    with pytest.raises(PeerProtocolError, match=match):
        splitter.feed(data)


def request_stream() -> tuple[bytes, list[bytes | LocalRequest]]:
    produce_none = request(PRODUCE, 9, 11, produce_header_tail(9, 0) + b"records" * 100)
    produce_all = request(PRODUCE, 3, 12, produce_header_tail(3, -1, txn=b"t"))
    versions = request(API_VERSIONS, 3, 13, b"\x00\x03cli\x00\x02a\x021\x00")
    fetch = request(FETCH, 15, 14, b"\x00\x03cli\x00" + b"f" * 3000)
    data = produce_none + produce_all + versions + fetch
    local = LocalRequest(InFlight(13, API_VERSIONS, 3), versions[4:])
    return data, [produce_none + produce_all, local, fetch]


@settings(max_examples=200, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=5000), max_size=12))
@example(cuts=[734])  # the next frame's first byte ends a chunk: held, not passed
def test_requests_in_any_chunking(cuts: list[int]) -> None:
    data, expected = request_stream()
    queue = InFlightQueue(8)
    splitter = RequestSplitter(queue, {API_VERSIONS}, max_frame=1 << 20, max_buffered=1024)
    got: list[bytes | LocalRequest] = []
    forwarded = b""
    for chunk in chunked(data, cuts):
        for item in splitter.feed(chunk):
            if isinstance(item, LocalRequest):
                got.append(forwarded)
                got.append(item)
                forwarded = b""
            else:
                forwarded += bytes(item)
    got.append(forwarded)
    assert got == expected
    # acks=0 is not waited for; the others are, in order.
    assert [queue.pop(12).api_key, queue.pop(14).api_key] == [PRODUCE, FETCH]
    assert splitter.idle()


def test_a_head_sent_a_byte_at_a_time_is_read_again_only_as_it_doubles() -> None:
    """A Produce whose 30,000-byte client id comes a byte per read: its head is
    read (from a copy of what is held) a logarithmic number of times, not
    once per read, and the request still goes up whole and exact."""
    reads: list[int] = []

    def head(api_key: int, version: int, buf: bytes, start: int, end: int) -> bool | None:
        reads.append(end)
        return None if end - start < 2 + 30_000 + 4 else False  # past the client id: stream

    frame = request(PRODUCE, 9, 1, produce_header_tail(9, 1, b"c" * 30_000) + b"r" * 1000)
    splitter = RequestSplitter(
        InFlightQueue(2), {PRODUCE}, max_frame=1 << 20, max_buffered=64, head=head,
        head_keys={PRODUCE},
    )  # fmt: skip
    out = [piece for byte in range(len(frame)) for piece in splitter.feed(frame[byte : byte + 1])]
    passed = [bytes(piece) for piece in out if not isinstance(piece, LocalRequest)]
    assert len(passed) == len(out) and b"".join(passed) == frame and splitter.idle()
    assert 10 <= len(reads) <= 20, len(reads)


def test_a_request_too_short_for_its_header() -> None:
    splitter = RequestSplitter(InFlightQueue(2), set(), max_frame=1 << 20, max_buffered=64)
    with pytest.raises(PeerProtocolError, match="too short for its header"):
        splitter.feed(request(PRODUCE, 9, 1, b"\x00\x03c"))


def test_only_forwarded_versions_pass() -> None:
    forwarded = {PRODUCE: (3, 9), FETCH: (4, 15)}
    splitter = RequestSplitter(
        InFlightQueue(4), {API_VERSIONS}, max_frame=1 << 20, max_buffered=64, forwarded=forwarded
    )
    ok = request(FETCH, 15, 1, b"\x00\x03cli\x00")
    out = splitter.feed(ok)
    assert b"".join(bytes(x) for x in out if not isinstance(x, LocalRequest)) == ok
    with pytest.raises(PeerProtocolError, match="API 1 version 16 is not forwarded"):
        splitter.feed(request(FETCH, 16, 2, b"\x00\x03cli\x00"))
    other = RequestSplitter(
        InFlightQueue(4), {API_VERSIONS}, max_frame=1 << 20, max_buffered=64, forwarded=forwarded
    )
    with pytest.raises(PeerProtocolError, match="API 78 version 1 is not forwarded"):
        other.feed(request(78, 1, 3, b"\x00\x03cli\x00"))


@settings(max_examples=200, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=5000), max_size=12))
def test_stopping_at_a_local_request_holds_what_follows_until_resumed(cuts: list[int]) -> None:
    """The front door answers a local request only after the forwarded ones
    before it: nothing after it is passed on, or waited for, until resume()."""
    data, expected = request_stream()
    queue = InFlightQueue(8)
    splitter = RequestSplitter(
        queue, {API_VERSIONS}, max_frame=1 << 20, max_buffered=1024, stop_at_local=True
    )
    before: list[bytes | LocalRequest] = []
    for chunk in chunked(data, cuts):
        before.extend(
            bytes(x) if not isinstance(x, LocalRequest) else x for x in splitter.feed(chunk)
        )
    assert splitter.stopped
    local = [x for x in before if isinstance(x, LocalRequest)]
    assert local == [expected[1]]
    assert b"".join(x for x in before if isinstance(x, bytes)) == expected[0]
    # Only the Produce with acks=all before it is waited for: the Fetch is not read yet.
    assert [queue.pop(12).api_key] == [PRODUCE] and len(queue) == 0
    rest = splitter.resume()
    assert not any(isinstance(x, LocalRequest) for x in rest)
    after = b"".join(bytes(x) for x in rest if not isinstance(x, LocalRequest))
    assert after == expected[2] and not splitter.stopped
    assert queue.pop(14).api_key == FETCH and splitter.idle()
