"""Where the edge once answered otherwise than Kafka's broker: each test says
what Kafka does and which class or method of Kafka's does it."""

from __future__ import annotations

from typing import Any

from sasl_scram.authz import AclOperation as Op
from sasl_scram.frontdoor import PASS
from sasl_scram.frontdoor import Respond
from sasl_scram.frontdoor.authorization import AUTHORIZED_CAPS
from sasl_scram.frontdoor.authorization import RULES
from sasl_scram.kafka._message_table import message_spec
from tests.sasl_scram.frontdoor.authorization.test_filter import CLUSTER
from tests.sasl_scram.frontdoor.authorization.test_filter import GAF
from tests.sasl_scram.frontdoor.authorization.test_filter import GROUP
from tests.sasl_scram.frontdoor.authorization.test_filter import TAF
from tests.sasl_scram.frontdoor.authorization.test_filter import TXN
from tests.sasl_scram.frontdoor.authorization.test_filter import Edge
from tests.sasl_scram.frontdoor.authorization.test_filter import allow
from tests.sasl_scram.frontdoor.authorization.test_filter import read_request
from tests.sasl_scram.frontdoor.authorization.test_filter import read_response
from tests.sasl_scram.frontdoor.authorization.test_filter import response

UNKNOWN_TOPIC, NOT_COORDINATOR, INVALID_REQUEST = 3, 16, 42
NOT_ASKED = -(2**31)
CLUSTER_NAME = "kafka-cluster"


def merged(edge: Edge, key: int, version: int, body: dict[str, Any], answer: dict[str, Any]) -> Any:
    entry, outcome = edge.ask(key, version, body)
    assert type(outcome) is not Respond, outcome
    assert entry.reshape is not None
    return read_response(key, version, entry.reshape(response(key, version, answer)))


def bits(*ops: Op) -> int:
    return sum(1 << op.code for op in ops)


# -- KIP-430: the cluster's authorized operations -------------------------------------------


def test_describe_cluster_operations_are_0_without_describe_on_the_cluster() -> None:
    # AuthHelper.computeDescribeClusterResponse: the operations only for a session
    # allowed DESCRIBE on the cluster (a logged check), else 0.
    edge = Edge(allow(CLUSTER_NAME, Op.IDEMPOTENT_WRITE, CLUSTER))
    answer = merged(edge, 60, 1, {"include_cluster_authorized_operations": True},
                    {"cluster_authorized_operations": bits(Op.DESCRIBE)})  # fmt: skip
    assert answer["cluster_authorized_operations"] == 0
    [denied] = [d for d in edge.audited if d.action.operation is Op.DESCRIBE]
    assert not denied.decision.allowed
    edge = Edge(allow(CLUSTER_NAME, Op.ALTER, CLUSTER))
    answer = merged(edge, 60, 1, {"include_cluster_authorized_operations": True}, {})
    assert answer["cluster_authorized_operations"] == bits(Op.ALTER, Op.DESCRIBE)


def test_metadata_cluster_operations_are_0_without_describe_on_the_cluster() -> None:
    # KafkaApis.handleTopicMetadataRequest (v8-10): as DescribeCluster.
    edge = Edge(allow(CLUSTER_NAME, Op.IDEMPOTENT_WRITE, CLUSTER))
    body = {"topics": None, "include_cluster_authorized_operations": True}
    assert merged(edge, 3, 10, body, {"topics": []})["cluster_authorized_operations"] == 0


