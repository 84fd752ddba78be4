"""The front door's sans-IO proxy connection, with no broker: fed client bytes,
cluster bytes and clock ticks, checked by the actions it returns."""

from __future__ import annotations

import dataclasses
import struct
from dataclasses import dataclass
from dataclasses import field

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from sasl_scram.config import KafkaPrincipal
from sasl_scram.frontdoor import PASS
from sasl_scram.frontdoor import Action
from sasl_scram.frontdoor import AnswerLocally
from sasl_scram.frontdoor import CloseConnection
from sasl_scram.frontdoor import EdgeRequestFilter
from sasl_scram.frontdoor import EdgeSession
from sasl_scram.frontdoor import FilterChain
from sasl_scram.frontdoor import InFlight
from sasl_scram.frontdoor import Phase
from sasl_scram.frontdoor import ProxyBounds
from sasl_scram.frontdoor import ProxyConnection
from sasl_scram.frontdoor import ReadClient
from sasl_scram.frontdoor import ReadCluster
from sasl_scram.frontdoor import Relogin
from sasl_scram.frontdoor import RequestFilter
from sasl_scram.frontdoor import RequestOutcome
from sasl_scram.frontdoor import Respond
from sasl_scram.frontdoor import ResponseFilter
from sasl_scram.frontdoor import Rewrite
from sasl_scram.frontdoor import SetTimer
from sasl_scram.frontdoor import ToClient
from sasl_scram.frontdoor import ToCluster
from tests.sasl_scram.frontdoor.test_splitter import chunked
from tests.sasl_scram.frontdoor.test_splitter import frame
from tests.sasl_scram.frontdoor.test_splitter import request
from tests.sasl_scram.frontdoor.test_splitter import response

FETCH, METADATA, HANDSHAKE, LIST_OFFSETS, CREATE_TOPICS = 1, 3, 17, 2, 19
FORWARDED = {FETCH: (0, 15), METADATA: (0, 12), LIST_OFFSETS: (0, 9), CREATE_TOPICS: (0, 7)}


class DenyCreateTopics(RequestFilter):
    """Answers CreateTopics at the edge (as an authorizer would)."""

    api_keys = frozenset({CREATE_TOPICS})

    def on_request(self, session: EdgeSession, entry: InFlight, payload: bytes) -> RequestOutcome:
        return Respond(struct.pack(">i", entry.correlation_id) + b"denied")


class TagListOffsets(RequestFilter):
    """Rewrites ListOffsets requests (appends a marker to the payload)."""

    api_keys = frozenset({LIST_OFFSETS})

    def on_request(self, session: EdgeSession, entry: InFlight, payload: bytes) -> RequestOutcome:
        return Rewrite(payload + b"!tag")


class PassEverything(RequestFilter):
    api_keys = frozenset({LIST_OFFSETS, CREATE_TOPICS})

    def on_request(self, session: EdgeSession, entry: InFlight, payload: bytes) -> RequestOutcome:
        return PASS


class ReshapeOwnResponse(RequestFilter):
    """Lets ListOffsets through, asking to see its response (as a filter that
    merged a refused part's errors would); records who sent it."""

    api_keys = frozenset({LIST_OFFSETS})

    def __init__(self) -> None:
        self.sessions: list[EdgeSession] = []

    def on_request(self, session: EdgeSession, entry: InFlight, payload: bytes) -> RequestOutcome:
        self.sessions.append(session)
        entry.reshape = lambda response: response + b"+merged"
        return PASS


class Watched:
    """A watch's events, in order: ``("response", payload or None)``, ``("lost",)``."""

    def __init__(self, events: list[tuple[object, ...]], correlation_id: int) -> None:
        self.events = events
        self.correlation_id = correlation_id

    def response(self, payload: bytes | None) -> None:
        self.events.append(("response", self.correlation_id, payload))

    def lost(self) -> None:
        self.events.append(("lost", self.correlation_id))


class WatchCreateTopics(RequestFilter):
    """Only reads CreateTopics requests and their responses (as the audit trail does)."""

    api_keys = frozenset({CREATE_TOPICS})
    watcher = True

    def __init__(self) -> None:
        self.events: list[tuple[object, ...]] = []

    def on_request(self, session: EdgeSession, entry: InFlight, payload: bytes) -> RequestOutcome:
        self.events.append(("request", entry.correlation_id, payload))
        entry.watch = Watched(self.events, entry.correlation_id)
        return PASS

    def on_unread(self, session: EdgeSession, entry: InFlight) -> None:
        self.events.append(("unread", entry.correlation_id))
        entry.watch = Watched(self.events, entry.correlation_id)


