"""Requests by topic id at an authorizing edge: the map of ids it learns, the
refresh a miss starts and its rate bound, and each API's rules by id."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from sasl_scram.frontdoor import PASS
from sasl_scram.frontdoor import FilterChain
from sasl_scram.frontdoor import Respond
from sasl_scram.frontdoor import Rewrite
from sasl_scram.frontdoor.authorization import AuthorizationFilter
from sasl_scram.frontdoor.authorization import TopicNames
from sasl_scram.frontdoor.authorization._heads import fetch_head
from tests.support.clock import FakeClock

from .test_filter import CLUSTER
from .test_filter import GAF
from .test_filter import GROUP
from .test_filter import TAF
from .test_filter import TXN
from .test_filter import Edge
from .test_filter import Op
from .test_filter import allow
from .test_filter import read_request
from .test_filter import read_response
from .test_filter import request
from .test_filter import response

UTI = 100
ORDERS, SECRET, NOBODY = (uuid.uuid4().bytes for _ in range(3))


class IdEdge(Edge):
    """An edge whose map knows ``orders`` and ``secret`` by id."""

    def __init__(self, *bindings: Any, **settings: Any) -> None:
        super().__init__(*bindings, **settings)
        self.names = TopicNames(FakeClock(100.0))
        self.refreshes = 0
        self.names.refresh = self._refresh
        self.names.learn(ORDERS, "orders")
        self.names.learn(SECRET, "secret")
        chain = AuthorizationFilter(lambda: self.acls, self.audited.append, topic_names=self.names)
        self.chain = FilterChain([chain])

    def _refresh(self) -> None:
        self.refreshes += 1


# -- the map ---------------------------------------------------------------------------


def test_the_map_is_bounded_and_forgets_the_oldest_learned_first() -> None:
    names = TopicNames(FakeClock(100.0), cap=2)
    a, b, c = (uuid.uuid4().bytes for _ in range(3))
    names.learn(a, "a")
    names.learn(b, "b")
    names.learn(a, "a")  # learned again: now the newest
    names.learn(c, "c")
    assert len(names) == 2
    assert (names.name(a), names.name(b), names.name(c)) == ("a", None, "c")
    names.learn(bytes(16), "zero")
    assert len(names) == 2 and names.name(bytes(16)) is None


def test_a_miss_starts_one_refresh_at_a_time_and_one_a_second_at_most() -> None:
    clock = FakeClock(100.0)
    names = TopicNames(clock)
    started: list[float] = []
    names.refresh = lambda: started.append(clock())
    for _ in range(100):  # a client naming random ids
        assert names.name(uuid.uuid4().bytes) is None
    assert len(started) == 1 and names.refreshing
    names.refresh_failed()
    names.name(NOBODY)
    assert len(started) == 1  # less than a second since the last one started
    clock.advance(1.0)
    names.name(NOBODY)
    assert len(started) == 2
    clock.advance(5.0)
    names.name(NOBODY)
    assert len(started) == 2  # the second is still running
    names.refreshed([{"name": "late", "topic_id": NOBODY}])
    assert names.name(NOBODY) == "late" and not names.refreshing
    assert names.name(bytes(16)) is None and len(started) == 2  # the zero id names nothing


def test_metadata_answers_teach_every_id_even_those_hidden_from_the_user() -> None:
    edge = IdEdge(allow("mine", Op.DESCRIBE))
    entry, _ = edge.ask(3, 12, {"topics": None, "allow_auto_topic_creation": False})
    mine, theirs = uuid.uuid4().bytes, uuid.uuid4().bytes
    topics = [{"name": "mine", "topic_id": mine, "partitions": []},
              {"name": "theirs", "topic_id": theirs, "partitions": []}]  # fmt: skip
    assert entry.reshape is not None
    merged = read_response(3, 12, entry.reshape(response(3, 12, {"topics": topics})))
    assert [t["name"] for t in merged["topics"]] == ["mine"]
    assert (edge.names.name(mine), edge.names.name(theirs)) == ("mine", "theirs")


def test_describe_topic_partitions_answers_teach_ids_too() -> None:
    edge = IdEdge(allow("new", Op.DESCRIBE))
    entry, _ = edge.ask(75, 0, {"topics": [{"name": "new"}], "response_partition_limit": 10})
    new = uuid.uuid4().bytes
    answer = {"topics": [{"name": "new", "topic_id": new, "partitions": []}]}
    assert entry.reshape is not None
    entry.reshape(response(75, 0, answer))
    assert edge.names.name(new) == "new"


# -- Fetch v13+ ------------------------------------------------------------------------


def fetch_body(*ids: bytes, replica: int = -1) -> dict[str, Any]:
    partitions = [{"partition": 0, "fetch_offset": 5, "partition_max_bytes": 1024}]
    return {"max_wait_ms": 500, "min_bytes": 1, "replica_id": replica, "session_id": 0,
            "session_epoch": -1, "topics": [{"topic_id": i, "partitions": partitions} for i in ids],
            "forgotten_topics_data": [], "rack_id": ""}  # fmt: skip


def codes(answer: dict[str, Any], topics: str = "responses", key: str = "topic_id") -> Any:
    return {t[key]: [p["error_code"] for p in t["partitions"]] for t in answer[topics]}


@pytest.mark.parametrize("version", [13, 15, 17, 18])
def test_fetch_by_id_known_and_allowed_goes_on_untouched(version: int) -> None:
    edge = IdEdge(allow("orders", Op.READ))
    entry, outcome = edge.ask(1, version, fetch_body(ORDERS))
    assert outcome is PASS and entry.reshape is None
    assert edge.refreshes == 0


@pytest.mark.parametrize("version", [13, 15, 18])
def test_fetch_by_id_denied_is_29_and_unknown_is_100_in_the_response_shape(version: int) -> None:
    edge = IdEdge(allow("orders", Op.READ), allow("secret", Op.READ, principal="User:bob"))
    answer = edge.refused(1, version, fetch_body(SECRET, NOBODY))
    assert codes(answer) == {SECRET: [TAF], NOBODY: [UTI]}
    partition = answer["responses"][0]["partitions"][0]
    assert partition["records"] == b"" and partition["high_watermark"] == -1
    assert edge.refreshes == 1  # the miss asked the cluster once
    # Mixed: the allowed topic goes on, the rest merged into the cluster's answer.
    entry, outcome = edge.ask(1, version, fetch_body(ORDERS, SECRET, NOBODY))
    assert type(outcome) is Rewrite
    assert [t["topic_id"] for t in read_request(1, version, outcome.payload)["topics"]] == [ORDERS]
    cluster = {"responses": [{"topic_id": ORDERS, "partitions": [{"partition_index": 0}]}]}
    assert entry.reshape is not None
    merged = read_response(1, version, entry.reshape(response(1, version, cluster)))
    assert codes(merged) == {ORDERS: [0], SECRET: [TAF], NOBODY: [UTI]}


def test_a_fetch_by_id_learned_after_a_miss_is_decided_on_its_name() -> None:
    edge = IdEdge(allow("later", Op.READ))
    later = uuid.uuid4().bytes
    assert codes(edge.refused(1, 15, fetch_body(later))) == {later: [UTI]}
    edge.names.refreshed([{"name": "later", "topic_id": later}])
    assert edge.ask(1, 15, fetch_body(later))[1] is PASS


def test_a_followers_fetch_by_id_needs_cluster_action() -> None:
    edge = IdEdge(allow("orders", Op.READ))
    assert codes(edge.refused(1, 13, fetch_body(ORDERS, NOBODY, replica=1))) == {
        ORDERS: [TAF],
        NOBODY: [TAF],
    }
    edge = IdEdge(allow("kafka-cluster", Op.CLUSTER_ACTION, CLUSTER))
    assert edge.ask(1, 13, fetch_body(ORDERS, NOBODY, replica=1))[1] is PASS


@pytest.mark.parametrize("version", [13, 14, 15, 16, 17, 18])
def test_the_fetch_walker_reads_ids_and_the_v15_replica_state(version: int) -> None:
    body = fetch_body(ORDERS, SECRET)
    if version >= 15:
        body["replica_state"] = {"replica_id": 3, "replica_epoch": 1}
    body["forgotten_topics_data"] = [{"topic_id": NOBODY, "partitions": [1, 2]}]
    head = fetch_head(request(1, version, body), 8, version)
    assert head.topic_ids == [ORDERS, SECRET] and head.topics == []
    assert head.replica_id == (3 if version >= 15 else -1)
    if version >= 15:
        del body["replica_state"]
        assert fetch_head(request(1, version, body), 8, version).replica_id == -1


# -- the group APIs, TxnOffsetCommit and DeleteTopics by id -----------------------------


def commit_body(*ids: bytes, txn: bool = False) -> dict[str, Any]:
    partitions = [{"partition_index": 0, "committed_offset": 3}]
    body: dict[str, Any] = {"group_id": "g", "member_id": "m",
            "topics": [{"topic_id": i, "partitions": partitions} for i in ids]}  # fmt: skip
    if txn:
        body.update(transactional_id="tx", producer_id=1, producer_epoch=0)
    return body


@pytest.mark.parametrize(("key", "version", "txn"), [(8, 10, False), (28, 6, True)])
def test_offset_commits_by_id(key: int, version: int, txn: bool) -> None:
    grants = [allow("g", Op.READ, GROUP), allow("orders", Op.READ), allow("tx", Op.WRITE, TXN)]
    edge = IdEdge(*grants, allow("secret", Op.READ, principal="User:bob"))
    assert edge.ask(key, version, commit_body(ORDERS, txn=txn))[1] is PASS
    answer = edge.refused(key, version, commit_body(SECRET, NOBODY, txn=txn))
    assert codes(answer, "topics") == {SECRET: [TAF], NOBODY: [UTI]}
    entry, outcome = edge.ask(key, version, commit_body(ORDERS, NOBODY, txn=txn))
    assert type(outcome) is Rewrite and entry.reshape is not None
    cluster = {"topics": [{"topic_id": ORDERS, "partitions": [{"partition_index": 0}]}]}
    merged = read_response(key, version, entry.reshape(response(key, version, cluster)))
    assert codes(merged, "topics") == {ORDERS: [0], NOBODY: [UTI]}
    # Without the group, every partition carries GROUP_AUTHORIZATION_FAILED, ids kept.
    edge = IdEdge(allow("orders", Op.READ), allow("tx", Op.WRITE, TXN))
    assert codes(edge.refused(key, version, commit_body(ORDERS, NOBODY, txn=txn)), "topics") == {
        ORDERS: [GAF],
        NOBODY: [GAF],
    }


def test_offset_fetch_v10_by_id() -> None:
    edge = IdEdge(allow("g", Op.DESCRIBE, GROUP), allow("orders", Op.DESCRIBE),
                  allow("secret", Op.DESCRIBE, principal="User:bob"))  # fmt: skip
    asked = [{"topic_id": i, "partition_indexes": [0]} for i in (ORDERS, SECRET, NOBODY)]
    entry, outcome = edge.ask(9, 10, {"groups": [{"group_id": "g", "topics": asked}]})
    assert type(outcome) is Rewrite and entry.reshape is not None
    [group] = read_request(9, 10, outcome.payload)["groups"]
    assert [t["topic_id"] for t in group["topics"]] == [ORDERS]
    part = {"partition_index": 0, "committed_offset": 1, "metadata": ""}
    cluster = {
        "groups": [{"group_id": "g", "topics": [{"topic_id": ORDERS, "partitions": [part]}]}]
    }
    merged = read_response(9, 10, entry.reshape(response(9, 10, cluster)))
    assert codes(merged["groups"][0], "topics") == {ORDERS: [0], SECRET: [TAF], NOBODY: [UTI]}
    # All topics: the answer keeps only ids the edge knows and the user may describe.
    entry, outcome = edge.ask(9, 10, {"groups": [{"group_id": "g", "topics": None}]})
    listed = [{"topic_id": i, "partitions": [part]} for i in (ORDERS, SECRET, NOBODY)]
    cluster = {"groups": [{"group_id": "g", "topics": listed}]}
    assert entry.reshape is not None
    merged = read_response(9, 10, entry.reshape(response(9, 10, cluster)))
    assert [t["topic_id"] for t in merged["groups"][0]["topics"]] == [ORDERS]


def test_delete_topics_v6_by_id_and_by_name() -> None:
    bob = "User:bob"
    edge = IdEdge(allow("orders", Op.DELETE), allow("orders", Op.DESCRIBE),
                  allow("secret", Op.DESCRIBE), allow("theirs", Op.ALL, principal=bob))  # fmt: skip
    topics: list[dict[str, Any]] = [{"name": None, "topic_id": i} for i in (ORDERS, SECRET, NOBODY)]
    topics.append({"name": "theirs", "topic_id": bytes(16)})
    entry, outcome = edge.ask(20, 6, {"topics": topics, "timeout_ms": 1000})
    assert type(outcome) is Rewrite and entry.reshape is not None
    assert [t["topic_id"] for t in read_request(20, 6, outcome.payload)["topics"]] == [ORDERS]
    cluster = {"responses": [{"name": "orders", "topic_id": ORDERS, "error_code": 0}]}
    merged = read_response(20, 6, entry.reshape(response(20, 6, cluster)))
    got = {(r["name"], r["topic_id"], r["error_code"]) for r in merged["responses"]}
    assert got == {("orders", ORDERS, 0), ("secret", SECRET, TAF), (None, NOBODY, UTI),
                   ("theirs", bytes(16), TAF)}  # fmt: skip
    # An id the user may not describe does not reveal its name.
    edge = IdEdge(
        allow("theirs", Op.ALL, principal="User:bob"), allow("secret", Op.ALL, principal="User:bob")
    )
    answer = edge.refused(20, 6, {"topics": [{"name": None, "topic_id": SECRET}], "timeout_ms": 1})
    assert [(r["name"], r["error_code"]) for r in answer["responses"]] == [(None, TAF)]


def test_unknown_ids_answered_at_the_edge_are_valid_responses() -> None:
    edge = IdEdge()
    for key, version, body in [(1, 15, fetch_body(NOBODY)), (8, 10, commit_body(NOBODY))]:
        _, outcome = edge.ask(key, version, body)
        assert type(outcome) is Respond
        read_response(key, version, outcome.payload)
