"""The front door's audit of forwarded administrative requests, on the sans-IO
proxy with no broker: real request and response frames (written with the
schemas generated from Kafka's specs) go through a ``ProxyConnection`` whose
chain holds :class:`AdminAuditFilter`; the frames come out unchanged and the
lines are checked word for word."""

from __future__ import annotations

import logging
import struct
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from sasl_scram.audit import AUDIT_LOGGER_NAME
from sasl_scram.audit import audit_message
from sasl_scram.config import KafkaPrincipal
from sasl_scram.frontdoor import EdgeRequestFilter
from sasl_scram.frontdoor import EdgeSession
from sasl_scram.frontdoor import FilterChain
from sasl_scram.frontdoor import ProxyConnection
from sasl_scram.frontdoor.audit import ADMIN_API_KEYS
from sasl_scram.frontdoor.audit import AdminAuditFilter
from sasl_scram.frontdoor.audit import audit_enabled
from sasl_scram.kafka import ErrorCode
from sasl_scram.kafka import message_spec
from tests.sasl_scram.frontdoor.test_proxy import Driver
from tests.sasl_scram.frontdoor.test_proxy import limits
from tests.sasl_scram.frontdoor.test_splitter import frame
from tests.sasl_scram.kafka.test_codec import sample_value

PRODUCE, FETCH, CREATE_TOPICS, DELETE_TOPICS, CREATE_ACLS, DELETE_ACLS = 0, 1, 19, 20, 30, 31
ELECT_LEADERS, INCREMENTAL_ALTER_CONFIGS, ALTER_CLIENT_QUOTAS = 43, 44, 49

SESSION = EdgeSession(
    KafkaPrincipal.user("alice"),
    "10.0.0.5",
    "SASL_PLAINTEXT-7",
    cluster_principal=KafkaPrincipal.user("svc"),
)
#: Every line of SESSION's requests ends so, before its result.
TAIL = "clusterPrincipal = User:svc, connectionId = SASL_PLAINTEXT-7"


def delete_line(topic: str, request: str, details: str, result: str, verdict: str) -> str:
    """A line of SESSION's deletion (the operation is an argument: linters read
    "Delete from" in a literal as SQL)."""
    return audit_message(
        KafkaPrincipal.user("alice"),
        verdict == "Allowed",
        "Delete",
        "10.0.0.5",
        ("Topic", topic),
        request,
    ) + (f" with {details}{TAIL}, {result}")


def request(api_key: int, version: int, correlation_id: int, body: dict[str, Any]) -> bytes:
    """A request frame: header v1, or v2 (tagged fields) for a flexible version."""
    spec = message_spec(api_key)
    header = struct.pack(">hhih", api_key, version, correlation_id, 3) + b"cli"
    if spec.flexible(version):
        header += b"\x00"
    return frame(header + spec.write_request_body(version, body))


def response(api_key: int, version: int, correlation_id: int, body: dict[str, Any]) -> bytes:
    spec = message_spec(api_key)
    header = struct.pack(">i", correlation_id) + (b"\x00" if spec.flexible(version) else b"")
    return frame(header + spec.write_response_body(version, body))


class Door:
    """A proxy connection with the audit filter, as serve builds it, and its lines."""

    def __init__(self, session: EdgeSession = SESSION, **bounds: int) -> None:
        self.lines: list[str] = []
        chain = FilterChain(
            [EdgeRequestFilter(frozenset({17, 36})), AdminAuditFilter(self.lines.append)]
        )
        forwarded = {key: (0, message_spec(key).max_version) for key in (*ADMIN_API_KEYS, 0, 1)}
        proxy = ProxyConnection(limits(**bounds), chain.bind(session), forwarded=forwarded)
        self.driver = Driver(proxy)
        self.driver.run(proxy.upstream_ready(100.0, 0))

    def exchange(self, sent: bytes, answer: bytes) -> list[str]:
        """``sent`` goes to the cluster and ``answer`` to the client, unchanged."""
        d = self.driver
        before = (len(d.to_cluster), len(d.to_client))
        d.client(sent)
        assert bytes(d.to_cluster[before[0] :]) == sent
        d.cluster(answer)
        assert bytes(d.to_client[before[1] :]) == answer
        return self.lines