class MarkMetadata(ResponseFilter):
    api_keys = frozenset({METADATA})

    def on_response(self, session: EdgeSession, entry: InFlight, payload: bytes) -> bytes:
        return payload + b"+rewritten"


def limits(**given: int) -> ProxyBounds:
    """Bounds as serve builds them with Kafka's defaults, ``given`` replaced."""
    settled = ProxyBounds.from_settings(
        max_request=104857600, max_parsed_request=524288, upstream_timeout_ms=30000
    )
    return dataclasses.replace(settled, **given)


SESSION = EdgeSession(KafkaPrincipal.user("alice"), "127.0.0.1", "c1")


def chain(*requests: RequestFilter) -> FilterChain:
    return FilterChain([EdgeRequestFilter(frozenset({HANDSHAKE})), *requests], [MarkMetadata()])


@dataclass
class Driver:
    """Carries out a proxy's actions the way the asyncio adapter does, recording them."""

    proxy: ProxyConnection
    to_client: bytearray = field(default_factory=bytearray)
    to_cluster: bytearray = field(default_factory=bytearray)
    local: list[bytes] = field(default_factory=list)
    reading: bool = True
    cluster_reading: bool = True
    relogins: int = 0
    timer: float | None = None
    closed: CloseConnection | None = None

    def run(self, actions: list[Action]) -> None:
        for action in actions:
            if isinstance(action, ToClient):
                self.to_client += b"".join(bytes(c) for c in action.chunks)
            elif isinstance(action, ToCluster):
                self.to_cluster += b"".join(bytes(c) for c in action.chunks)
            elif isinstance(action, AnswerLocally):
                self.local.append(action.frame)
            elif isinstance(action, ReadClient):
                assert action.reading is not self.reading, "told what it already knew"
                self.reading = action.reading
            elif isinstance(action, ReadCluster):
                self.cluster_reading = action.reading
            elif isinstance(action, Relogin):
                self.relogins += 1
            elif isinstance(action, SetTimer):
                self.timer = action.at
            elif isinstance(action, CloseConnection):
                assert self.closed is None
                self.closed = action

    def client(self, data: bytes) -> None:
        self.run(self.proxy.client_data(data))

    def cluster(self, data: bytes) -> None:
        self.run(self.proxy.cluster_data(data))


def opened(
    bounds: ProxyBounds | None = None,
    filters: FilterChain | None = None,
    *,
    lifetime_ms: int = 0,
    session_valid: bool = True,
    counted: list[tuple[int, int]] | None = None,
) -> Driver:
    proxy = ProxyConnection(
        bounds or limits(),
        (filters or chain()).bind(SESSION),
        forwarded=FORWARDED,
        session_valid=lambda: session_valid,
        observe_request=None if counted is None else lambda *seen: counted.append(seen),
    )
    driver = Driver(proxy)
    driver.run(proxy.upstream_ready(100.0, lifetime_ms))
    return driver


def test_pipelined_requests_go_up_in_order_and_their_responses_come_back() -> None:
    d = opened()
    requests = [request(FETCH, 12, cid, b"body") for cid in (1, 2, 3)]
    d.client(b"".join(requests))
    assert bytes(d.to_cluster) == b"".join(requests)
    assert d.proxy.in_flight == 3
    responses = [response(cid, b"records" * cid) for cid in (1, 2, 3)]
    d.cluster(b"".join(responses))
    assert bytes(d.to_client) == b"".join(responses)
    assert d.proxy.in_flight == 0
    assert d.proxy.phase is Phase.FORWARDING and d.closed is None


def test_an_answer_made_at_the_edge_keeps_its_place_between_forwarded_requests() -> None:
    d = opened(filters=chain(DenyCreateTopics()))
    first, denied, third = (
        request(FETCH, 12, 1, b"a"),
        request(CREATE_TOPICS, 7, 2, b"t"),
        request(FETCH, 12, 3, b"c"),
    )
    d.client(first + denied + third)
    # The cluster never sees the request answered at the edge.
    assert bytes(d.to_cluster) == first + third
    assert d.to_client == b""  # not before the answer to request 1
    d.cluster(response(1, b"first"))
    assert bytes(d.to_client) == response(1, b"first") + response(2, b"denied")
    d.cluster(response(3, b"third"))
    assert bytes(d.to_client).endswith(response(3, b"third"))
    assert d.proxy.in_flight == 0


