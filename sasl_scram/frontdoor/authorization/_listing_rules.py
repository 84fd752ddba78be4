"""APIs whose answers list what the user may see: the cluster answers for the
upstream login, and the edge leaves out or replaces what the edge user may
not describe, as Kafka would have answered that user. KIP-430's authorized
operations in an answer are the edge user's, computed at the edge.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from sasl_scram.authz import CLUSTER_NAME
from sasl_scram.authz import AclOperation
from sasl_scram.authz import Action
from sasl_scram.authz import ResourceType
from sasl_scram.frontdoor.authorization._check import RequestCheck
from sasl_scram.frontdoor.authorization._verdicts import ALLOWED
from sasl_scram.frontdoor.authorization._verdicts import Body
from sasl_scram.frontdoor.authorization._verdicts import Partly
from sasl_scram.frontdoor.authorization._verdicts import Refused
from sasl_scram.frontdoor.authorization._verdicts import Verdict
from sasl_scram.frontdoor.authorization._verdicts import and_then
from sasl_scram.kafka import ErrorCode

__all__ = [
    "describe_cluster",
    "describe_topic_partitions",
    "list_groups",
    "list_transactions",
    "metadata",
    "with_authorized_operations",
]

_TOPIC: Final = ResourceType.TOPIC
_TAF: Final = int(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
_UNKNOWN_TOPIC: Final = int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
_NO_LEADER: Final = int(ErrorCode.LEADER_NOT_AVAILABLE)
_ZERO_ID: Final = bytes(16)
#: Entries Kafka answers without the topic's authorized operations.
_NO_OPERATIONS_FOR: Final = frozenset({_TAF, int(ErrorCode.UNKNOWN_TOPIC_ID)})
#: KIP-430: "not asked for".
_NOT_ASKED: Final = -(2**31)
#: Topics Kafka itself keeps (``Topic.isInternal``).
_INTERNAL: Final = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


def _describable(check: RequestCheck, name: str, *, logged: bool) -> bool:
    return check.allowed(
        AclOperation.DESCRIBE, _TOPIC, name, log_if_allowed=logged, log_if_denied=logged
    )


def _operations(check: RequestCheck, resource_type: ResourceType, name: str) -> int:
    return check.authorizer.authorized_operations(
        check.session.principal, check.host, resource_type, name
    )


def _cluster_operations(check: RequestCheck) -> int:
    """``AuthHelper.computeDescribeClusterResponse``: the cluster's operations only
    for a session allowed DESCRIBE on the cluster (a logged check), else 0."""
    if not check.cluster(AclOperation.DESCRIBE):
        return 0
    return _operations(check, ResourceType.CLUSTER, CLUSTER_NAME)


def _denied_topic(name: str | None, topic_id: bytes = _ZERO_ID, internal: bool = False) -> Body:
    return {"error_code": _TAF, "name": name, "topic_id": topic_id, "is_internal": internal,
            "partitions": []}  # fmt: skip


def metadata(check: RequestCheck, version: int, request: Body) -> Verdict:
    """``handleTopicMetadataRequest``: DESCRIBE on each topic (unlogged for all
    topics, which leaves the others out); a topic to be created needs CREATE on
    the cluster or on it. The cluster gets the same topics (with auto-creation
    off where the user may not create); its answer's entries are replaced."""
    topics = request.get("topics")
    listing = topics is None or (version == 0 and not topics)
    names = [] if listing else [t["name"] for t in topics if t.get("name") is not None]  # type: ignore[union-attr]
    shown = {name for name in names if _describable(check, name, logged=True)}
    creatable = shown
    auto_create = bool(request.get("allow_auto_topic_creation", True)) and not listing
    # Decided now, unrecorded: Kafka asks CREATE only for the topics that do not
    # exist, which the answer tells; those checks are recorded then (_creates).
    create = AclOperation.CREATE
    if auto_create and not _silently(check, create, ResourceType.CLUSTER, CLUSTER_NAME):
        creatable = {n for n in shown if _silently(check, create, _TOPIC, n)}
    forwarded = request
    if auto_create and (creatable != set(names)):
        forwarded = {**request, "allow_auto_topic_creation": False}

    def merge(answer: Body) -> None:
        # Every id the cluster names, those then hidden from the user too.
        check.topic_names.learn_topics(answer["topics"])
        if auto_create:
            _creates(check, answer["topics"], shown, forwarded is request)
        out: list[Body] = []
        for topic in answer["topics"]:
            name = topic.get("name")
            if name is None or topic.get("error_code") == int(ErrorCode.UNKNOWN_TOPIC_ID):
                out.append(topic)
            elif listing:
                if _describable(check, name, logged=False):
                    out.append(topic)
            elif name not in names:  # asked for by id
                out.append(topic if _describable(check, name, logged=True)
                           else _denied_topic(None, topic["topic_id"]))  # fmt: skip
            elif name not in shown:
                out.append(_denied_topic(name))
            elif topic["error_code"] == _UNKNOWN_TOPIC and auto_create and name not in creatable:
                out.append(_denied_topic(name, internal=name in _INTERNAL))
            else:
                out.append(topic)
        answer["topics"] = out
        _topic_operations(check, request, answer["topics"])
        if cluster_operations is not None:
            answer["cluster_authorized_operations"] = cluster_operations

    # v8-10 only (the request's field), as handleTopicMetadataRequest.
    cluster_operations = None
    if request.get("include_cluster_authorized_operations"):
        cluster_operations = _cluster_operations(check)
    return Partly(forwarded, merge)