def test_metadata_asks_create_only_for_the_topics_that_do_not_exist() -> None:
    # KafkaApis.handleTopicMetadataRequest checks CREATE (on the cluster, then on
    # each topic) only for describable topics that do not exist: a producer's
    # metadata for its existing topic logs no refused CREATE.
    edge = Edge(allow("t", Op.WRITE), allow("new", Op.DESCRIBE))
    body = {"topics": [{"name": "t"}, {"name": "new"}], "allow_auto_topic_creation": True}
    missing = {"name": "new", "error_code": UNKNOWN_TOPIC, "partitions": []}
    cluster = {"topics": [{"name": "t", "partitions": [{"partition_index": 0}]}, missing]}
    answer = merged(edge, 3, 12, body, cluster)
    assert {t["name"]: t["error_code"] for t in answer["topics"]} == {"t": 0, "new": TAF}
    creates = [(d.action.resource.name, d.decision.allowed) for d in edge.audited
               if d.action.operation is Op.CREATE]  # fmt: skip
    assert creates == [("new", False)]
    edge = Edge(allow("t", Op.WRITE))
    merged(edge, 3, 12, {**body, "topics": [{"name": "t"}]}, {"topics": cluster["topics"][:1]})
    assert [d.action.operation for d in edge.audited] == [Op.DESCRIBE]


# -- KIP-430: the topics' authorized operations ---------------------------------------------


def test_metadata_topic_operations_are_the_users_on_every_topic_it_may_describe() -> None:
    # KafkaApis.handleTopicMetadataRequest sets them on every entry of the metadata
    # it answers for the describable topics, those with an error (a topic that does
    # not exist) included; never the upstream login's.
    edge = Edge(allow("gone", Op.DESCRIBE))
    body = {"topics": [{"name": "gone"}], "allow_auto_topic_creation": False,
            "include_topic_authorized_operations": True}  # fmt: skip
    cluster = {"topics": [{"name": "gone", "error_code": UNKNOWN_TOPIC, "partitions": [],
                           "topic_authorized_operations": bits(Op.ALTER, Op.DELETE)}]}  # fmt: skip
    [topic] = merged(edge, 3, 10, body, cluster)["topics"]
    assert topic["topic_authorized_operations"] == bits(Op.DESCRIBE)


def test_describe_topic_partitions_topic_operations_are_the_users_on_every_topic() -> None:
    # DescribeTopicPartitionsRequestHandler: on every topic of the answer.
    edge = Edge(allow("gone", Op.DESCRIBE))
    body = {"topics": [{"name": "gone"}], "response_partition_limit": 10}
    cluster = {"topics": [{"name": "gone", "error_code": UNKNOWN_TOPIC, "partitions": [],
                           "topic_authorized_operations": bits(Op.ALTER)}]}  # fmt: skip
    [topic] = merged(edge, 75, 0, body, cluster)["topics"]
    assert topic["topic_authorized_operations"] == bits(Op.DESCRIBE)


# -- KIP-848: ConsumerGroupHeartbeat and ConsumerGroupDescribe (Kafka 4.x) -------------------


def _heartbeat(*topics: str) -> dict[str, Any]:
    return {"group_id": "g", "member_id": "m", "member_epoch": 0,
            "subscribed_topic_names": list(topics) or None}  # fmt: skip


def test_consumer_group_heartbeat_needs_describe_on_each_subscribed_topic() -> None:
    # KafkaApis.handleConsumerGroupHeartbeat (4.x): READ on the group, then DESCRIBE
    # on each distinct subscribed topic; one refused answers TOPIC_AUTHORIZATION_FAILED.
    edge = Edge(allow("g", Op.READ, GROUP), allow("mine", Op.READ))
    answer = edge.refused(68, 1, _heartbeat("mine", "theirs", "theirs"))
    assert answer["error_code"] == TAF and answer["assignment"] is None
    [denied] = [d for d in edge.audited if not d.decision.allowed]
    assert denied.action.resource.name == "theirs"
    assert edge.ask(68, 1, _heartbeat("mine"))[1] is PASS
    assert edge.ask(68, 1, _heartbeat())[1] is PASS
    assert Edge(allow("mine", Op.READ)).refused(68, 1, _heartbeat("mine"))["error_code"] == GAF