def test_an_answer_made_at_the_edge_with_nothing_in_flight_goes_out_at_once() -> None:
    d = opened(filters=chain(DenyCreateTopics()))
    d.client(request(CREATE_TOPICS, 7, 9, b"t"))
    assert bytes(d.to_client) == response(9, b"denied")
    assert d.to_cluster == b""


def test_a_filter_reshapes_the_response_of_its_own_request_only() -> None:
    reshaping = ReshapeOwnResponse()
    d = opened(filters=chain(reshaping))
    d.client(request(LIST_OFFSETS, 5, 1, b"q") + request(FETCH, 12, 2, b"f"))
    assert reshaping.sessions == [SESSION]
    # Split mid-frame: the reshaped response is buffered whole, the next streams.
    both = response(1, b"offsets") + response(2, b"records")
    d.cluster(both[:7])
    assert d.to_client == b""
    d.cluster(both[7:])
    assert bytes(d.to_client) == response(1, b"offsets+merged") + response(2, b"records")


def test_a_rewriting_filter_changes_what_the_cluster_gets() -> None:
    d = opened(filters=chain(PassEverything(), TagListOffsets()))
    d.client(request(LIST_OFFSETS, 5, 4, b"q") + request(CREATE_TOPICS, 7, 5, b"t"))
    assert bytes(d.to_cluster) == frame(
        struct.pack(">hhi", LIST_OFFSETS, 5, 4) + b"q!tag"
    ) + request(CREATE_TOPICS, 7, 5, b"t")
    assert d.proxy.in_flight == 2


def test_a_response_filter_rewrites_whole_responses_to_its_apis() -> None:
    d = opened()
    d.client(request(METADATA, 12, 1, b"") + request(FETCH, 12, 2, b""))
    d.cluster(response(1, b"brokers") + response(2, b"data"))
    assert bytes(d.to_client) == frame(struct.pack(">i", 1) + b"brokers+rewritten") + response(
        2, b"data"
    )


def test_a_request_for_the_edge_waits_for_those_before_it_and_holds_those_after() -> None:
    d = opened()
    handshake = request(HANDSHAKE, 1, 2, b"SCRAM")
    d.client(request(FETCH, 12, 1, b"a") + handshake + request(FETCH, 12, 3, b"c"))
    assert bytes(d.to_cluster) == request(FETCH, 12, 1, b"a")
    assert d.proxy.phase is Phase.ANSWERING_LOCALLY and not d.reading
    assert d.local == []  # request 1 is still unanswered
    d.cluster(response(1, b"x"))
    assert d.local == [handshake]
    d.run(d.proxy.local_answered())
    assert d.proxy.phase is Phase.FORWARDING and d.reading
    assert bytes(d.to_cluster).endswith(request(FETCH, 12, 3, b"c"))


def test_reauthentication_due_with_requests_in_flight_waits_for_their_answers() -> None:
    d = opened(lifetime_ms=10_000)
    assert d.timer == pytest.approx(100.0 + 8.5)
    d.client(request(FETCH, 12, 1, b"a") + request(FETCH, 12, 2, b"b"))
    d.run(d.proxy.tick(108.0))  # a timer firing early is set again
    assert d.timer == pytest.approx(108.5) and d.proxy.phase is Phase.FORWARDING
    d.run(d.proxy.tick(108.6))
    assert d.proxy.phase is Phase.REAUTH_DUE and not d.reading and d.relogins == 0
    d.cluster(response(1, b"x"))
    assert d.relogins == 0
    d.cluster(response(2, b"y"))
    assert d.relogins == 1 and d.proxy.phase is Phase.RELOGGING
    # Bytes read before the pause took effect are held, then forwarded.
    d.client(request(FETCH, 12, 3, b"late"))
    assert not bytes(d.to_cluster).endswith(request(FETCH, 12, 3, b"late"))
    d.run(d.proxy.relogin_done(110.0, 10_000))
    assert d.proxy.phase is Phase.FORWARDING and d.reading
    assert bytes(d.to_cluster).endswith(request(FETCH, 12, 3, b"late"))
    assert d.timer == pytest.approx(118.5)


