"""The consumer-group APIs, as ``KafkaApis`` authorizes them: READ on the group
to take part, DESCRIBE to look, DELETE to delete; offsets need the topics too."""

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
    "consumer_group_describe",
    "consumer_group_heartbeat",
    "delete_groups",
    "describe_groups",
    "find_coordinator",
    "group_read",
    "offset_commit",
    "offset_delete",
]

_GROUP: Final = ResourceType.GROUP
_TAF: Final = int(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
_GAF: Final = int(ErrorCode.GROUP_AUTHORIZATION_FAILED)
_TXAF: Final = int(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
_CAF: Final = int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
_INVALID_REQUEST: Final = int(ErrorCode.INVALID_REQUEST)
#: KIP-430: the authorized operations of a group nobody may describe.
_NO_OPERATIONS: Final = -(2**31)
#: ``handleConsumerGroupDescribe``'s message for a group hidden for its topics.
_HIDDEN_TOPICS: Final = (
    "The group has described topic(s) that the client is not authorized to describe."
)

OFFSET_COMMIT: Final = TopicPartitions(
    "topics", "name", "partitions", "partition_index",
    "topics", "name", "partitions", "partition_index",
)  # fmt: skip
OFFSET_DELETE: Final = OFFSET_COMMIT
# v10+ (KIP-848): topics by id, in the request and the response.
OFFSET_COMMIT_BY_ID: Final = TopicPartitions(
    "topics", "topic_id", "partitions", "partition_index",
    "topics", "topic_id", "partitions", "partition_index",
)  # fmt: skip
_OFFSET_COMMIT_BY_ID_SINCE: Final = 10


def group_read(check: RequestCheck, version: int, request: Body) -> Verdict:
    """JoinGroup, SyncGroup, Heartbeat, LeaveGroup, ConsumerGroupHeartbeat:
    READ on the group, else the top-level GROUP_AUTHORIZATION_FAILED."""
    if check.allowed(AclOperation.READ, _GROUP, request["group_id"]):
        return ALLOWED
    return Refused({"error_code": _GAF})


def consumer_group_heartbeat(check: RequestCheck, version: int, request: Body) -> Verdict:
    """KIP-848's heartbeat, as Kafka 4.x's ``handleConsumerGroupHeartbeat``: READ on
    the group, then DESCRIBE on each distinct subscribed topic name; one refused
    answers the top-level TOPIC_AUTHORIZATION_FAILED, so that the coordinator never
    assigns (and so names) a topic the member may not see."""
    verdict = group_read(check, version, request)
    if verdict is not ALLOWED:
        return verdict
    # Kafka authorizes the set of names: each distinct one once, counted once.
    names = dict.fromkeys(request.get("subscribed_topic_names") or ())
    allowed = check.filter_allowed(AclOperation.DESCRIBE, ResourceType.TOPIC, names)
    if len(allowed) < len(names):
        return Refused({"error_code": _TAF})
    return ALLOWED


def consumer_group_describe(check: RequestCheck, version: int, request: Body) -> Verdict:
    """KIP-848's describe: DESCRIBE on each group; then, as Kafka 4.x's
    ``handleConsumerGroupDescribe``, a described group whose members' assignments
    or target assignments name a topic the user may not DESCRIBE is replaced by a
    TOPIC_AUTHORIZATION_FAILED entry without members."""
    refused = {"error_code": _GAF, "authorized_operations": _NO_OPERATIONS,
               "error_message": ErrorCode.GROUP_AUTHORIZATION_FAILED.default_message}  # fmt: skip
    verdict = _per_group(check, request, AclOperation.DESCRIBE, "group_ids", "groups", refused)
    if isinstance(verdict, Refused):
        return verdict
    return and_then(verdict, request, lambda answer: _hide_assigned_topics(check, answer))


def _assigned_topics(group: Body) -> list[str]:
    return [
        topic["topic_name"]
        for member in group.get("members") or ()
        for assignment in (member.get("assignment"), member.get("target_assignment"))
        for topic in (assignment or {}).get("topic_partitions") or ()
    ]


def _hide_assigned_topics(check: RequestCheck, answer: Body) -> None:
    groups = answer.get("groups") or []
    names = dict.fromkeys(name for group in groups for name in _assigned_topics(group))
    allowed = check.filter_allowed(AclOperation.DESCRIBE, ResourceType.TOPIC, names)
    answer["groups"] = [
        group if all(name in allowed for name in _assigned_topics(group))
        else {"group_id": group["group_id"], "error_code": _TAF, "error_message": _HIDDEN_TOPICS,
              "group_state": "", "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "",
              "members": [], "authorized_operations": _NO_OPERATIONS}
        for group in groups
    ]  # fmt: skip


def offset_commit(check: RequestCheck, version: int, request: Body) -> Verdict:
    """READ on the group (else every partition GROUP_AUTHORIZATION_FAILED), then
    READ on each topic. By id (v10+), a topic whose id the cluster's metadata
    does not hold is UNKNOWN_TOPIC_ID before READ is asked
    (``handleOffsetCommitRequest``)."""
    by_ids = version >= _OFFSET_COMMIT_BY_ID_SINCE
    shape = OFFSET_COMMIT_BY_ID if by_ids else OFFSET_COMMIT
    if not check.allowed(AclOperation.READ, _GROUP, request["group_id"]):
        return shape.refuse_all(request, _GAF)
    allowed = lambda name: check.allowed(AclOperation.READ, ResourceType.TOPIC, name)  # noqa: E731
    if by_ids:
        return shape.judged(request, by_id(check, allowed, _TAF))
    return OFFSET_COMMIT.verdict(request, allowed, _TAF)


def offset_delete(check: RequestCheck, version: int, request: Body) -> Verdict:
    """DELETE on the group (else the top-level GROUP_AUTHORIZATION_FAILED), then
    READ on each topic."""
    if not check.allowed(AclOperation.DELETE, _GROUP, request["group_id"]):
        return Refused({"error_code": _GAF})
    allowed = lambda name: check.allowed(AclOperation.READ, ResourceType.TOPIC, name)  # noqa: E731
    return OFFSET_DELETE.verdict(request, allowed, _TAF)


def find_coordinator(check: RequestCheck, version: int, request: Body) -> Verdict:
    """DESCRIBE on the group (key type 0) or the transactional id (1); a share
    coordinator (2) needs CLUSTER_ACTION. Refused keys answer with no node."""
    key_type = request.get("key_type", 0)
    if key_type not in (0, 1, 2) or (key_type == 2 and version < 6):
        return _coordinator_refusal(version, request, _INVALID_REQUEST)
    error = (_GAF, _TXAF, _CAF)[key_type]

    def allowed(key: str) -> bool:
        if key_type == 2:
            return check.cluster(AclOperation.CLUSTER_ACTION)
        resource = ResourceType.GROUP if key_type == 0 else ResourceType.TRANSACTIONAL_ID
        return check.allowed(AclOperation.DESCRIBE, resource, key)

    if version < 4:
        return ALLOWED if allowed(request["key"]) else _coordinator_refusal(version, request, error)
    return split_items(
        request,
        "coordinator_keys",
        allowed,
        lambda key: _no_coordinator(key, error),
        "coordinators",
    )


def _no_coordinator(key: str, error: int) -> Body:
    message = ErrorCode(error).default_message
    return {"key": key, "node_id": -1, "host": "", "port": -1, "error_code": error,
            "error_message": message}  # fmt: skip


def _coordinator_refusal(version: int, request: Body, error: int) -> Refused:
    if version >= 4:
        keys = request.get("coordinator_keys") or []
        return Refused({"coordinators": [_no_coordinator(key, error) for key in keys]})
    refused = _no_coordinator(request.get("key", ""), error)
    del refused["key"]
    return Refused(refused)


def _per_group(
    check: RequestCheck, request: Body, operation: AclOperation, asked: str, answered: str,
    refused: Body,
) -> Verdict:  # fmt: skip
    """``operation`` on each group of ``request[asked]``; a refused one answers
    ``refused`` (with its id) in ``answered``."""
    return split_items(
        request,
        asked,
        lambda group: check.allowed(operation, _GROUP, group),
        lambda group: {"group_id": group, **refused},
        answered,
    )


def describe_groups(check: RequestCheck, version: int, request: Body) -> Verdict:
    """DESCRIBE on each group; a refused one answers GROUP_AUTHORIZATION_FAILED
    with nothing else (``DescribeGroupsResponse.groupError``)."""
    refused = {"error_code": _GAF, "group_state": "", "protocol_type": "", "protocol_data": "",
               "members": [], "authorized_operations": _NO_OPERATIONS}  # fmt: skip
    return _per_group(check, request, AclOperation.DESCRIBE, "groups", "groups", refused)


def delete_groups(check: RequestCheck, version: int, request: Body) -> Verdict:
    """DELETE on each distinct group, each answered once (``handleDeleteGroupsRequest``)."""
    refused = {"error_code": _GAF}
    distinct = {**request, "groups_names": list(dict.fromkeys(request["groups_names"] or ()))}
    return _per_group(check, distinct, AclOperation.DELETE, "groups_names", "results", refused)
