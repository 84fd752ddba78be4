"""The forwarding fast path (``ProxyConnection.forward_client`` and
``forward_cluster``, then ``take_actions``) against the general path
(``client_data`` and ``cluster_data``): two connections fed the same events,
one driven each way, must write the same bytes in the same order and pause
and resume at the same events."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from sasl_scram.frontdoor import Action
from sasl_scram.frontdoor import AnswerLocally
from sasl_scram.frontdoor import Chunk
from sasl_scram.frontdoor import CloseConnection
from sasl_scram.frontdoor import Phase
from sasl_scram.frontdoor import ProxyConnection
from sasl_scram.frontdoor import ReadClient
from sasl_scram.frontdoor import ReadCluster
from sasl_scram.frontdoor import Relogin
from sasl_scram.frontdoor import SetTimer
from sasl_scram.frontdoor import ToClient
from sasl_scram.frontdoor import ToCluster
from tests.sasl_scram.frontdoor.test_proxy import CREATE_TOPICS
from tests.sasl_scram.frontdoor.test_proxy import FETCH
from tests.sasl_scram.frontdoor.test_proxy import FORWARDED
from tests.sasl_scram.frontdoor.test_proxy import HANDSHAKE
from tests.sasl_scram.frontdoor.test_proxy import METADATA
from tests.sasl_scram.frontdoor.test_proxy import SESSION
from tests.sasl_scram.frontdoor.test_proxy import DenyCreateTopics
from tests.sasl_scram.frontdoor.test_proxy import chain
from tests.sasl_scram.frontdoor.test_proxy import complete_frames
from tests.sasl_scram.frontdoor.test_proxy import limits
from tests.sasl_scram.frontdoor.test_splitter import request
from tests.sasl_scram.frontdoor.test_splitter import response

#: One observable effect: what was written where, a pause, a timer, a close.
Effect = tuple[str, object]


@dataclass
class Side:
    """One connection and what it did, event by event."""

    proxy: ProxyConnection
    fast: bool
    effects: list[list[Effect]] = field(default_factory=list)
    sent: bytearray = field(default_factory=bytearray)
    local: list[bytes] = field(default_factory=list)
    reading: bool = True
    relogin: bool = False
    session: list[bool] = field(default_factory=lambda: [True])
    fast_hits: int = 0

    def record(self, actions: list[Action]) -> None:
        out: list[Effect] = []
        for action in actions:
            if type(action) is ToCluster:
                out.append(self._up(action.chunks))
            elif type(action) is ToClient:
                out.append(("client", b"".join(bytes(c) for c in action.chunks)))
            elif type(action) is ReadClient:
                self.reading = action.reading
                out.append(("read client", action.reading))
            elif type(action) is ReadCluster:
                out.append(("read cluster", action.reading))
            elif type(action) is AnswerLocally:
                self.local.append(action.frame)
                out.append(("local", action.frame))
            elif type(action) is Relogin:
                self.relogin = True
                out.append(("relogin", None))
            elif type(action) is SetTimer:
                out.append(("timer", action.at))
            elif type(action) is CloseConnection:
                out.append(("close", (action.reason, action.event)))
        self.effects.append(out)

    def _up(self, chunks: list[Chunk]) -> Effect:
        data = b"".join(bytes(c) for c in chunks)
        self.sent += data
        return ("cluster", data)

    def client(self, data: bytes) -> None:
        if not self.fast:
            self.record(self.proxy.client_data(data))
            return
        # As ProxyAdapter.client_data: chunks straight to the cluster's writelines.
        chunks = self.proxy.forward_client(data)
        if chunks is None:
            self.record(self.proxy.take_actions())
            return
        self.fast_hits += 1
        self.effects.append([self._up(chunks)] if chunks else [])

    def cluster(self, data: bytes) -> None:
        if not self.fast:
            self.record(self.proxy.cluster_data(data))
            return
        chunks = self.proxy.forward_cluster(data)
        if chunks is None:
            self.record(self.proxy.take_actions())
            return
        self.fast_hits += 1
        joined = b"".join(bytes(c) for c in chunks)
        self.effects.append([("client", joined)] if chunks else [])


def twins(lifetime_ms: int, pause_in_flight: int) -> tuple[Side, Side]:
    sides = []
    for fast in (False, True):
        alive = [True]
        proxy = ProxyConnection(
            limits(pause_in_flight=pause_in_flight),
            chain(DenyCreateTopics()).bind(SESSION),
            forwarded=FORWARDED,
            session_valid=_valid(alive),
        )
        side = Side(proxy, fast, session=alive)
        side.record(proxy.upstream_ready(100.0, lifetime_ms))
        sides.append(side)
    return sides[0], sides[1]


def _valid(alive: list[bool]) -> Callable[[], bool]:
    return lambda: alive[0]


_KIND = st.sampled_from(["fetch", "metadata", "denied", "edge"])
_BYTES = st.one_of(
    st.tuples(st.just("client"), st.integers(1, 400)),
    st.tuples(st.just("cluster"), st.integers(1, 400)),
)
# Mostly bytes, as a connection's life is.
_EVENT = st.one_of(
    _BYTES,
    _BYTES,
    _BYTES,
    _BYTES,
    st.tuples(st.just("cluster writable"), st.booleans()),
    st.tuples(st.just("client writable"), st.booleans()),
    st.tuples(st.just("tick"), st.floats(0, 2)),
    st.tuples(st.just("edge answers"), st.none()),
    st.tuples(st.just("relogin done"), st.none()),
    st.tuples(st.just("session expires"), st.none()),
)


def _stream(kinds: list[str]) -> tuple[bytes, list[bytes]]:
    """The client's requests and the cluster's answers to those it forwards."""
    stream, answers = b"", []
    for cid, kind in enumerate(kinds):
        body = bytes([cid]) * (cid * 37 % 300)
        if kind == "fetch":
            stream += request(FETCH, 12, cid, body)
            answers.append(response(cid, body * 2))
        elif kind == "metadata":
            stream += request(METADATA, 12, cid, b"")
            answers.append(response(cid, body))
        elif kind == "denied":
            stream += request(CREATE_TOPICS, 7, cid, body)
        else:
            stream += request(HANDSHAKE, 1, cid, body)
    return stream, answers


@settings(max_examples=300, deadline=None)
@given(
    kinds=st.lists(_KIND, min_size=1, max_size=30),
    events=st.lists(_EVENT, max_size=80),
    lifetime_ms=st.sampled_from([0, 1000]),
    pause_in_flight=st.integers(1, 4),
)
def test_the_fast_path_writes_and_pauses_as_the_general_path_does(
    kinds: list[str], events: list[tuple[str, object]], lifetime_ms: int, pause_in_flight: int
) -> None:
    general, fast = twins(lifetime_ms, pause_in_flight)
    stream, answers = _stream(kinds)
    feed = Feed(stream, answers)
    for kind, value in events:
        feed.apply(kind, value, general, fast)
    # Then the rest of both streams, the edge answering and the re-logins done.
    settle = [("cluster writable", True), ("client writable", True), ("edge answers", None)]
    for _ in range(4 * len(kinds) + 4):
        for kind, value in [*settle, ("relogin done", None), ("client", 97), ("cluster", 89)]:
            feed.apply(kind, value, general, fast)
    assert fast.effects == general.effects
    assert fast.sent == general.sent


@dataclass
class Feed:
    """Both streams, fed to both sides alike."""

    stream: bytes
    answers: list[bytes]
    client_pos: int = 0
    cluster_pos: int = 0
    now: float = 100.0

    def apply(self, kind: str, value: object, general: Side, fast: Side) -> None:
        if kind == "client" and general.reading:
            assert isinstance(value, int)
            data = self.stream[self.client_pos : self.client_pos + value]
            self.client_pos += len(data)
            for side in (general, fast):
                side.client(data)
        elif kind == "cluster":
            # The cluster answers only what it was sent (in whole frames).
            assert isinstance(value, int)
            due = b"".join(self.answers[: _frames(general.sent)])
            data = due[self.cluster_pos : self.cluster_pos + value]
            self.cluster_pos += len(data)
            for side in (general, fast):
                side.cluster(data)
        elif kind != "client":
            self.now = _other(kind, value, self.now, general, fast)
        assert fast.effects == general.effects
        assert fast.proxy.phase is general.proxy.phase
        assert fast.proxy.in_flight == general.proxy.in_flight


def _other(kind: str, value: object, now: float, *sides: Side) -> float:
    """The events other than bytes, applied to each side alike; the clock."""
    for side in sides:
        proxy = side.proxy
        if kind == "cluster writable":
            assert isinstance(value, bool)
            side.record(proxy.cluster_writable(value))
        elif kind == "client writable":
            assert isinstance(value, bool)
            side.record(proxy.client_writable(value))
        elif kind == "tick":
            assert isinstance(value, float)
            side.record(proxy.tick(now + value))
        elif kind == "edge answers" and side.local:
            side.local.pop()
            side.record(proxy.local_answered())
        elif kind == "relogin done" and side.relogin:
            side.relogin = False
            side.record(proxy.relogin_done(now, 1000))
        elif kind == "session expires":
            side.session[0] = False
        else:
            side.effects.append([])
    return now + value if isinstance(value, float) else now


def _frames(sent: bytes | bytearray) -> int:
    """How many whole frames ``sent`` holds."""
    return complete_frames(bytearray(sent))  # counts them in a copy it empties


def test_plain_forwarding_takes_the_fast_path_with_no_action_objects() -> None:
    general, fast = twins(0, 4)
    first = request(FETCH, 12, 1, b"records")
    chunks = fast.proxy.forward_client(first)
    assert chunks is not None and b"".join(bytes(c) for c in chunks) == first
    assert fast.proxy.forward_client(b"") == []
    answer = response(1, b"data")
    back = fast.proxy.forward_cluster(answer)
    assert back is not None and b"".join(bytes(c) for c in back) == answer
    assert general.proxy.client_data(first)[0].chunks == chunks  # type: ignore[union-attr]


def test_an_event_that_pauses_the_client_is_delivered_whole_by_take_actions() -> None:
    _, fast = twins(0, 1)
    first = request(FETCH, 12, 1, b"records")
    assert fast.proxy.forward_client(first) is None
    actions = fast.proxy.take_actions()
    assert [type(a) for a in actions] == [ToCluster, ReadClient]
    assert b"".join(bytes(c) for c in actions[0].chunks) == first  # type: ignore[union-attr]
    assert fast.proxy.take_actions() == []  # given once
    # The answer resumes the client: the general path's actions again.
    assert fast.proxy.forward_cluster(response(1, b"data")) is None
    resumed = fast.proxy.take_actions()
    assert [type(a) for a in resumed] == [ToClient, ReadClient]


def test_a_request_for_the_edge_leaves_the_fast_path() -> None:
    _, fast = twins(0, 4)
    assert fast.proxy.forward_client(request(HANDSHAKE, 1, 1, b"")) is None
    actions = fast.proxy.take_actions()
    assert [type(a) for a in actions] == [AnswerLocally, ReadClient]
    assert fast.proxy.phase is Phase.ANSWERING_LOCALLY