def test_a_relogin_due_is_kept_across_requests_for_the_edge() -> None:
    """Re-authentication falls due while the edge answers a request, and the
    next request is the edge's too (a client re-authenticating at the edge,
    pipelined ApiVersions): the re-login at the cluster still happens."""
    d = opened(lifetime_ms=1000)
    d.client(request(HANDSHAKE, 1, 1, b"") + request(HANDSHAKE, 1, 2, b""))
    assert len(d.local) == 1
    d.run(d.proxy.tick(101.0))
    d.run(d.proxy.local_answered())
    assert len(d.local) == 2 and d.relogins == 0
    d.run(d.proxy.local_answered())
    assert d.relogins == 1 and d.proxy.phase is Phase.RELOGGING


def test_a_request_for_the_edge_read_while_a_relogin_is_due_keeps_it_due() -> None:
    d = opened(lifetime_ms=1000)
    d.client(request(FETCH, 12, 1, b"a"))
    d.run(d.proxy.tick(101.0))
    assert d.proxy.phase is Phase.REAUTH_DUE
    d.client(request(HANDSHAKE, 1, 2, b""))  # read before the pause took effect
    d.cluster(response(1, b"x"))
    assert len(d.local) == 1 and d.relogins == 0
    d.run(d.proxy.local_answered())
    assert d.relogins == 1 and d.proxy.phase is Phase.RELOGGING


def test_a_failed_relogin_closes() -> None:
    d = opened(lifetime_ms=1000)
    d.run(d.proxy.tick(101.0))
    assert d.relogins == 1
    d.run(d.proxy.relogin_failed("refused"))
    assert d.closed is not None and "re-authentication failed: refused" in d.closed.reason
    assert d.proxy.phase is Phase.CLOSED


def test_the_upstream_lost_in_the_middle_of_a_response_closes_the_client() -> None:
    d = opened()
    d.client(request(FETCH, 12, 1, b""))
    d.cluster(response(1, b"x" * 100)[:50])
    d.run(d.proxy.upstream_lost("the broker closed it"))
    assert d.closed is not None and d.closed.reason == "the broker closed it"
    d.cluster(b"more")  # nothing happens once closed
    assert len(d.to_client) == 50


def test_a_client_that_does_not_read_stops_our_reads_from_the_cluster() -> None:
    d = opened()
    d.run(d.proxy.client_writable(False))
    assert not d.cluster_reading
    d.run(d.proxy.client_writable(True))
    assert d.cluster_reading


def test_a_relogin_reads_the_cluster_while_the_client_does_not_read() -> None:
    """The client's back-pressure pauses our reads from the cluster, but a due
    re-login must read the cluster's answer to it: nothing is in flight then,
    so nothing read is the client's. Once logged in again, the pause is back
    while the client still does not read."""
    d = opened(lifetime_ms=1000)
    d.run(d.proxy.client_writable(False))
    assert not d.cluster_reading
    d.run(d.proxy.tick(101.0))
    assert d.relogins == 1 and d.cluster_reading
    d.run(d.proxy.relogin_done(102.0, 1000))
    assert d.proxy.phase is Phase.FORWARDING and not d.cluster_reading
    d.run(d.proxy.client_writable(True))
    assert d.cluster_reading


def test_a_client_that_stops_reading_during_a_relogin_pauses_the_cluster_after_it() -> None:
    d = opened(lifetime_ms=1000)
    d.run(d.proxy.tick(101.0))
    assert d.proxy.phase is Phase.RELOGGING
    d.run(d.proxy.client_writable(False))
    assert d.cluster_reading  # the re-login's answer is still to be read
    d.run(d.proxy.relogin_done(102.0, 1000))
    assert not d.cluster_reading


def test_a_client_that_stopped_reading_before_the_upstream_opened_pauses_it_once_open() -> None:
    proxy = ProxyConnection(limits(), chain().bind(SESSION), forwarded=FORWARDED)
    # No upstream connection to pause yet: the adapter could only drop the pause.
    assert proxy.client_writable(False) == []
    d = Driver(proxy)
    d.run(proxy.upstream_ready(100.0, 0))
    assert not d.cluster_reading