def _described(group: str, *topics: str) -> dict[str, Any]:
    assignment = {"topic_partitions": [
        {"topic_id": bytes(16), "topic_name": t, "partitions": [0]} for t in topics]}  # fmt: skip
    member = {"member_id": "m", "member_epoch": 1, "client_id": "c", "client_host": "/h",
              "subscribed_topic_names": list(topics), "assignment": assignment,
              "target_assignment": {"topic_partitions": []}}  # fmt: skip
    return {"group_id": group, "group_state": "Stable", "group_epoch": 1, "assignment_epoch": 1,
            "assignor_name": "uniform", "members": [member],
            "authorized_operations": bits(Op.READ)}  # fmt: skip


def test_consumer_group_describe_hides_a_group_assigned_topics_the_user_may_not_describe() -> None:
    # KafkaApis.handleConsumerGroupDescribe (4.x): a described group with a member
    # (target) assignment naming a topic the session may not DESCRIBE is replaced by
    # an entry carrying TOPIC_AUTHORIZATION_FAILED, that message and no members.
    edge = Edge(allow("g", Op.DESCRIBE, GROUP), allow("h", Op.DESCRIBE, GROUP),
                allow("mine", Op.DESCRIBE))  # fmt: skip
    body = {"group_ids": ["g", "h"], "include_authorized_operations": True}
    answer = merged(
        edge, 69, 1, body, {"groups": [_described("g", "mine", "theirs"), _described("h", "mine")]}
    )
    by_id = {g["group_id"]: g for g in answer["groups"]}
    assert by_id["g"]["error_code"] == TAF and by_id["g"]["members"] == []
    assert by_id["g"]["error_message"] == (
        "The group has described topic(s) that the client is not authorized to describe."
    )
    assert by_id["g"]["authorized_operations"] == NOT_ASKED
    assert by_id["g"]["group_state"] == "" and by_id["g"]["group_epoch"] == 0
    assert by_id["h"]["error_code"] == 0 and len(by_id["h"]["members"]) == 1
    assert by_id["h"]["authorized_operations"] == bits(Op.DESCRIBE)


# -- OffsetFetch --------------------------------------------------------------------------


def test_offset_fetch_v1_refused_group_answers_every_partition_asked_for() -> None:
    # OffsetFetchResponse.groupError (4.x): before v2 there is no top-level error,
    # so every partition asked for carries GROUP_AUTHORIZATION_FAILED.
    body = {"group_id": "g", "topics": [{"name": "t", "partition_indexes": [0, 1]}]}
    answer = Edge(allow("t", Op.DESCRIBE)).refused(9, 1, body)
    [topic] = answer["topics"]
    assert topic["name"] == "t"
    assert [(p["partition_index"], p["error_code"], p["committed_offset"])
            for p in topic["partitions"]] == [(0, GAF, -1), (1, GAF, -1)]  # fmt: skip


def test_offset_fetch_group_error_from_the_coordinator_comes_alone() -> None:
    # KafkaApis.fetchOffsetsForGroup: a group the coordinator answers with an error
    # is answered as the coordinator answered it, without the refused topics.
    edge = Edge(allow("g", Op.DESCRIBE, GROUP), allow("mine", Op.DESCRIBE))
    topics = [{"name": n, "partition_indexes": [0]} for n in ("mine", "theirs")]
    body = {"groups": [{"group_id": "g", "topics": topics}]}
    cluster = {"groups": [{"group_id": "g", "topics": [], "error_code": NOT_COORDINATOR}]}
    [group] = merged(edge, 9, 8, body, cluster)["groups"]
    assert group["error_code"] == NOT_COORDINATOR and group["topics"] == []
    single = {"group_id": "g", "topics": topics}
    answer = merged(edge, 9, 7, single, {"error_code": NOT_COORDINATOR, "topics": []})
    assert answer["error_code"] == NOT_COORDINATOR and answer["topics"] == []


