"""The edge's authorization filter, request by request, with no broker."""

from __future__ import annotations

import struct
from typing import Any

import pytest

from sasl_scram.authz import AccessControlEntry
from sasl_scram.authz import AclBinding
from sasl_scram.authz import AclOperation
from sasl_scram.authz import AclPermissionType
from sasl_scram.authz import Authorizer
from sasl_scram.authz import PatternType
from sasl_scram.authz import ResourcePattern
from sasl_scram.authz import ResourceType
from sasl_scram.config import KafkaPrincipal
from sasl_scram.frontdoor import PASS
from sasl_scram.frontdoor import EdgeSession
from sasl_scram.frontdoor import FilterChain
from sasl_scram.frontdoor import InFlight
from sasl_scram.frontdoor import PeerProtocolError
from sasl_scram.frontdoor import Respond
from sasl_scram.frontdoor import Rewrite
from sasl_scram.frontdoor.authorization import AuthorizationFilter
from sasl_scram.frontdoor.authorization import Decided
from sasl_scram.kafka._message_table import message_spec

Op = AclOperation
TOPIC, GROUP, CLUSTER, TXN = (
    ResourceType.TOPIC,
    ResourceType.GROUP,
    ResourceType.CLUSTER,
    ResourceType.TRANSACTIONAL_ID,
)
ALICE = EdgeSession(KafkaPrincipal.user("alice"), "10.0.0.5", "c1")
TAF, GAF, CAF, TXAF = 29, 30, 31, 53


def allow(
    name: str, op: AclOperation, rtype: ResourceType = TOPIC, principal: str = "User:alice"
) -> AclBinding:
    return AclBinding(
        ResourcePattern(rtype, name, PatternType.LITERAL),
        AccessControlEntry(principal, "*", op, AclPermissionType.ALLOW),
    )


def request(key: int, version: int, body: dict[str, Any], correlation: int = 7) -> bytes:
    spec = message_spec(key)
    head = struct.pack(">hhih", key, version, correlation, 1) + b"c"
    if spec.flexible(version):
        head += b"\x00"
    return head + spec.write_request_body(version, body)


def response(key: int, version: int, body: dict[str, Any], correlation: int = 7) -> bytes:
    spec = message_spec(key)
    head = struct.pack(">i", correlation) + (b"\x00" if spec.flexible(version) else b"")
    return head + spec.write_response_body(version, body)


def read_response(key: int, version: int, payload: bytes) -> dict[str, Any]:
    spec = message_spec(key)
    assert struct.unpack_from(">i", payload)[0] == 7
    return spec.read_response_body(version, payload, 5 if spec.flexible(version) else 4)


def read_request(key: int, version: int, payload: bytes) -> dict[str, Any]:
    spec = message_spec(key)
    return spec.read_request_body(version, payload, 8 + 3 + (1 if spec.flexible(version) else 0))