def test_nothing_happens_once_closed_not_even_a_timer() -> None:
    d = opened(lifetime_ms=10_000)
    d.proxy.close()
    assert d.proxy.tick(101.0) == []  # a timer firing early, after the close
    assert d.proxy.tick(200.0) == []
    assert d.proxy.client_writable(False) == []


def test_a_cluster_that_does_not_read_pauses_the_client() -> None:
    d = opened()
    d.run(d.proxy.cluster_writable(False))
    assert not d.reading
    d.run(d.proxy.cluster_writable(True))
    assert d.reading


def test_an_expired_session_is_closed_at_its_next_request() -> None:
    counted: list[tuple[int, int]] = []
    d = opened(session_valid=False, counted=counted)
    d.client(request(FETCH, 12, 1, b""))
    assert d.closed is not None and "session expired" in d.closed.reason
    assert d.to_cluster == b""
    assert counted == []  # the forwarding metrics count what was written upstream


def test_forwarded_requests_are_counted_once_written() -> None:
    counted: list[tuple[int, int]] = []
    d = opened(counted=counted)
    first = request(FETCH, 12, 1, b"abc")
    d.client(first[:10])
    d.client(first[10:] + request(LIST_OFFSETS, 5, 2, b""))
    assert counted == [(FETCH, len(first)), (LIST_OFFSETS, len(request(LIST_OFFSETS, 5, 2, b"")))]


# -- every bound reached ---------------------------------------------------------------
def test_a_request_over_socket_request_max_bytes_closes() -> None:
    d = opened(limits(max_request=100))
    d.client(request(FETCH, 12, 1, b"x" * 200))
    assert d.closed is not None and d.closed.event == "protocol_error"
    assert "outside" in d.closed.reason and d.to_cluster == b""


def test_a_request_for_the_edge_over_its_cap_closes() -> None:
    d = opened(limits(max_parsed_request=64))
    d.client(request(HANDSHAKE, 1, 1, b"x" * 100))
    assert d.closed is not None and "to parse exceeds 64" in d.closed.reason


def test_a_request_a_filter_reads_whole_is_bounded_by_the_request_size_only() -> None:
    d = opened(limits(max_parsed_request=64, max_request=1000), chain(DenyCreateTopics()))
    d.client(request(CREATE_TOPICS, 7, 1, b"x" * 100))
    assert d.closed is None and bytes(d.to_client) == response(1, b"denied")


def test_a_rewritten_response_over_its_cap_closes() -> None:
    d = opened(limits(max_rewritten_response=64))
    d.client(request(METADATA, 12, 1, b""))
    d.cluster(response(1, b"b" * 100))
    assert d.closed is not None and d.closed.reason.startswith("cluster:")


def test_requests_in_flight_pause_the_client_then_close_past_the_hard_bound() -> None:
    d = opened(limits(pause_in_flight=2, max_in_flight=3))
    d.client(request(FETCH, 12, 1, b"") + request(FETCH, 12, 2, b""))
    assert not d.reading
    d.cluster(response(1, b""))
    assert d.reading
    # What was read before the pause took effect may pass the soft bound, not the hard one.
    d.client(b"".join(request(FETCH, 12, cid, b"") for cid in (3, 4, 5)))
    assert d.closed is not None and "more than 3 requests in flight" in d.closed.reason


def test_bytes_held_while_opening_pause_the_client_then_close() -> None:
    proxy = ProxyConnection(limits(pause_held=10, max_held=20), chain().bind(SESSION))
    d = Driver(proxy)
    d.client(b"x" * 5)
    assert d.reading
    d.client(b"x" * 5)
    assert not d.reading
    d.client(b"x" * 11)
    assert d.closed is not None and "while the upstream connection opened" in d.closed.reason


def test_a_verdict_sent_while_opening_holds_the_first_bytes_ahead_of_the_rest() -> None:
    # The cluster was slow to take our login: the client heard its verdict, and
    # what it sent with its last login message comes before what it sent since.
    proxy = ProxyConnection(limits(), chain().bind(SESSION), forwarded=FORWARDED)
    d = Driver(proxy)
    first, second, third = (request(FETCH, 12, cid, b"x") for cid in (1, 2, 3))
    d.client(second)
    d.run(proxy.verdict_sent(first))
    d.client(third)
    assert d.to_cluster == b"" and proxy.phase is Phase.OPENING
    d.run(proxy.upstream_ready(100.0, 0))
    assert bytes(d.to_cluster) == first + second + third
    assert proxy.in_flight == 3 and proxy.phase is Phase.FORWARDING