def test_offset_fetch_for_all_topics_logs_the_describe_checks() -> None:
    # KafkaApis.fetchAllOffsetsForGroup filters the topics with filterByAuthorized's
    # default logging (unlike Metadata for all topics).
    edge = Edge(allow("g", Op.DESCRIBE, GROUP), allow("mine", Op.DESCRIBE))
    listed = [{"name": n, "partitions": [{"partition_index": 0}]} for n in ("mine", "theirs")]
    cluster = {"groups": [{"group_id": "g", "topics": listed}]}
    answer = merged(edge, 9, 8, {"groups": [{"group_id": "g", "topics": None}]}, cluster)
    assert [t["name"] for t in answer["groups"][0]["topics"]] == ["mine"]
    logged = {(d.action.resource.name, d.decision.allowed) for d in edge.audited}
    assert {("mine", True), ("theirs", False)} <= logged


# -- the audit of the other filtered listings -----------------------------------------------


def test_describe_transactions_logs_the_topic_checks() -> None:
    # KafkaApis.handleDescribeTransactionsRequest: authHelper.authorize with its
    # default logging on each topic of a described transaction.
    edge = Edge(allow("tx", Op.DESCRIBE, TXN), allow("mine", Op.DESCRIBE))
    state = {"transactional_id": "tx", "transaction_state": "Ongoing", "producer_id": 1,
             "topics": [{"topic": "mine", "partitions": [0]},
                        {"topic": "theirs", "partitions": [0]}]}  # fmt: skip
    answer = merged(edge, 65, 0, {"transactional_ids": ["tx"]}, {"transaction_states": [state]})
    assert [t["topic"] for t in answer["transaction_states"][0]["topics"]] == ["mine"]
    logged = {(d.action.resource.name, d.decision.allowed) for d in edge.audited}
    assert {("mine", True), ("theirs", False)} <= logged


def test_describe_topic_partitions_for_all_topics_logs_the_describe_checks() -> None:
    # DescribeTopicPartitionsRequestHandler authorizes each topic with logging on,
    # for all topics too.
    edge = Edge(allow("mine", Op.DESCRIBE))
    cluster = {"topics": [{"name": n, "topic_id": bytes([i + 1]) * 16, "partitions": []}
                          for i, n in enumerate(("mine", "theirs"))]}  # fmt: skip
    answer = merged(edge, 75, 0, {"topics": [], "response_partition_limit": 10}, cluster)
    assert [t["name"] for t in answer["topics"]] == ["mine"]
    assert ("theirs", False) in {(d.action.resource.name, d.decision.allowed) for d in edge.audited}


def test_create_topics_logs_describe_configs_only_when_allowed() -> None:
    # ControllerApis.handleCreateTopics: DESCRIBE_CONFIGS with logIfDenied = false.
    edge = Edge(allow("new", Op.CREATE))
    body = {"topics": [{"name": "new", "num_partitions": 1, "replication_factor": 1}]}
    answer = merged(edge, 19, 7, body, {"topics": [{"name": "new", "num_partitions": 1}]})
    assert answer["topics"][0]["topic_config_error_code"] == TAF
    assert [d.action.operation for d in edge.audited] == [Op.CREATE]
    edge = Edge(allow("new", Op.CREATE), allow("new", Op.DESCRIBE_CONFIGS))
    merged(edge, 19, 7, body, {"topics": [{"name": "new", "num_partitions": 1}]})
    assert Op.DESCRIBE_CONFIGS in [d.action.operation for d in edge.audited]


# -- DescribeConfigs ------------------------------------------------------------------------


def test_describe_configs_with_an_unknown_resource_type_fails_every_resource() -> None:
    # ConfigHelper.handleDescribeConfigsRequest throws InvalidRequestException for
    # an unknown type; KafkaApis answers the whole request with it
    # (DescribeConfigsRequest.getErrorResponse: every resource INVALID_REQUEST).
    body = {"resources": [
        {"resource_type": 2, "resource_name": "t", "configuration_keys": None},
        {"resource_type": 99, "resource_name": "x", "configuration_keys": None},
    ]}  # fmt: skip
    answer = Edge(allow("t", Op.DESCRIBE_CONFIGS)).refused(32, 4, body)
    assert [(r["resource_name"], r["error_code"]) for r in answer["results"]] == [
        ("t", INVALID_REQUEST), ("x", INVALID_REQUEST)]  # fmt: skip