class Edge:
    """One connection's chain with the filter, and what it audited."""

    def __init__(self, *bindings: AclBinding, **settings: Any) -> None:
        self.acls = Authorizer(bindings, **settings)
        self.audited: list[Decided] = []
        self.chain = FilterChain([AuthorizationFilter(lambda: self.acls, self.audited.append)])

    def ask(self, key: int, version: int, body: dict[str, Any]) -> tuple[InFlight, Any]:
        entry = InFlight(7, key, version)
        return entry, self.chain.on_request(ALICE, entry, request(key, version, body))

    def refused(self, key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        _, outcome = self.ask(key, version, body)
        assert type(outcome) is Respond, outcome
        return read_response(key, version, outcome.payload)


def produce_body(*topics: str, acks: int = 1, txn: str | None = None) -> dict[str, Any]:
    data = [{"name": t, "partition_data": [{"index": 0, "records": b"batch"}]} for t in topics]
    return {"transactional_id": txn, "acks": acks, "timeout_ms": 100, "topic_data": data}


def test_an_allowed_produce_goes_on_untouched_and_is_audited_at_debug_level() -> None:
    edge = Edge(allow("orders", Op.WRITE))
    entry, outcome = edge.ask(0, 9, produce_body("orders"))
    assert outcome is PASS and entry.reshape is None
    [decided] = edge.audited
    assert decided.decision.allowed and decided.action.operation is Op.WRITE
    assert decided.host == "10.0.0.5" and decided.request == "Produce"


def test_a_refused_produce_is_answered_at_the_edge_per_partition() -> None:
    edge = Edge(allow("orders", Op.READ))
    answer = edge.refused(0, 9, produce_body("orders"))
    [topic] = answer["responses"]
    assert topic["name"] == "orders"
    assert topic["partition_responses"][0]["error_code"] == TAF
    assert topic["partition_responses"][0]["base_offset"] == -1
    assert not edge.audited[0].decision.allowed


def test_a_produce_partly_refused_forwards_the_rest_and_merges_the_refusal() -> None:
    edge = Edge(allow("orders", Op.WRITE))
    entry, outcome = edge.ask(0, 9, produce_body("orders", "payments"))
    assert type(outcome) is Rewrite
    forwarded = read_request(0, 9, outcome.payload)
    assert [t["name"] for t in forwarded["topic_data"]] == ["orders"]
    assert forwarded["topic_data"][0]["partition_data"][0]["records"] == b"batch"
    cluster = {"responses": [{"name": "orders", "partition_responses": [{"index": 0}]}]}
    assert entry.reshape is not None
    merged = read_response(0, 9, entry.reshape(response(0, 9, cluster)))
    assert {t["name"]: t["partition_responses"][0]["error_code"] for t in merged["responses"]} == {
        "orders": 0,
        "payments": TAF,
    }


def test_a_transactional_produce_needs_write_on_its_transactional_id() -> None:
    edge = Edge(allow("orders", Op.WRITE))
    answer = edge.refused(0, 9, produce_body("orders", txn="tx-1"))
    assert answer["responses"][0]["partition_responses"][0]["error_code"] == TXAF
    edge = Edge(allow("orders", Op.WRITE), allow("tx-1", Op.WRITE, TXN))
    assert edge.ask(0, 9, produce_body("orders", txn="tx-1"))[1] is PASS


def test_a_refused_produce_with_acks_0_closes_the_connection_as_kafka_does() -> None:
    with pytest.raises(PeerProtocolError, match="acks=0"):
        Edge().ask(0, 9, produce_body("orders", acks=0))


def test_fetch_needs_read_and_a_refused_partition_has_no_records() -> None:
    body = {"max_wait_ms": 500, "min_bytes": 1, "topics": [
        {"topic": "orders", "partitions": [{"partition": 0, "fetch_offset": 5,
                                             "partition_max_bytes": 1024}]}]}  # fmt: skip
    answer = Edge(allow("orders", Op.DESCRIBE)).refused(1, 12, body)
    partition = answer["responses"][0]["partitions"][0]
    assert partition["error_code"] == TAF and partition["records"] == b""
    assert partition["high_watermark"] == -1
    assert Edge(allow("orders", Op.READ)).ask(1, 12, body)[1] is PASS


@pytest.mark.parametrize("version", [7, 11, 12])
def test_every_fetch_goes_up_as_a_full_fetch_that_opens_no_session(version: int) -> None:
    """KIP-227: an incremental fetch names only what changed, so a session would
    outlive a revoked READ; the edge sends session id 0, epoch -1 (FINAL_EPOCH)."""
    body = {"max_wait_ms": 500, "min_bytes": 1, "session_id": 0, "session_epoch": 0,
            "topics": [{"topic": "orders", "partitions": [{"partition": 0, "fetch_offset": 5,
                                                           "partition_max_bytes": 1024}]}],
            "forgotten_topics_data": [], "rack_id": ""}  # fmt: skip
    edge = Edge(allow("orders", Op.READ))
    _, outcome = edge.ask(1, version, body)
    assert type(outcome) is Rewrite
    forwarded = read_request(1, version, outcome.payload)
    assert (forwarded["session_id"], forwarded["session_epoch"]) == (0, -1)
    assert forwarded["topics"] == read_request(1, version, request(1, version, body))["topics"]
    # The same through the general way (a follower's fetch is not walked).
    _, outcome = Edge(super_users=["User:alice"]).ask(1, version, {**body, "replica_id": 1})
    assert type(outcome) is Rewrite
    assert read_request(1, version, outcome.payload)["session_epoch"] == -1


def test_group_apis_need_read_on_the_group() -> None:
    body = {"group_id": "g", "generation_id": 1, "member_id": "m"}
    assert Edge(allow("g", Op.DESCRIBE, GROUP)).refused(12, 4, body)["error_code"] == GAF
    assert Edge(allow("g", Op.READ, GROUP)).ask(12, 4, body)[1] is PASS


def test_offset_commit_checks_the_group_then_each_topic() -> None:
    body = {"group_id": "g", "member_id": "m", "topics": [
        {"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 3}]}]}  # fmt: skip
    answer = Edge(allow("t", Op.READ)).refused(8, 8, body)
    assert answer["topics"][0]["partitions"][0]["error_code"] == GAF
    answer = Edge(allow("g", Op.READ, GROUP)).refused(8, 8, body)
    assert answer["topics"][0]["partitions"][0]["error_code"] == TAF


def test_metadata_for_all_topics_lists_only_those_the_user_may_describe_unlogged() -> None:
    edge = Edge(allow("mine", Op.DESCRIBE))
    entry, outcome = edge.ask(3, 12, {"topics": None, "allow_auto_topic_creation": False})
    assert outcome is PASS and entry.reshape is not None
    topics: list[dict[str, Any]] = [
        {"name": n, "topic_id": bytes(16), "partitions": []} for n in ("mine", "theirs")
    ]
    merged = read_response(3, 12, entry.reshape(response(3, 12, {"topics": topics})))
    assert [t["name"] for t in merged["topics"]] == ["mine"]
    assert edge.audited == []


def test_metadata_for_named_topics_refuses_each_it_may_not_describe() -> None:
    edge = Edge(allow("mine", Op.DESCRIBE))
    asked = {"topics": [{"name": "mine"}, {"name": "theirs"}], "allow_auto_topic_creation": True}
    entry, outcome = edge.ask(3, 12, asked)
    # Auto-creation is off: the user may create neither.
    assert type(outcome) is Rewrite
    assert read_request(3, 12, outcome.payload)["allow_auto_topic_creation"] is False
    topics = [
        {"name": "mine", "topic_id": b"\x01" * 16, "partitions": []},
        {"name": "theirs", "topic_id": b"\x02" * 16, "partitions": [{"partition_index": 0}]},
    ]
    assert entry.reshape is not None
    merged = read_response(3, 12, entry.reshape(response(3, 12, {"topics": topics})))
    by_name = {t["name"]: t for t in merged["topics"]}
    assert by_name["mine"]["error_code"] == 0
    assert by_name["theirs"]["error_code"] == TAF
    assert by_name["theirs"]["topic_id"] == bytes(16) and by_name["theirs"]["partitions"] == []


def test_cluster_operations_need_their_operation_on_the_cluster() -> None:
    body = {"timeout_ms": 1000, "topics": []}
    answer = Edge().refused(45, 0, body)
    assert answer["error_code"] == CAF
    assert answer["error_message"] == "Cluster authorization failed."
    assert Edge(allow("kafka-cluster", Op.ALTER, CLUSTER)).ask(45, 0, body)[1] is PASS


def test_create_topics_needs_create_on_the_cluster_or_the_topic() -> None:
    body = {"topics": [{"name": "new", "num_partitions": 1, "replication_factor": 1}]}
    answer = Edge().refused(19, 7, body)
    assert answer["topics"][0]["error_code"] == TAF
    assert answer["topics"][0]["error_message"] == "Authorization failed."
    entry, outcome = Edge(allow("new", Op.CREATE)).ask(19, 7, body)
    assert outcome is PASS and entry.reshape is not None  # configs hidden if not describable


def test_describe_configs_per_resource_type() -> None:
    body = {"resources": [
        {"resource_type": 2, "resource_name": "t", "configuration_keys": None},
        {"resource_type": 4, "resource_name": "1", "configuration_keys": None},
        {"resource_type": 32, "resource_name": "g", "configuration_keys": None},
    ]}  # fmt: skip
    answer = Edge().refused(32, 4, body)
    assert [r["error_code"] for r in answer["results"]] == [TAF, CAF, GAF]


def test_init_producer_id_without_transactional_id_needs_idempotent_write_or_a_topic_write() -> (
    None
):
    body = {"transactional_id": None, "transaction_timeout_ms": 1000}
    assert Edge().refused(22, 4, body)["error_code"] == CAF
    assert Edge(allow("any", Op.WRITE)).ask(22, 4, body)[1] is PASS
    assert Edge(allow("kafka-cluster", Op.IDEMPOTENT_WRITE, CLUSTER)).ask(22, 4, body)[1] is PASS


def test_super_users_and_allow_everyone() -> None:
    body = produce_body("orders")
    assert Edge(super_users=["User:alice"]).ask(0, 9, body)[1] is PASS
    assert Edge(allow_everyone_if_no_acl_found=True).ask(0, 9, body)[1] is PASS


def test_an_unreadable_request_closes_the_connection() -> None:
    entry = InFlight(7, 0, 9)
    payload = request(0, 9, produce_body("orders"))[:-3]
    with pytest.raises(PeerProtocolError, match="Produce v9 request unreadable"):
        Edge().chain.on_request(ALICE, entry, payload)


@pytest.mark.parametrize(
    "header",
    [b"\xff" * 6, b"", b"\x01\x05"],
    ids=["varint-too-long", "missing", "tag-past-the-end"],
)
def test_a_response_header_the_merge_cannot_read_closes_the_connection(header: bytes) -> None:
    """The cluster's answer to a partly refused request is read to merge the
    refusal in; one whose header does not parse closes the connection like a
    body that does not (found by the front door's fuzz target)."""
    entry, outcome = Edge(allow("orders", Op.WRITE)).ask(0, 9, produce_body("orders", "payments"))
    assert type(outcome) is Rewrite and entry.reshape is not None
    with pytest.raises(PeerProtocolError, match="Produce v9 response unreadable"):
        entry.reshape(struct.pack(">i", 7) + header)


def test_the_acls_are_read_per_request() -> None:
    edge = Edge()
    body = produce_body("orders")
    assert type(edge.ask(0, 9, body)[1]) is Respond
    edge.acls = edge.acls.add([allow("orders", Op.WRITE)])
    assert edge.ask(0, 9, body)[1] is PASS


def test_every_refusal_encodes_at_every_version_checked() -> None:
    """Each rule's answer is a valid response at each version it is checked at
    (requests of their defaults, a user with no ACL)."""
    from sasl_scram.frontdoor.authorization import AUTHORIZED_CAPS
    from sasl_scram.frontdoor.authorization import RULES

    answered = 0
    for key in RULES:
        spec = message_spec(key)
        for version in range(spec.min_version, AUTHORIZED_CAPS.get(key, spec.max_version) + 1):
            body = spec.read_request_body(version, spec.write_request_body(version, {}), 0)
            if key == 0:
                body["acks"] = 1
            _, outcome = Edge().ask(key, version, body)
            assert outcome is PASS or type(outcome) in (Respond, Rewrite), (key, version)
            if type(outcome) is Respond:
                read_response(key, version, outcome.payload)
                answered += 1
    assert answered > 50


# -- a Produce's head ------------------------------------------------------------------


def proxy(edge: Edge) -> Any:
    from sasl_scram.frontdoor import ProxyBounds
    from sasl_scram.frontdoor import ProxyConnection

    bounds = ProxyBounds.from_settings(
        max_request=1 << 20, max_parsed_request=4096, upstream_timeout_ms=30000
    )
    connection = ProxyConnection(bounds, edge.chain.bind(ALICE), forwarded={0: (0, 9)})
    connection.upstream_ready(0.0, 0)
    return connection


def sent(actions: list[Any], kind: str) -> bytes:
    return b"".join(bytes(chunk) for a in actions if type(a).__name__ == kind for chunk in a.chunks)


@pytest.mark.parametrize("version", [3, 8, 9])
def test_an_allowed_one_topic_produce_streams_before_its_batches_arrive(version: int) -> None:
    edge = Edge(allow("orders", Op.WRITE))
    body = produce_body("orders")
    body["topic_data"][0]["partition_data"][0]["records"] = b"r" * 5000
    frame = struct.pack(">i", len(payload := request(0, version, body))) + payload
    connection = proxy(edge)
    first = connection.client_data(frame[:200])
    # Forwarded as it came, before the rest of the frame: not read whole.
    assert sent(first, "ToCluster") == frame[:200]
    assert sent(connection.client_data(frame[200:]), "ToCluster") == frame[200:]
    assert [d.decision.allowed for d in edge.audited] == [True]


def test_a_refused_or_many_topic_produce_is_read_whole() -> None:
    edge = Edge(allow("orders", Op.WRITE))
    for body in (produce_body("payments"), produce_body("orders", "payments")):
        payload = request(0, 9, body)
        frame = struct.pack(">i", len(payload)) + payload
        connection = proxy(edge)
        assert sent(connection.client_data(frame[:-1]), "ToCluster") == b""
        last = connection.client_data(frame[-1:])
        if len(body["topic_data"]) == 1:
            assert sent(last, "ToClient")  # refused at the edge
        else:
            forwarded = sent(last, "ToCluster")
            assert read_request(0, 9, forwarded[4:])["topic_data"][0]["name"] == "orders"


def test_produce_heads_cut_anywhere_decide_once_whole() -> None:
    from sasl_scram.frontdoor.authorization._heads import produce_head

    for version in (3, 9):
        payload = request(0, version, produce_body("orders", txn="tx"))
        whole = produce_head(payload, 8, len(payload), version)
        assert whole is not None
        assert (whole.transactional_id, whole.acks, whole.topics, whole.first_topic) == (
            "tx", 1, 1, "orders",
        )  # fmt: skip
        cut = next(n for n in range(8, len(payload)) if produce_head(payload, 8, n, version))
        assert all(produce_head(payload, 8, n, version) is None for n in range(8, cut))