def test_the_first_bytes_of_a_verdict_sent_early_count_against_the_held_bound() -> None:
    proxy = ProxyConnection(limits(pause_held=10, max_held=20), chain().bind(SESSION))
    d = Driver(proxy)
    d.client(b"x" * 15)
    assert not d.reading
    d.run(proxy.verdict_sent(b"y" * 6))
    assert d.closed is not None and "more than 20 bytes" in d.closed.reason


def test_a_verdict_sent_after_the_upstream_opened_changes_nothing() -> None:
    d = opened()
    assert d.proxy.verdict_sent(b"late") == []
    assert d.to_cluster == b"" and d.proxy.phase is Phase.FORWARDING


def test_bytes_held_behind_a_request_for_the_edge_close_past_the_bound() -> None:
    d = opened(limits(pause_held=10, max_held=20))
    d.client(request(FETCH, 12, 1, b"") + request(HANDSHAKE, 1, 2, b""))
    assert not d.reading
    d.client(b"y" * 21)
    assert d.closed is not None and "more than 20 bytes" in d.closed.reason


def test_bytes_held_during_a_relogin_close_past_the_bound() -> None:
    d = opened(limits(pause_held=10, max_held=20), lifetime_ms=1000)
    d.run(d.proxy.tick(101.0))
    assert d.proxy.phase is Phase.RELOGGING
    d.client(b"z" * 21)
    assert d.closed is not None and "during a re-authentication" in d.closed.reason


def test_the_bounds_refuse_a_pause_above_their_hard_limit() -> None:
    with pytest.raises(ValueError, match="pause_held"):
        limits(pause_held=10, max_held=5)


# -- arbitrary chunking of both streams ------------------------------------------------
_KINDS = st.sampled_from(["fetch", "metadata", "denied", "edge"])


@settings(max_examples=150, deadline=None)
@given(
    kinds=st.lists(_KINDS, min_size=1, max_size=8),
    client_cuts=st.lists(st.integers(0, 5000), max_size=10),
    cluster_cuts=st.lists(st.integers(0, 5000), max_size=10),
)
def test_any_chunking_of_both_streams_gives_the_same_answers_in_order(
    kinds: list[str], client_cuts: list[int], cluster_cuts: list[int]
) -> None:
    d = opened(filters=chain(DenyCreateTopics()))
    stream, expected, answers_from_cluster = b"", b"", []
    for cid, kind in enumerate(kinds):
        body = bytes([cid]) * (cid * 37 % 300)
        if kind == "fetch":
            stream += request(FETCH, 12, cid, body)
            answer = response(cid, body * 2)
            answers_from_cluster.append(answer)
        elif kind == "metadata":
            stream += request(METADATA, 12, cid, b"")
            answers_from_cluster.append(response(cid, body))
            answer = frame(struct.pack(">i", cid) + body + b"+rewritten")
        elif kind == "denied":
            stream += request(CREATE_TOPICS, 7, cid, body)
            answer = response(cid, b"denied")
        else:
            stream += request(HANDSHAKE, 1, cid, body)
            answer = response(cid, b"edge")
        expected += answer
    pending_cluster = b"".join(answers_from_cluster)
    client_chunks = chunked(stream, client_cuts)
    while d.closed is None:
        if d.local:
            # The edge answers its request in order; the adapter writes it.
            handed = d.local.pop()
            cid = struct.unpack_from(">i", handed, 8)[0]
            d.to_client += response(cid, b"edge")
            d.run(d.proxy.local_answered())
        elif client_chunks and d.reading:
            d.client(client_chunks.pop(0))
        elif d.to_cluster:
            # The cluster answers whatever it was sent, in any chunking.
            sent = complete_frames(d.to_cluster)
            if not sent:
                break
            ours, pending_cluster = _take_answers(pending_cluster, sent)
            for chunk in chunked(ours, cluster_cuts):
                d.cluster(chunk)
        else:
            break
    assert d.closed is None
    assert bytes(d.to_client) == expected
    assert d.proxy.in_flight == 0


def complete_frames(buffer: bytearray) -> int:
    """How many whole frames ``buffer`` starts with; they are taken out of it."""
    count = pos = 0
    while pos + 4 <= len(buffer):
        size = struct.unpack_from(">i", buffer, pos)[0]
        if pos + 4 + size > len(buffer):
            break
        pos += 4 + size
        count += 1
    del buffer[:pos]
    return count


