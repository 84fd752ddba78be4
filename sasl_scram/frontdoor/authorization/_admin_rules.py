"""Administrative APIs, as Kafka 4.x's ``ControllerApis`` and ``KafkaApis``
authorize them: topics, configs, and the operations on the cluster itself."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from sasl_scram.authz import AclOperation
from sasl_scram.authz import ResourceType
from sasl_scram.frontdoor.authorization._check import RequestCheck
from sasl_scram.frontdoor.authorization._items import answered_first
from sasl_scram.frontdoor.authorization._items import duplicated
from sasl_scram.frontdoor.authorization._items import split_items
from sasl_scram.frontdoor.authorization._topic_names import ZERO_ID
from sasl_scram.frontdoor.authorization._verdicts import ALLOWED
from sasl_scram.frontdoor.authorization._verdicts import Body
from sasl_scram.frontdoor.authorization._verdicts import Refused
from sasl_scram.frontdoor.authorization._verdicts import Verdict
from sasl_scram.frontdoor.authorization._verdicts import and_then
from sasl_scram.kafka import ErrorCode

__all__ = [
    "CLUSTER_ONLY",
    "alter_configs",
    "create_partitions",
    "create_topics",
    "delete_topics",
    "describe_configs",
    "incremental_alter_configs",
]

_TOPIC: Final = ResourceType.TOPIC
_TAF: Final = int(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
_GAF: Final = int(ErrorCode.GROUP_AUTHORIZATION_FAILED)
_CAF: Final = int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
_INVALID_REQUEST: Final = int(ErrorCode.INVALID_REQUEST)
_UTI: Final = int(ErrorCode.UNKNOWN_TOPIC_ID)
#: KIP-516: DeleteTopics names a topic by name or by id.
_DELETE_BY_ID_SINCE: Final = 6
_CAF_TEXT: Final = ErrorCode.CLUSTER_AUTHORIZATION_FAILED.default_message
_INVALID_TEXT: Final = ErrorCode.INVALID_REQUEST.default_message
#: ControllerApis' and ConfigAdminManager's texts for what they refuse unauthorized.
_DUPLICATE_NAME: Final = "Duplicate topic name."
_DUPLICATE_ID: Final = "Duplicate topic id."
_ONCE_TEXT: Final = "Each resource must appear at most once."
_METADATA_TOPIC: Final = "__cluster_metadata"
_METADATA_TOPIC_TEXT: Final = f"Creation of internal topic {_METADATA_TOPIC} is prohibited."

# ConfigResource.Type codes.
_TOPIC_CONFIG, _BROKER, _CLIENT_METRICS, _BROKER_LOGGER, _GROUP_CONFIG = 2, 4, 16, 8, 32


def _topic_allowed(check: RequestCheck, operation: AclOperation) -> Callable[[str], bool]:
    return lambda name: check.allowed(operation, _TOPIC, name)


def create_topics(check: RequestCheck, version: int, request: Body) -> Verdict:
    """``ControllerApis.createTopics``: a name given twice answers INVALID_REQUEST
    once, and the metadata topic INVALID_REQUEST, neither authorized; then CREATE
    on the cluster (unlogged if refused) allows every topic, else CREATE on each.
    A created topic whose configs the user may not describe comes back with
    ``topic_config_error_code`` TOPIC_AUTHORIZATION_FAILED and no configs."""
    names = [topic["name"] for topic in request["topics"] or ()]
    twice = duplicated(names)
    early = {*twice, *({_METADATA_TOPIC} & set(names))}
    entries = [_invalid("name", name, _DUPLICATE_NAME) for name in twice]
    if _METADATA_TOPIC in early - set(twice):
        entries.append(_invalid("name", _METADATA_TOPIC, _METADATA_TOPIC_TEXT))
    return answered_first(
        request, "topics", "topics", lambda topic: topic["name"] in early, entries,
        lambda rest: _create_topics(check, rest),
    )  # fmt: skip


def _invalid(key: str, name: str | None, message: str, **more: object) -> Body:
    return {key: name, **more, "error_code": _INVALID_REQUEST, "error_message": message}


def _create_topics(check: RequestCheck, request: Body) -> Verdict:
    everything = check.cluster(AclOperation.CREATE, log_if_denied=False)
    verdict = split_items(
        request,
        "topics",
        lambda topic: everything or check.allowed(AclOperation.CREATE, _TOPIC, topic["name"]),
        lambda topic: {
            "name": topic["name"],
            "error_code": _TAF,
            "error_message": "Authorization failed.",
        },
        "topics",
    )
    if isinstance(verdict, Refused):
        return verdict

    def configs_hidden(answer: Body) -> None:
        for topic in answer.get("topics") or ():
            # logIfDenied = false, as ControllerApis.handleCreateTopics asks it.
            if topic.get("error_code") == 0 and not check.allowed(
                AclOperation.DESCRIBE_CONFIGS, _TOPIC, topic["name"], log_if_denied=False
            ):
                topic.update(
                    topic_config_error_code=_TAF,
                    configs=None,
                    num_partitions=-1,
                    replication_factor=-1,
                )

    return and_then(verdict, request, configs_hidden)


def delete_topics(check: RequestCheck, version: int, request: Body) -> Verdict:
    """By name (v0-5): DELETE on the cluster allows every topic; else DESCRIBE
    then DELETE on each, either refused TOPIC_AUTHORIZATION_FAILED. v6+ names
    each topic by name or by id (``ControllerApis.deleteTopics``)."""
    if check.cluster(AclOperation.DELETE, log_if_denied=False):
        return ALLOWED
    if version >= _DELETE_BY_ID_SINCE:
        return _delete_topics_v6(check, request)

    def allowed(name: str) -> bool:
        return check.allowed(AclOperation.DESCRIBE, _TOPIC, name) and check.allowed(
            AclOperation.DELETE, _TOPIC, name
        )

    # A name given twice: INVALID_REQUEST once, unauthorized (ControllerApis.deleteTopics).
    twice = duplicated(request["topic_names"] or ())
    return answered_first(
        request, "topic_names", "responses", lambda name: name in twice,
        [_invalid("name", name, _DUPLICATE_NAME) for name in twice],
        lambda rest: split_items(rest, "topic_names", allowed,
                                 lambda name: {"name": name, "error_code": _TAF}, "responses"),
    )  # fmt: skip


def _delete_topics_v6(check: RequestCheck, request: Body) -> Verdict:
    """``ControllerApis.deleteTopics`` by name or id: an unknown id answers
    UNKNOWN_TOPIC_ID (name null); a known one the user may not delete answers
    TOPIC_AUTHORIZATION_FAILED with its name only if the user may describe it
    (else null: the id does not reveal the name); a name, TOPIC_AUTHORIZATION_FAILED
    with the zero id. A name or an id given twice answers INVALID_REQUEST once,
    unauthorized, as the controller answers it. An entry with both or neither is
    the cluster's INVALID_REQUEST, which deletes nothing: it goes on as it came."""
    errors: dict[int, Body] = {}

    def allowed(topic: Body) -> bool:
        name, topic_id = topic.get("name"), topic.get("topic_id", ZERO_ID)
        if name is not None:
            if topic_id == ZERO_ID and not (
                check.allowed(AclOperation.DESCRIBE, _TOPIC, name)
                and check.allowed(AclOperation.DELETE, _TOPIC, name)
            ):
                errors[id(topic)] = {"name": name, "topic_id": ZERO_ID, "error_code": _TAF}
            return id(topic) not in errors
        if topic_id == ZERO_ID:
            return True
        known = check.topic_names.name(topic_id)
        if known is None:
            errors[id(topic)] = {"name": None, "topic_id": topic_id, "error_code": _UTI}
            return False
        describable = check.allowed(AclOperation.DESCRIBE, _TOPIC, known)
        if check.allowed(AclOperation.DELETE, _TOPIC, known):
            return True
        shown = known if describable else None
        errors[id(topic)] = {"name": shown, "topic_id": topic_id, "error_code": _TAF}
        return False

    def refused(topic: Body) -> Body:
        entry = errors[id(topic)]
        return {**entry, "error_message": ErrorCode(entry["error_code"]).default_message}

    # A name or an id given twice: INVALID_REQUEST once, unauthorized.
    topics = request["topics"] or ()
    names = duplicated(t["name"] for t in topics if t.get("topic_id", ZERO_ID) == ZERO_ID)
    ids = duplicated(t["topic_id"] for t in topics if t.get("name") is None)
    entries = [_invalid("name", n, _DUPLICATE_NAME, topic_id=ZERO_ID) for n in names if n]
    entries += [_invalid("name", None, _DUPLICATE_ID, topic_id=i) for i in ids if i != ZERO_ID]

    def early(topic: Body) -> bool:
        name, topic_id = topic.get("name"), topic.get("topic_id", ZERO_ID)
        return (topic_id == ZERO_ID and name is not None and name in names) or (
            name is None and topic_id != ZERO_ID and topic_id in ids
        )

    return answered_first(
        request, "topics", "responses", early, entries,
        lambda rest: split_items(rest, "topics", allowed, refused, "responses"),
    )  # fmt: skip


