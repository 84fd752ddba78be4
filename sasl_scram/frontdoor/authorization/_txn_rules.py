"""Transactions, as ``KafkaApis`` authorizes them: WRITE on the transactional
id, then what the step touches (the group, the topics)."""

from __future__ import annotations

from typing import Final

from sasl_scram.authz import AclOperation
from sasl_scram.authz import ResourceType
from sasl_scram.frontdoor.authorization._check import RequestCheck
from sasl_scram.frontdoor.authorization._items import TopicPartitions
from sasl_scram.frontdoor.authorization._items import by_id
from sasl_scram.frontdoor.authorization._items import split_items
from sasl_scram.frontdoor.authorization._verdicts import ALLOWED
from sasl_scram.frontdoor.authorization._verdicts import Body
from sasl_scram.frontdoor.authorization._verdicts import Refused
from sasl_scram.frontdoor.authorization._verdicts import Verdict
from sasl_scram.frontdoor.authorization._verdicts import and_then
from sasl_scram.kafka import ErrorCode

__all__ = [
    "add_offsets_to_txn",
    "add_partitions_to_txn",
    "describe_transactions",
    "end_txn",
    "init_producer_id",
    "txn_offset_commit",
]

_TXN: Final = ResourceType.TRANSACTIONAL_ID
_TAF: Final = int(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
_GAF: Final = int(ErrorCode.GROUP_AUTHORIZATION_FAILED)
_CAF: Final = int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
_TXAF: Final = int(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
_NOT_ATTEMPTED: Final = int(ErrorCode.OPERATION_NOT_ATTEMPTED)
#: AddPartitionsToTxn v4+ is the brokers' batched form (KIP-890).
_BROKER_BATCHED_SINCE: Final = 4

TXN_OFFSET_COMMIT: Final = TopicPartitions(
    "topics", "name", "partitions", "partition_index",
    "topics", "name", "partitions", "partition_index",
)  # fmt: skip
# v6+: topics by id, in the request and the response.
TXN_OFFSET_COMMIT_BY_ID: Final = TopicPartitions(
    "topics", "topic_id", "partitions", "partition_index",
    "topics", "topic_id", "partitions", "partition_index",
)  # fmt: skip
_TXN_OFFSET_COMMIT_BY_ID_SINCE: Final = 6
ADD_PARTITIONS: Final = TopicPartitions(
    "v3_and_below_topics", "name", "partitions", None,
    "results_by_topic_v3_and_below", "name", "results_by_partition", "partition_index",
)  # fmt: skip


def _write_txn(check: RequestCheck, request: Body) -> bool:
    return check.allowed(AclOperation.WRITE, _TXN, request["transactional_id"])


def init_producer_id(check: RequestCheck, version: int, request: Body) -> Verdict:
    """WRITE on the transactional id; without one, IDEMPOTENT_WRITE on the
    cluster (logged only if allowed) or WRITE on some topic."""
    transactional_id = request.get("transactional_id")
    if transactional_id is not None:
        if check.allowed(AclOperation.WRITE, _TXN, transactional_id):
            return ALLOWED
        return Refused({"error_code": _TXAF, "producer_epoch": -1})
    if check.cluster(AclOperation.IDEMPOTENT_WRITE, log_if_denied=False) or check.by_resource_type(
        AclOperation.WRITE, ResourceType.TOPIC
    ):
        return ALLOWED
    return Refused({"error_code": _CAF, "producer_epoch": -1})


def add_offsets_to_txn(check: RequestCheck, version: int, request: Body) -> Verdict:
    """WRITE on the transactional id, then READ on the group."""
    if not _write_txn(check, request):
        return Refused({"error_code": _TXAF})
    if not check.allowed(AclOperation.READ, ResourceType.GROUP, request["group_id"]):
        return Refused({"error_code": _GAF})
    return ALLOWED


def end_txn(check: RequestCheck, version: int, request: Body) -> Verdict:
    """WRITE on the transactional id."""
    return ALLOWED if _write_txn(check, request) else Refused({"error_code": _TXAF})


def txn_offset_commit(check: RequestCheck, version: int, request: Body) -> Verdict:
    """WRITE on the transactional id, then READ on the group (either refused:
    every partition carries the error), then READ on each topic. By id (v6+),
    a topic whose id the cluster's metadata does not hold is UNKNOWN_TOPIC_ID
    before READ is asked, as OffsetCommit v10+ answers it."""
    by_ids = version >= _TXN_OFFSET_COMMIT_BY_ID_SINCE
    shape = TXN_OFFSET_COMMIT_BY_ID if by_ids else TXN_OFFSET_COMMIT
    if not _write_txn(check, request):
        return shape.refuse_all(request, _TXAF)
    if not check.allowed(AclOperation.READ, ResourceType.GROUP, request["group_id"]):
        return shape.refuse_all(request, _GAF)
    allowed = lambda name: check.allowed(AclOperation.READ, ResourceType.TOPIC, name)  # noqa: E731
    if by_ids:
        return shape.judged(request, by_id(check, allowed, _TAF))
    return TXN_OFFSET_COMMIT.verdict(request, allowed, _TAF)


def add_partitions_to_txn(check: RequestCheck, version: int, request: Body) -> Verdict:
    """v0-3 (a client's): WRITE on the transactional id (else every partition
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then WRITE on each topic; a refused
    topic fails its partitions and the others are not attempted (Kafka adds
    all or none). v4+ (a broker's): CLUSTER_ACTION."""
    if version >= _BROKER_BATCHED_SINCE:
        if check.cluster(AclOperation.CLUSTER_ACTION):
            return ALLOWED
        return Refused({"error_code": _CAF})
    if not check.allowed(AclOperation.WRITE, _TXN, request["v3_and_below_transactional_id"]):
        return ADD_PARTITIONS.refuse_all(request, _TXAF)
    topics = request["v3_and_below_topics"]
    refused = {
        topic["name"]
        for topic in topics
        if not check.allowed(AclOperation.WRITE, ResourceType.TOPIC, topic["name"])
    }
    if not refused:
        return ALLOWED
    entries = [
        ADD_PARTITIONS.entry(topic, _TAF if topic["name"] in refused else _NOT_ATTEMPTED)
        for topic in topics
    ]
    for entry in entries:
        for partition in entry["results_by_partition"]:
            partition["partition_error_code"] = partition.pop("error_code")
    return Refused({"results_by_topic_v3_and_below": entries})


def describe_transactions(check: RequestCheck, version: int, request: Body) -> Verdict:
    """DESCRIBE on each transactional id; the topics of a described one are
    left out unless the user may DESCRIBE them."""
    verdict = split_items(
        request,
        "transactional_ids",
        lambda txn: check.allowed(AclOperation.DESCRIBE, _TXN, txn),
        lambda txn: {
            "transactional_id": txn,
            "error_code": _TXAF,
            "transaction_state": "",
            "producer_id": -1,
            "producer_epoch": -1,
            "topics": [],
        },
        "transaction_states",
    )
    if isinstance(verdict, Refused):
        return verdict

    def topics(answer: Body) -> None:
        # Logged: handleDescribeTransactionsRequest asks authorize with its defaults.
        for state in answer.get("transaction_states") or ():
            state["topics"] = [
                topic
                for topic in state["topics"]
                if check.allowed(AclOperation.DESCRIBE, ResourceType.TOPIC, topic["topic"])
            ]

    return and_then(verdict, request, topics)
