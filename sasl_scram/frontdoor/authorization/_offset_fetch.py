"""OffsetFetch, as ``KafkaApis.handleOffsetFetchRequest`` authorizes it.

DESCRIBE on each group, then DESCRIBE on each topic asked for; a refused topic
comes back with its partitions carrying TOPIC_AUTHORIZATION_FAILED. A request
for all of a group's topics (null) is answered by the cluster and the topics
the user may not describe are left out of the answer (the checks logged, as
Kafka logs them).
v0-7 ask for one group; v8+ for several, each with its own answer; v10+
(KIP-848) name topics by id: an id the cluster's metadata does not hold is
UNKNOWN_TOPIC_ID before DESCRIBE is asked, and an answer for all topics keeps
only the ids whose names the edge knows and the user may describe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from sasl_scram.authz import AclOperation
from sasl_scram.authz import ResourceType
from sasl_scram.frontdoor.authorization._check import RequestCheck
from sasl_scram.frontdoor.authorization._verdicts import ALLOWED
from sasl_scram.frontdoor.authorization._verdicts import Body
from sasl_scram.frontdoor.authorization._verdicts import Partly
from sasl_scram.frontdoor.authorization._verdicts import Refused
from sasl_scram.frontdoor.authorization._verdicts import Verdict
from sasl_scram.kafka import ErrorCode

__all__ = ["offset_fetch"]

_TAF: Final = int(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
_GAF: Final = int(ErrorCode.GROUP_AUTHORIZATION_FAILED)
_MULTI_GROUP_SINCE: Final = 8
_TOP_LEVEL_ERROR_SINCE: Final = 2
_BY_ID_SINCE: Final = 10
_UTI: Final = int(ErrorCode.UNKNOWN_TOPIC_ID)


def _refused_topic(topic: Body, error: int = _TAF, key: str = "name") -> Body:
    partitions = [
        {"partition_index": index, "committed_offset": -1, "metadata": "", "error_code": error}
        for index in topic["partition_indexes"]
    ]
    return {key: topic[key], "partitions": partitions}


def _describe(check: RequestCheck, name: str, *, logged: bool = True) -> bool:
    return check.allowed(
        AclOperation.DESCRIBE, ResourceType.TOPIC, name, log_if_allowed=logged, log_if_denied=logged
    )


def offset_fetch(check: RequestCheck, version: int, request: Body) -> Verdict:
    if version >= _MULTI_GROUP_SINCE:
        return _groups(check, request, version >= _BY_ID_SINCE)
    if not check.allowed(AclOperation.DESCRIBE, ResourceType.GROUP, request["group_id"]):
        if version >= _TOP_LEVEL_ERROR_SINCE:
            return Refused({"error_code": _GAF})
        # OffsetFetchResponse.groupError: no top-level error before v2, so every
        # partition asked for carries it.
        return Refused({"topics": [_refused_topic(t, _GAF) for t in request["topics"] or ()]})
    topics = request.get("topics")
    if topics is None:
        return Partly(request, lambda answer: _drop_unlisted(check, answer.get("topics")))
    kept = [topic for topic in topics if _describe(check, topic["name"])]
    refused = [_refused_topic(topic) for topic in topics if topic not in kept]
    if not refused:
        return ALLOWED
    if not kept:
        return Refused({"topics": refused})

    def merge(answer: Body) -> None:
        if not answer.get("error_code"):  # see _merge_groups
            answer["topics"] = [*answer["topics"], *refused]

    return Partly({**request, "topics": kept}, merge)


def _drop_unlisted(check: RequestCheck, topics: list[Body] | None, by_ids: bool = False) -> None:
    if topics:
        topics[:] = [topic for topic in topics if _listed(check, topic, by_ids)]


def _listed(check: RequestCheck, topic: Body, by_ids: bool) -> bool:
    # Logged: fetchAllOffsetsForGroup filters with filterByAuthorized's defaults.
    name = check.topic_names.name(topic["topic_id"]) if by_ids else topic["name"]
    return name is not None and _describe(check, name)


def _asked(check: RequestCheck, topics: list[Body], by_ids: bool) -> tuple[list[Body], list[Body]]:
    """The topics of one group that go on, and the refused ones' entries."""
    if not by_ids:
        allowed = [topic for topic in topics if _describe(check, topic["name"])]
        return allowed, [_refused_topic(topic) for topic in topics if topic not in allowed]
    kept: list[Body] = []
    refused: list[Body] = []
    for topic in topics:
        name = check.topic_names.name(topic["topic_id"])
        if name is None:
            refused.append(_refused_topic(topic, _UTI, "topic_id"))
        elif _describe(check, name):
            kept.append(topic)
        else:
            refused.append(_refused_topic(topic, _TAF, "topic_id"))
    return kept, refused


def _groups(check: RequestCheck, request: Body, by_ids: bool) -> Verdict:
    kept: list[Body] = []
    refused_groups: list[Body] = []
    refused_topics: dict[str, list[Body]] = {}
    all_topics: set[str] = set()
    for group in request["groups"]:
        group_id = group["group_id"]
        if not check.allowed(AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
            refused_groups.append({"group_id": group_id, "topics": [], "error_code": _GAF})
            continue
        topics = group.get("topics")
        if topics is None:
            all_topics.add(group_id)
            kept.append(group)
            continue
        allowed, refused = _asked(check, topics, by_ids)
        if refused:
            refused_topics[group_id] = refused
        kept.append({**group, "topics": allowed})
    if not (refused_groups or refused_topics or all_topics):
        return ALLOWED
    if not kept:
        return Refused({"groups": refused_groups})
    merge = _merge_groups(check, refused_groups, refused_topics, all_topics, by_ids)
    return Partly({**request, "groups": kept}, merge)


def _merge_groups(
    check: RequestCheck,
    refused_groups: list[Body],
    refused_topics: dict[str, list[Body]],
    all_topics: set[str],
    by_ids: bool,
) -> Callable[[Body], None]:
    def merge(answer: Body) -> None:
        for group in answer["groups"]:
            group_id = group["group_id"]
            if group_id in all_topics:
                _drop_unlisted(check, group["topics"], by_ids)
            # A group the coordinator answers with an error is answered as it
            # answered, the refused topics left out (fetchOffsetsForGroup).
            if not group.get("error_code"):
                group["topics"] = [*group["topics"], *refused_topics.get(group_id, ())]
        answer["groups"] = [*answer["groups"], *refused_groups]

    return merge