def create_partitions(check: RequestCheck, version: int, request: Body) -> Verdict:
    """``ControllerApis.createPartitions``: a name given twice answers
    INVALID_REQUEST once, unauthorized; then ALTER on each topic (refused: no
    message)."""
    twice = duplicated(topic["name"] for topic in request["topics"] or ())
    return answered_first(
        request, "topics", "results", lambda topic: topic["name"] in twice,
        [_invalid("name", name, _DUPLICATE_NAME) for name in twice],
        lambda rest: split_items(
            rest, "topics", lambda topic: check.allowed(AclOperation.ALTER, _TOPIC, topic["name"]),
            lambda topic: {"name": topic["name"], "error_code": _TAF, "error_message": None},
            "results",
        ),
    )  # fmt: skip


def _config_check(
    check: RequestCheck, operation: AclOperation, broker_logger: bool
) -> Callable[[Body], int]:
    """The error for one config resource (0: allowed)."""

    def error(resource: Body) -> int:
        kind, name = resource["resource_type"], resource["resource_name"]
        if kind in (_BROKER, _CLIENT_METRICS) or (kind == _BROKER_LOGGER and broker_logger):
            return 0 if check.cluster(operation) else _CAF
        if kind == _TOPIC_CONFIG:
            return 0 if check.allowed(operation, _TOPIC, name) else _TAF
        if kind == _GROUP_CONFIG:
            return 0 if check.allowed(operation, ResourceType.GROUP, name) else _GAF
        return _INVALID_REQUEST

    return error