# -- versions -------------------------------------------------------------------------------


def test_no_version_the_codec_cannot_read_is_advertised() -> None:
    # A version advertised but unreadable would close every connection that uses
    # it; Kafka's broker advertises only the versions it can parse.
    for key in RULES:
        assert AUTHORIZED_CAPS[key] <= message_spec(key).max_version, key


# -- names given twice, and names Kafka never accepts: answered before authorizing --------


def test_create_topics_answers_a_duplicate_and_the_metadata_topic_unauthorized() -> None:
    # ControllerApis.createTopics: "Duplicate topic name." once per name, and the
    # metadata topic refused, both INVALID_REQUEST and neither authorized.
    edge = Edge(allow("ok", Op.CREATE))
    topics = [{"name": n, "num_partitions": 1, "replication_factor": 1}
              for n in ("dup", "ok", "dup", "__cluster_metadata")]  # fmt: skip
    entry, outcome = edge.ask(19, 7, {"topics": topics})
    assert entry.reshape is not None
    assert [t["name"] for t in read_request(19, 7, outcome.payload)["topics"]] == ["ok"]
    answer = read_response(
        19, 7, entry.reshape(response(19, 7, {"topics": [{"name": "ok", "error_message": None}]}))
    )
    assert [(t["name"], t["error_code"], t["error_message"]) for t in answer["topics"]] == [
        ("ok", 0, None),
        ("dup", INVALID_REQUEST, "Duplicate topic name."),
        ("__cluster_metadata", INVALID_REQUEST,
         "Creation of internal topic __cluster_metadata is prohibited."),
    ]  # fmt: skip
    assert {d.action.resource.name for d in edge.audited} == {"ok"}


def test_delete_topics_answers_a_duplicate_once_unauthorized() -> None:
    # ControllerApis.deleteTopics: a name (or an id) given twice answers
    # INVALID_REQUEST once, before any authorization.
    answer = Edge().refused(20, 5, {"topic_names": ["t", "t"], "timeout_ms": 1000})
    assert [(r["name"], r["error_code"]) for r in answer["responses"]] == [("t", INVALID_REQUEST)]
    ids = [{"name": None, "topic_id": b"\x07" * 16}] * 2
    answer = Edge().refused(20, 6, {"topics": ids, "timeout_ms": 1000})
    assert [(r["topic_id"], r["error_code"], r["error_message"]) for r in answer["responses"]] == [
        (b"\x07" * 16, INVALID_REQUEST, "Duplicate topic id.")]  # fmt: skip


def test_create_partitions_answers_a_duplicate_once_and_a_refusal_without_text() -> None:
    # ControllerApis.createPartitions.
    topics = [{"name": n, "count": 2, "assignments": None} for n in ("dup", "dup", "no")]
    answer = Edge().refused(37, 3, {"topics": topics, "timeout_ms": 1, "validate_only": False})
    assert [(r["name"], r["error_code"], r["error_message"]) for r in answer["results"]] == [
        ("no", TAF, None), ("dup", INVALID_REQUEST, "Duplicate topic name.")]  # fmt: skip


def test_delete_groups_answers_each_distinct_group_once() -> None:
    # KafkaApis.handleDeleteGroupsRequest: groupsNames.distinct.
    answer = Edge().refused(42, 2, {"groups_names": ["g", "g"]})
    assert [(r["group_id"], r["error_code"]) for r in answer["results"]] == [("g", GAF)]


def test_alter_configs_refuse_a_resource_named_twice_unauthorized() -> None:
    # ConfigAdminManager.preprocess: "Each resource must appear at most once.",
    # for each of them, before the broker authorizes anything.
    twice = [{"resource_type": 2, "resource_name": "t", "configs": []}] * 2
    for key in (33, 44):
        answer = Edge().refused(key, 1, {"resources": twice, "validate_only": False})
        assert [(r["error_code"], r["error_message"]) for r in answer["responses"]] == [
            (INVALID_REQUEST, "Each resource must appear at most once.")] * 2  # fmt: skip
