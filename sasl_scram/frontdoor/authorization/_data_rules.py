"""Produce, Fetch and the other per-partition APIs of the data path, as
``KafkaApis`` authorizes them (docs/compatibility.md lists each check)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from sasl_scram.authz import AclOperation
from sasl_scram.authz import ResourceType
from sasl_scram.frontdoor.authorization._check import RequestCheck
from sasl_scram.frontdoor.authorization._items import TopicPartitions
from sasl_scram.frontdoor.authorization._items import by_id
from sasl_scram.frontdoor.authorization._verdicts import ALLOWED
from sasl_scram.frontdoor.authorization._verdicts import Body
from sasl_scram.frontdoor.authorization._verdicts import Verdict
from sasl_scram.kafka import ErrorCode

__all__ = [
    "delete_records",
    "describe_producers",
    "fetch",
    "list_offsets",
    "offset_for_leader_epoch",
    "produce",
]

_TOPIC: Final = ResourceType.TOPIC
_TAF: Final = int(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
_TXAF: Final = int(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)

# ProduceResponse.PartitionResponse(error): no offset, no append time.
PRODUCE: Final = TopicPartitions(
    "topic_data", "name", "partition_data", "index",
    "responses", "name", "partition_responses", "index",
    {"base_offset": -1, "log_append_time_ms": -1, "log_start_offset": -1},
)  # fmt: skip
# FetchResponse.partitionResponse(error): no offsets, null aborted
# transactions, empty records.
FETCH: Final = TopicPartitions(
    "topics", "topic", "partitions", "partition",
    "responses", "topic", "partitions", "partition_index",
    {
        "high_watermark": -1,
        "last_stable_offset": -1,
        "log_start_offset": -1,
        "aborted_transactions": None,
        "records": b"",
    },
)  # fmt: skip
# v13+ (KIP-516): topics by id, in the request and the response.
FETCH_BY_ID: Final = TopicPartitions(
    "topics", "topic_id", "partitions", "partition",
    "responses", "topic_id", "partitions", "partition_index", FETCH.refused,
)  # fmt: skip
_FETCH_BY_ID_SINCE: Final = 13
LIST_OFFSETS: Final = TopicPartitions(
    "topics", "name", "partitions", "partition_index",
    "topics", "name", "partitions", "partition_index",
    {"timestamp": -1, "offset": -1},
)  # fmt: skip
OFFSET_FOR_LEADER_EPOCH: Final = TopicPartitions(
    "topics", "topic", "partitions", "partition",
    "topics", "topic", "partitions", "partition",
    {"leader_epoch": -1, "end_offset": -1},
)  # fmt: skip
DELETE_RECORDS: Final = TopicPartitions(
    "topics", "name", "partitions", "partition_index",
    "topics", "name", "partitions", "partition_index",
    {"low_watermark": -1},
)  # fmt: skip
DESCRIBE_PRODUCERS: Final = TopicPartitions(
    "topics", "name", "partition_indexes", None,
    "topics", "name", "partitions", "partition_index",
)  # fmt: skip


def _topic(check: RequestCheck, operation: AclOperation) -> Callable[[str], bool]:
    return lambda name: check.allowed(operation, _TOPIC, name)


def produce(check: RequestCheck, version: int, request: Body) -> Verdict:
    """``handleProduceRequest``: WRITE on the transactional id when there is one,
    else every partition TRANSACTIONAL_ID_AUTHORIZATION_FAILED; then WRITE on
    each topic.

    Kafka checks the transactional id only when a batch is transactional, and
    a transactional batch without an id fails whoever sends it; the edge reads
    no batch, so it checks the id whenever the request names one (Kafka's
    producers name one only for transactional batches).
    """
    transactional_id = request.get("transactional_id")
    if transactional_id is not None and not check.allowed(
        AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id
    ):
        return PRODUCE.refuse_all(request, _TXAF)
    return PRODUCE.verdict(request, _topic(check, AclOperation.WRITE), _TAF)


def fetch(check: RequestCheck, version: int, request: Body) -> Verdict:
    """``handleFetchRequest``: a follower's fetch (replica id >= 0) needs
    CLUSTER_ACTION, else every partition TOPIC_AUTHORIZATION_FAILED; a
    consumer's needs READ on each topic. By id (v13+), a consumer's topic whose
    id the cluster's metadata does not hold is UNKNOWN_TOPIC_ID before READ is
    asked; a follower's unknown ids are the cluster's to answer."""
    replica = request.get("replica_id", -1)
    state = request.get("replica_state")
    if state is not None:
        replica = state.get("replica_id", -1)
    shape = FETCH_BY_ID if version >= _FETCH_BY_ID_SINCE else FETCH
    if replica >= 0:
        if check.cluster(AclOperation.CLUSTER_ACTION):
            return ALLOWED
        return shape.refuse_all(request, _TAF, _fetch_top(version))
    read = _topic(check, AclOperation.READ)
    if shape is FETCH_BY_ID:
        return shape.judged(request, by_id(check, read, _TAF), _fetch_top(version))
    return FETCH.verdict(request, read, _TAF, _fetch_top(version))


def _fetch_top(version: int) -> Body:
    # A refused fetch leaves the session alone (FetchResponse.of with
    # INVALID_SESSION_ID).
    return {"error_code": 0, "session_id": 0}


def list_offsets(check: RequestCheck, version: int, request: Body) -> Verdict:
    """``handleListOffsetRequest``: DESCRIBE on each topic."""
    return LIST_OFFSETS.verdict(request, _topic(check, AclOperation.DESCRIBE), _TAF)


def offset_for_leader_epoch(check: RequestCheck, version: int, request: Body) -> Verdict:
    """CLUSTER_ACTION on the cluster allows every topic; else DESCRIBE on each."""
    if check.cluster(AclOperation.CLUSTER_ACTION, log_if_denied=False):
        return OFFSET_FOR_LEADER_EPOCH.verdict(request, lambda _: True, _TAF)
    allowed = _topic(check, AclOperation.DESCRIBE)
    return OFFSET_FOR_LEADER_EPOCH.verdict(request, allowed, _TAF)


def delete_records(check: RequestCheck, version: int, request: Body) -> Verdict:
    """DELETE on each topic."""
    return DELETE_RECORDS.verdict(request, _topic(check, AclOperation.DELETE), _TAF)


def describe_producers(check: RequestCheck, version: int, request: Body) -> Verdict:
    """READ on each topic."""
    return DESCRIBE_PRODUCERS.verdict(request, _topic(check, AclOperation.READ), _TAF)