def _configs(
    request: Body, key: str, response_key: str, error: Callable[[Body], int], once: bool = False
) -> Verdict:
    """``once``: a resource named twice fails each time with INVALID_REQUEST,
    unauthorized (``ConfigAdminManager.preprocess``, which the broker runs first)."""
    errors: dict[int, int] = {}
    twice = set(duplicated(_config_key(r) for r in request[key] or ())) if once else set()

    def allowed(resource: Body) -> bool:
        if _config_key(resource) in twice:
            errors[id(resource)] = _INVALID_REQUEST
            return False
        errors[id(resource)] = code = error(resource)
        return code == 0

    def refused(resource: Body) -> Body:
        code = errors[id(resource)]
        text = _ONCE_TEXT if _config_key(resource) in twice else ErrorCode(code).default_message
        return {"error_code": code, "error_message": text,
                "resource_type": resource["resource_type"],
                "resource_name": resource["resource_name"], "configs": []}  # fmt: skip

    return split_items(request, key, allowed, refused, response_key)


def _config_key(resource: Body) -> tuple[int, str]:
    return resource["resource_type"], resource["resource_name"]


def describe_configs(check: RequestCheck, version: int, request: Body) -> Verdict:
    """DESCRIBE_CONFIGS: brokers, broker loggers and client metrics on the
    cluster, a topic on it, a group on it; any other type fails every resource
    of the request with INVALID_REQUEST."""
    check_one = _config_check(check, AclOperation.DESCRIBE_CONFIGS, broker_logger=True)
    resources = request["resources"] or ()
    decided: dict[int, int] = {}
    for resource in resources:
        decided[id(resource)] = check_one(resource)
        if decided[id(resource)] == _INVALID_REQUEST:
            # ConfigHelper.handleDescribeConfigsRequest throws on an unknown type
            # (after deciding the resources before it), and KafkaApis answers every
            # resource with INVALID_REQUEST (DescribeConfigsRequest.getErrorResponse).
            return Refused({"results": [
                {"error_code": _INVALID_REQUEST, "error_message": _INVALID_TEXT, "configs": [],
                 "resource_type": r["resource_type"], "resource_name": r["resource_name"]}
                for r in resources
            ]})  # fmt: skip
    return _configs(request, "resources", "results", lambda resource: decided[id(resource)])