def topics_request(*names: str) -> dict[str, Any]:
    return {
        "topics": [
            {
                "name": name,
                "num_partitions": 3,
                "replication_factor": 1,
                "configs": [
                    {"name": "cleanup.policy", "value": "compact"},
                    {"name": "sasl.jaas.config", "value": "password=hunter2"},
                ],
            }
            for name in names
        ],
        "timeout_ms": 30000,
    }


def test_create_topics_is_one_line_per_topic_with_the_clusters_answer() -> None:
    door = Door()
    sent = request(CREATE_TOPICS, 7, 4, topics_request("orders", "payments"))
    answer = response(
        CREATE_TOPICS,
        7,
        4,
        {
            "topics": [
                {"name": "orders", "error_code": 0},
                {"name": "payments", "error_code": ErrorCode.TOPIC_ALREADY_EXISTS},
            ]
        },
    )
    assert door.exchange(sent, answer) == [
        "Principal = User:alice is Allowed Operation = Create from host = 10.0.0.5 on resource = "
        "Topic:LITERAL:orders for request = CreateTopics with numPartitions = 3, "
        "replicationFactor = 1, configs = cleanup.policy,sasl.jaas.config, "
        f"{TAIL}, correlationId = 4, result = NONE",
        "Principal = User:alice is Allowed Operation = Create from host = 10.0.0.5 on resource = "
        "Topic:LITERAL:payments for request = CreateTopics with numPartitions = 3, "
        "replicationFactor = 1, configs = cleanup.policy,sasl.jaas.config, "
        f"{TAIL}, correlationId = 4, result = TOPIC_ALREADY_EXISTS",
    ]
    # A configuration's value is never written: it may be a password.
    assert not any("hunter2" in line or "compact" in line for line in door.lines)


def test_every_version_of_create_topics_and_delete_topics_is_read() -> None:
    """Header v1 and v2 (flexible from CreateTopics v5, DeleteTopics v4), names
    and (v6) topic ids."""
    door = Door()
    for version in range(8):
        door.exchange(
            request(CREATE_TOPICS, version, version, topics_request("t")),
            response(CREATE_TOPICS, version, version, {"topics": [{"name": "t"}]}),
        )
    for version in range(6):
        door.exchange(
            request(DELETE_TOPICS, version, 10 + version, {"topic_names": ["t"]}),
            response(DELETE_TOPICS, version, 10 + version, {"responses": [{"name": "t"}]}),
        )
    topic_id = bytes(range(16))
    door.exchange(
        request(DELETE_TOPICS, 6, 16, {"topics": [{"name": None, "topic_id": topic_id}]}),
        response(
            DELETE_TOPICS,
            6,
            16,
            {"responses": [{"name": "t", "topic_id": topic_id, "error_code": 100}]},
        ),
    )
    assert len(door.lines) == 15
    assert all(line.endswith("result = NONE") for line in door.lines[:14])
    assert door.lines[-1] == delete_line(
        "AAECAwQFBgcICQoLDA0ODw",
        "DeleteTopics",
        "topicId = AAECAwQFBgcICQoLDA0ODw, ",
        "correlationId = 16, result = UNKNOWN_TOPIC_ID",
        "Allowed",
    )


def test_a_refusal_of_the_clusters_authorizer_is_denied() -> None:
    door = Door()
    door.exchange(
        request(DELETE_TOPICS, 6, 1, {"topics": [{"name": "orders"}]}),
        response(DELETE_TOPICS, 6, 1, {"responses": [{"name": "orders", "error_code": 29}]}),
    )
    assert door.lines == [
        delete_line(
            "orders",
            "DeleteTopics",
            "",
            "correlationId = 1, result = TOPIC_AUTHORIZATION_FAILED",
            "Denied",
        )
    ]