def _silently(check: RequestCheck, operation: AclOperation, kind: ResourceType, name: str) -> bool:
    action = Action.on(operation, kind, name, log_if_allowed=False, log_if_denied=False)
    return check.authorizer.authorize(check.session.principal, check.host, action).allowed


def _creates(check: RequestCheck, topics: list[Body], shown: set[str], created: bool) -> None:
    """Record the CREATE checks ``handleTopicMetadataRequest`` makes: on the cluster
    (logged if allowed), then on each describable topic that does not exist,
    only when some does not. The answer tells which: UNKNOWN_TOPIC_OR_PARTITION,
    or LEADER_NOT_AVAILABLE where the cluster was let create them."""
    missing = [
        topic["name"] for topic in topics
        if topic.get("name") in shown and (topic["error_code"] == _UNKNOWN_TOPIC
                                           or (created and topic["error_code"] == _NO_LEADER))
    ]  # fmt: skip
    if missing and not check.cluster(AclOperation.CREATE, log_if_denied=False):
        check.filter_allowed(AclOperation.CREATE, _TOPIC, missing)


def _topic_operations(check: RequestCheck, request: Body, topics: list[Body]) -> None:
    if not request.get("include_topic_authorized_operations"):
        return
    for topic in topics:
        # Every entry of the metadata Kafka answers for a describable topic, one
        # that does not exist included; never a refused one (handleTopicMetadataRequest,
        # DescribeTopicPartitionsRequestHandler). An entry the cluster refused its
        # own login keeps the cluster's (its error says nothing of the edge user).
        if topic.get("name") is not None and topic["error_code"] not in _NO_OPERATIONS_FOR:
            topic["topic_authorized_operations"] = _operations(check, _TOPIC, topic["name"])


def describe_topic_partitions(check: RequestCheck, version: int, request: Body) -> Verdict:
    """DESCRIBE on each topic: named ones refused answer TOPIC_AUTHORIZATION_FAILED
    with no partitions; with no names (all topics) they are left out."""
    names = {topic["name"] for topic in request["topics"]}
    listing = not names
    shown = {name for name in names if _describable(check, name, logged=True)}

    def merge(answer: Body) -> None:
        check.topic_names.learn_topics(answer["topics"])
        out = []
        for topic in answer["topics"]:
            name = topic.get("name")
            if listing:
                # Logged, unlike Metadata's listing: the handler authorizes each
                # topic with logging on (DescribeTopicPartitionsRequestHandler).
                if name is not None and _describable(check, name, logged=True):
                    out.append(topic)
            elif name in names and name not in shown:
                out.append(_denied_topic(name))
            else:
                out.append(topic)
        answer["topics"] = out
        _topic_operations(check, {"include_topic_authorized_operations": True}, out)

    return Partly(request, merge)


def list_groups(check: RequestCheck, version: int, request: Body) -> Verdict:
    """DESCRIBE on the cluster lists every group; else only those the user may
    DESCRIBE (neither refusal logged)."""
    if check.cluster(AclOperation.DESCRIBE, log_if_denied=False):
        return ALLOWED

    def merge(answer: Body) -> None:
        answer["groups"] = [
            group for group in answer["groups"]
            if check.allowed(AclOperation.DESCRIBE, ResourceType.GROUP, group["group_id"],
                             log_if_denied=False)
        ]  # fmt: skip

    return Partly(request, merge)


def list_transactions(check: RequestCheck, version: int, request: Body) -> Verdict:
    """Only the transactional ids the user may DESCRIBE (refusals unlogged)."""

    def merge(answer: Body) -> None:
        answer["transaction_states"] = [
            state for state in answer["transaction_states"]
            if check.allowed(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID,
                             state["transactional_id"], log_if_denied=False)
        ]  # fmt: skip

    return Partly(request, merge)


def describe_cluster(check: RequestCheck, version: int, request: Body) -> Verdict:
    """No check on a broker's endpoint; the authorized operations, if asked for,
    are the edge user's."""
    if not request.get("include_cluster_authorized_operations"):
        return ALLOWED
    operations = _cluster_operations(check)

    def merge(answer: Body) -> None:
        answer["cluster_authorized_operations"] = operations

    return Partly(request, merge)


def with_authorized_operations(
    rule: Callable[[RequestCheck, int, Body], Verdict], entries: str, key: str
) -> Callable[[RequestCheck, int, Body], Verdict]:
    """``rule``, then the groups' KIP-430 operations (DescribeGroups,
    ConsumerGroupDescribe) made the edge user's when the request asks for them."""

    def authorized(check: RequestCheck, version: int, request: Body) -> Verdict:
        verdict = rule(check, version, request)
        if not request.get("include_authorized_operations") or isinstance(verdict, Refused):
            return verdict

        def operations(answer: Body) -> None:
            for entry in answer.get(entries) or ():
                if entry.get("error_code") == 0:
                    entry["authorized_operations"] = _operations(
                        check, ResourceType.GROUP, entry[key]
                    )

        return and_then(verdict, request, operations)

    return authorized