def alter_configs(check: RequestCheck, version: int, request: Body) -> Verdict:
    """ALTER_CONFIGS as DescribeConfigs; broker loggers are not alterable here."""
    error = _config_check(check, AclOperation.ALTER_CONFIGS, broker_logger=False)
    return _configs(request, "resources", "responses", error, once=True)


def incremental_alter_configs(check: RequestCheck, version: int, request: Body) -> Verdict:
    """ALTER_CONFIGS as DescribeConfigs, broker loggers on the cluster."""
    error = _config_check(check, AclOperation.ALTER_CONFIGS, broker_logger=True)
    return _configs(request, "resources", "responses", error, once=True)


def _top_level(error_message: bool) -> Callable[[Body, int], Body]:
    def refusal(request: Body, version: int) -> Body:
        body: Body = {"error_code": _CAF}
        if error_message:
            body["error_message"] = _CAF_TEXT
        return body

    return refusal


def _log_dirs(request: Body, version: int) -> Body:
    return {"error_code": _CAF, "results": []}


def _replica_log_dirs(request: Body, version: int) -> Body:
    results = [
        {"topic_name": topic["name"],
         "partitions": [{"partition_index": p, "error_code": _CAF} for p in topic["partitions"]]}
        for directory in request["dirs"]
        for topic in directory["topics"]
    ]  # fmt: skip
    return {"results": results}


def _elect_leaders(request: Body, version: int) -> Body:
    results = [
        {"topic": topic["topic"],
         "partition_result": [{"partition_id": p, "error_code": _CAF, "error_message": _CAF_TEXT}
                              for p in topic["partitions"]]}
        for topic in request.get("topic_partitions") or ()
    ]  # fmt: skip
    return {"error_code": _CAF, "replica_election_results": results}


def _client_quotas(request: Body, version: int) -> Body:
    entries = [
        {"error_code": _CAF, "error_message": _CAF_TEXT, "entity": entry["entity"]}
        for entry in request["entries"]
    ]
    return {"entries": entries}


#: APIs that need one operation on the cluster, and their refusal.
CLUSTER_ONLY: Final[dict[int, tuple[AclOperation, Callable[[Body, int], Body]]]] = {
    34: (AclOperation.ALTER, _replica_log_dirs),  # AlterReplicaLogDirs
    35: (AclOperation.DESCRIBE, _log_dirs),  # DescribeLogDirs
    43: (AclOperation.ALTER, _elect_leaders),  # ElectLeaders
    45: (AclOperation.ALTER, _top_level(True)),  # AlterPartitionReassignments
    46: (AclOperation.DESCRIBE, _top_level(True)),  # ListPartitionReassignments
    48: (AclOperation.DESCRIBE_CONFIGS, _top_level(True)),  # DescribeClientQuotas
    49: (AclOperation.ALTER_CONFIGS, _client_quotas),  # AlterClientQuotas
    55: (AclOperation.DESCRIBE, _top_level(True)),  # DescribeQuorum
    57: (AclOperation.ALTER, _top_level(True)),  # UpdateFeatures
    64: (AclOperation.ALTER, _top_level(True)),  # UnregisterBroker
    74: (AclOperation.DESCRIBE_CONFIGS, _top_level(False)),  # ListConfigResources
}


def cluster_only(api_key: int) -> Callable[[RequestCheck, int, Body], Verdict]:
    operation, refusal = CLUSTER_ONLY[api_key]

    def rule(check: RequestCheck, version: int, request: Body) -> Verdict:
        if check.cluster(operation):
            return ALLOWED
        return Refused(refusal(request, version))

    return rule