def test_acls_are_named_by_their_pattern_and_each_deleted_acl_is_a_line() -> None:
    door = Door()
    creation = {
        "resource_type": 2,
        "resource_name": "orders-",
        "resource_pattern_type": 4,
        "principal": "User:bob",
        "host": "*",
        "operation": 3,
        "permission_type": 3,
    }
    door.exchange(
        request(CREATE_ACLS, 3, 1, {"creations": [creation]}),
        response(CREATE_ACLS, 3, 1, {"results": [{"error_code": 0}]}),
    )
    acl = {**creation, "pattern_type": 4, "error_code": 0}
    acl_filter = {
        "resource_type_filter": 2,
        "resource_name_filter": None,
        "pattern_type_filter": 1,
        "principal_filter": "User:bob",
        "host_filter": None,
        "operation": 1,
        "permission_type": 1,
    }
    door.exchange(
        request(DELETE_ACLS, 3, 2, {"filters": [acl_filter, {**acl_filter, "operation": 6}]}),
        response(
            DELETE_ACLS,
            3,
            2,
            {"filter_results": [{"matching_acls": [acl]}, {"matching_acls": []}]},
        ),
    )
    acl_words = "aclPrincipal = User:bob, aclHost = *, aclOperation = READ"
    assert door.lines == [
        "Principal = User:alice is Allowed Operation = Alter from host = 10.0.0.5 on resource = "
        f"Topic:PREFIXED:orders- for request = CreateAcls with {acl_words}, "
        f"aclPermissionType = ALLOW, {TAIL}, correlationId = 1, result = NONE",
        "Principal = User:alice is Allowed Operation = Alter from host = 10.0.0.5 on resource = "
        f"Topic:PREFIXED:orders- for request = DeleteAcls with {acl_words}, "
        f"aclPermissionType = ALLOW, {TAIL}, correlationId = 2, result = NONE",
        "Principal = User:alice is Allowed Operation = Alter from host = 10.0.0.5 on resource = "
        "Topic:ANY:<any> for request = DeleteAcls with filterPrincipal = User:bob, "
        "filterHost = <any>, filterOperation = DELETE, filterPermissionType = ANY, matched = 0, "
        f"{TAIL}, correlationId = 2, result = NONE",
    ]


def test_config_changes_name_their_keys_and_operations_never_their_values() -> None:
    door = Door()
    resources = [
        {
            "resource_type": 4,
            "resource_name": "",
            "configs": [
                {"name": "listener.name.x.scram-sha-256.sasl.jaas.config", "value": "secret"},
                {"name": "log.retention.ms", "config_operation": 1, "value": None},
            ],
        },
        {"resource_type": 2, "resource_name": "orders", "configs": []},
    ]
    door.exchange(
        request(INCREMENTAL_ALTER_CONFIGS, 1, 3, {"resources": resources, "validate_only": True}),
        response(
            INCREMENTAL_ALTER_CONFIGS,
            1,
            3,
            {
                "responses": [
                    {"resource_type": 4, "resource_name": "", "error_code": 40},
                    {"resource_type": 2, "resource_name": "orders", "error_code": 0},
                ]
            },
        ),
    )
    assert door.lines == [
        "Principal = User:alice is Allowed Operation = AlterConfigs from host = 10.0.0.5 on "
        "resource = Broker:LITERAL:<default> for request = IncrementalAlterConfigs with "
        "configs = SET:listener.name.x.scram-sha-256.sasl.jaas.config,DELETE:log.retention.ms, "
        f"validateOnly = true, {TAIL}, correlationId = 3, result = INVALID_CONFIG",
        "Principal = User:alice is Allowed Operation = AlterConfigs from host = 10.0.0.5 on "
        "resource = Topic:LITERAL:orders for request = IncrementalAlterConfigs with configs = , "
        f"validateOnly = true, {TAIL}, correlationId = 3, result = NONE",
    ]
    assert "secret" not in "".join(door.lines)


def test_partition_results_that_differ_are_named_per_partition() -> None:
    door = Door()
    door.exchange(
        request(
            ELECT_LEADERS,
            2,
            5,
            {"election_type": 1, "topic_partitions": [{"topic": "t", "partitions": [0, 1]}]},
        ),
        response(
            ELECT_LEADERS,
            2,
            5,
            {
                "replica_election_results": [
                    {
                        "topic": "t",
                        "partition_result": [
                            {"partition_id": 0, "error_code": 0},
                            {"partition_id": 1, "error_code": 84},
                        ],
                    }
                ]
            },
        ),
    )
    assert door.lines[0].endswith(
        "on resource = Topic:LITERAL:t for request = ElectLeaders with electionType = UNCLEAN, "
        f"partitions = 0,1, {TAIL}, correlationId = 5, result = 0:NONE,1:ELECTION_NOT_NEEDED"
    )