def _take_answers(pending: bytes, count: int) -> tuple[bytes, bytes]:
    pos = 0
    for _ in range(count):
        pos += 4 + struct.unpack_from(">i", pending, pos)[0]
    return pending[:pos], pending[pos:]


# -- watchers: the audit trail reads, never holds traffic up ---------------------------


def test_a_watcher_reads_its_requests_and_their_responses_which_pass_unchanged() -> None:
    watcher = WatchCreateTopics()
    d = opened(filters=chain(watcher))
    create = request(CREATE_TOPICS, 7, 1, b"topics")
    d.client(create + request(FETCH, 12, 2, b"f"))
    assert bytes(d.to_cluster) == create + request(FETCH, 12, 2, b"f")
    both = response(1, b"created") + response(2, b"records")
    d.cluster(both[:6])  # the watched response is read whole before it goes on
    assert d.to_client == b""
    d.cluster(both[6:])
    assert bytes(d.to_client) == both
    assert watcher.events == [
        ("request", 1, create[4:]),
        ("response", 1, struct.pack(">i", 1) + b"created"),
    ]


def test_a_watched_request_too_large_to_read_streams_through_unread() -> None:
    """Past max_parsed_request a watched request is forwarded as it comes, in
    slices: the watcher is told it went unread, and still sees the response."""
    watcher = WatchCreateTopics()
    d = opened(limits(max_parsed_request=64), filters=chain(watcher))
    big = request(CREATE_TOPICS, 7, 1, b"t" * 100)
    d.client(big[:50])
    assert bytes(d.to_cluster) == big[:50]  # not held back to be read whole
    d.client(big[50:])
    assert bytes(d.to_cluster) == big
    assert watcher.events == [("unread", 1)]
    d.cluster(response(1, b"ok"))
    assert watcher.events[-1] == ("response", 1, struct.pack(">i", 1) + b"ok")
    assert bytes(d.to_client) == response(1, b"ok")


def test_a_watched_response_too_large_to_read_streams_through() -> None:
    watcher = WatchCreateTopics()
    d = opened(limits(max_parsed_request=64), filters=chain(watcher))
    d.client(request(CREATE_TOPICS, 7, 1, b"t"))
    big = response(1, b"r" * 100)
    d.cluster(big[:30])
    assert bytes(d.to_client) == big[:30]
    assert watcher.events[1:] == [("response", 1, None)]
    d.cluster(big[30:])
    assert bytes(d.to_client) == big and d.closed is None


def test_a_watch_hears_of_a_response_lost_when_the_connection_closes() -> None:
    """The cluster may have acted on a request whose response never came: each
    watch in flight, the one whose response was half read too, is told once."""
    watcher = WatchCreateTopics()
    d = opened(filters=chain(watcher))
    d.client(b"".join(request(CREATE_TOPICS, 7, cid, b"t") for cid in (1, 2, 3)))
    d.cluster(response(1, b"done") + response(2, b"half")[:7])
    d.run(d.proxy.upstream_lost("the broker closed it"))
    assert [e for e in watcher.events if e[0] != "request"] == [
        ("response", 1, struct.pack(">i", 1) + b"done"),
        ("lost", 2),
        ("lost", 3),
    ]
    d.proxy.close()  # the client connection goes too: nothing is told twice
    assert len(watcher.events) == 6


def test_a_watch_in_flight_when_the_client_leaves_is_told_it_is_lost() -> None:
    watcher = WatchCreateTopics()
    d = opened(filters=chain(watcher))
    d.client(request(CREATE_TOPICS, 7, 1, b"t"))
    d.proxy.close()
    assert watcher.events[1:] == [("lost", 1)]


def test_a_key_another_filter_needs_whole_is_never_let_through_unread() -> None:
    """A watcher shares CreateTopics with a filter that answers it: the request
    is read whole, as any request a policy must read (bounded by the request
    size alone, as Kafka reads requests), and answered; never let through."""
    d = opened(
        limits(max_parsed_request=64), filters=chain(WatchCreateTopics(), DenyCreateTopics())
    )
    d.client(request(CREATE_TOPICS, 7, 1, b"t" * 100))
    assert d.closed is None and d.to_cluster == b""
    assert bytes(d.to_client) == response(1, b"denied")