def test_an_election_over_every_partition_is_a_line_per_topic_the_cluster_names() -> None:
    door = Door()
    door.exchange(
        request(ELECT_LEADERS, 2, 6, {"election_type": 0, "topic_partitions": None}),
        response(
            ELECT_LEADERS,
            2,
            6,
            {
                "replica_election_results": [
                    {"topic": "a", "partition_result": [{"partition_id": 0}]},
                    {"topic": "b", "partition_result": [{"partition_id": 2}]},
                ]
            },
        ),
    )
    assert [line.split("on resource = ")[1].split(" ")[0] for line in door.lines] == [
        "Topic:LITERAL:a",
        "Topic:LITERAL:b",
    ]
    assert door.lines[1].endswith(
        f"electionType = PREFERRED, partitions = 2, {TAIL}, correlationId = 6, result = NONE"
    )


def test_quota_entities_and_token_logins_are_named() -> None:
    door = Door(
        EdgeSession(
            KafkaPrincipal.user("alice"),
            "10.0.0.5",
            "SASL_PLAINTEXT-8",
            token_id="tok-1",
            cluster_token_id="svc-token",
        )
    )
    entry = {
        "entity": [
            {"entity_type": "user", "entity_name": None},
            {"entity_type": "client-id", "entity_name": "app"},
        ],
        "ops": [
            {"key": "producer_byte_rate", "value": 1024.0, "remove": False},
            {"key": "consumer_byte_rate", "value": 0.0, "remove": True},
        ],
    }
    answer = {"entries": [{"entity": entry["entity"], "error_code": 0}]}
    door.exchange(
        request(ALTER_CLIENT_QUOTAS, 1, 9, {"entries": [entry]}),
        response(ALTER_CLIENT_QUOTAS, 1, 9, answer),
    )
    assert door.lines == [
        "Principal = User:alice is Allowed Operation = AlterConfigs from host = 10.0.0.5 on "
        "resource = ClientQuota:LITERAL:user=<default>,client-id=app for request = "
        "AlterClientQuotas with quotas = producer_byte_rate=1024.0,consumer_byte_rate=remove, "
        "tokenId = tok-1, clusterTokenId = svc-token, connectionId = SASL_PLAINTEXT-8, "
        "correlationId = 9, result = NONE"
    ]


def test_a_resource_name_cannot_forge_a_line() -> None:
    door = Door()
    door.exchange(
        request(42, 2, 1, {"groups_names": ["g\n... is Allowed "]}),
        response(42, 2, 1, {"results": [{"group_id": "g\n... is Allowed ", "error_code": 0}]}),
    )
    assert (
        door.lines[0]
        .split("for request")[0]
        .endswith("resource = Group:LITERAL:g\\x0a...\\x20is\\x20Allowed\\x20 ")
    )
    assert door.lines[0].endswith("result = NONE")


# -- what cannot be read is forwarded all the same --------------------------------------


def test_a_request_that_cannot_be_read_is_forwarded_and_audited_unparsed() -> None:
    door = Door()
    sent = frame(struct.pack(">hhih", CREATE_TOPICS, 7, 3, 3) + b"cli\x00\xff\xff\xff")
    answer = response(CREATE_TOPICS, 7, 3, {"topics": [{"name": "x", "error_code": 42}]})
    assert door.exchange(sent, answer) == [
        "Principal = User:alice is Allowed Operation = Create from host = 10.0.0.5 on resource = "
        "Unknown:LITERAL:unparsed for request = CreateTopics with apiVersion = 7, "
        f"{TAIL}, correlationId = 3, result = INVALID_REQUEST"
    ]


def test_a_response_that_cannot_be_read_goes_to_the_client_and_is_audited_unparsed() -> None:
    door = Door()
    sent = request(CREATE_TOPICS, 7, 3, topics_request("orders"))
    answer = frame(struct.pack(">i", 3) + b"\x00\x01")
    assert door.exchange(sent, answer)[0].endswith("correlationId = 3, result = unparsed")


def test_a_request_too_large_to_read_streams_and_is_audited_with_its_answer() -> None:
    door = Door(max_parsed_request=200)
    sent = request(CREATE_TOPICS, 7, 3, topics_request(*(f"topic-{i}" for i in range(20))))
    assert len(sent) > 200
    door.driver.client(sent[:100])
    assert bytes(door.driver.to_cluster) == sent[:100]  # streaming, not held
    door.exchange(sent[100:], response(CREATE_TOPICS, 7, 3, {"topics": [{"name": "t"}]}))
    assert door.lines == [
        "Principal = User:alice is Allowed Operation = Create from host = 10.0.0.5 on resource = "
        "Unknown:LITERAL:unparsed for request = CreateTopics with apiVersion = 7, "
        f"{TAIL}, correlationId = 3, result = NONE"
    ]


def test_a_request_whose_answer_never_comes_is_audited_unanswered() -> None:
    """The cluster may have deleted the topic: the line is written when the
    connection closes, whichever side closed it."""
    door = Door()
    door.driver.client(request(DELETE_TOPICS, 6, 8, {"topics": [{"name": "orders"}]}))
    assert door.lines == []
    door.driver.proxy.close()
    assert door.lines == [
        delete_line(
            "orders",
            "DeleteTopics",
            "",
            "correlationId = 8, result = unanswered",
            "Allowed",
        )
    ]


# -- the data APIs are never read ---------------------------------------------------------


def test_data_apis_stream_through_unread() -> None:
    """A Produce goes up slice by slice as it arrives; no line is written."""
    assert not ADMIN_API_KEYS & {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 22, 24, 25, 26, 28}
    door = Door()
    produce = frame(struct.pack(">hhih", PRODUCE, 9, 1, 3) + b"cli\x00\x01\xff\xff\xff\xff\x00")
    produce += b"records" * 1000
    produce = struct.pack(">i", len(produce) - 4) + produce[4:]
    door.driver.client(produce[:50])
    assert bytes(door.driver.to_cluster) == produce[:50]
    door.driver.client(produce[50:])
    assert bytes(door.driver.to_cluster) == produce and door.lines == []


# -- every audited API, every version --------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_every_audited_api_at_every_version_is_read_and_answered(data: st.DataObject) -> None:
    key = data.draw(st.sampled_from(sorted(ADMIN_API_KEYS)))
    spec = message_spec(key)
    version = data.draw(st.integers(spec.min_version, spec.max_version))
    flexible = spec.flexible(version)
    body = sample_value(spec.request(version), version, flexible, data.draw)
    answer = sample_value(spec.response(version), version, flexible, data.draw)
    try:
        sent, returned = request(key, version, 1, body), response(key, version, 1, answer)
    except ValueError:  # a sample the schema refuses (a null where none may be)
        return
    door = Door()
    door.exchange(sent, returned)
    assert door.lines
    for line in door.lines:
        assert f" for request = {spec.name} with " in line
        # Read both ways: not the unread request's resource nor the unread
        # response's result. (The word alone may be a drawn name: Hypothesis
        # draws the test's own string constants.)
        assert "Unknown:LITERAL:unparsed for request" not in line
        assert not line.endswith("result = unparsed") and "\n" not in line
        assert line.endswith(TAIL + ", correlationId = 1, result = " + line.rsplit(" = ", 1)[1])


def test_the_filter_is_left_out_while_the_audit_logger_is_off() -> None:
    logger = logging.getLogger(AUDIT_LOGGER_NAME)
    before = logger.level
    try:
        logger.setLevel(logging.WARNING)
        assert not audit_enabled()
        logger.setLevel(logging.INFO)
        assert audit_enabled()
    finally:
        logger.setLevel(before)


@pytest.mark.parametrize("key", sorted(ADMIN_API_KEYS))
def test_each_audited_api_is_one_kafka_defines(key: int) -> None:
    assert message_spec(key).name
