"""The administrative APIs the front door audits, and what each line says.

Per API: the ACL operation Kafka's ``KafkaApis`` authorizes it with (as
``SecurityUtils.operationName`` spells it), the lines its request makes (one per
resource it changes, as Kafka's authorizer logs one per resource), and where
its response gives each line's result. Requests and responses are read with
the schemas generated from Kafka's own specs (``sasl_scram.kafka.message_spec``).

A configuration's value never reaches a line (a broker's may be a password):
its name and operation do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from typing import Final

from sasl_scram.authz import CLUSTER_NAME as CLUSTER
from sasl_scram.authz import AclOperation
from sasl_scram.authz import AclPermissionType
from sasl_scram.authz import PatternType
from sasl_scram.frontdoor.audit._lines import Key
from sasl_scram.frontdoor.audit._lines import Line
from sasl_scram.frontdoor.audit._lines import Results
from sasl_scram.frontdoor.audit._lines import joined
from sasl_scram.frontdoor.audit._lines import kafka_uuid
from sasl_scram.frontdoor.audit._lines import partition_keys
from sasl_scram.frontdoor.audit._names import CONFIG_OPERATIONS
from sasl_scram.frontdoor.audit._names import CONFIG_RESOURCES
from sasl_scram.frontdoor.audit._names import ELECTION_TYPES
from sasl_scram.frontdoor.audit._names import UPGRADE_TYPES
from sasl_scram.frontdoor.audit._names import acl_name
from sasl_scram.frontdoor.audit._names import named
from sasl_scram.frontdoor.audit._names import resource_type_name

__all__ = ["ADMIN_APIS", "AdminApi"]

Body = dict[str, Any]
#: What a DeleteAcls filter's null field matches: anything.
ANY = "<any>"
#: The name of an entity's default (a broker's cluster-wide configs, a quota's
#: default user), as Kafka writes it in ZooKeeper and ``kafka-configs`` prints it.
DEFAULT = "<default>"


@dataclass(frozen=True)
class AdminApi:
    """One audited API.

    Attributes:
        operation: the ACL operation Kafka authorizes it with.
        lines: a request's lines.
        results: a response's results.
        answered: the lines once answered, where the response itself names
            what was changed (the ACLs a DeleteAcls filter matched, every
            partition of an election over all of them); else the request's.
    """

    operation: str
    lines: Callable[[Body], list[Line]]
    results: Callable[[Body], Results]
    answered: Callable[[list[Line], Body], list[Line]] | None = None


def _flag(body: Body, out: list[tuple[str, object]]) -> list[tuple[str, object]]:
    if body.get("validate_only"):
        out.append(("validateOnly", "true"))
    return out


def _by_name(entries: list[Body], name: str = "name") -> Results:
    return Results({e[name]: e["error_code"] for e in entries})


def _by_partition(
    entries: list[Body], topic: str, partitions: str, index: str, top: int = 0
) -> Results:
    codes: dict[Key, int] = {
        (t[topic], p[index]): p["error_code"] for t in entries for p in t[partitions]
    }
    return Results(codes, top)


# -- topics --------------------------------------------------------------------------


def _create_topics(body: Body) -> list[Line]:
    lines = []
    for t in body["topics"]:
        details: list[tuple[str, object]] = [
            ("numPartitions", t["num_partitions"]),
            ("replicationFactor", t["replication_factor"]),
        ]
        if t["assignments"]:
            placed = (f"{a['partition_index']}:{joined(a['broker_ids'])}" for a in t["assignments"])
            details.append(("assignments", ";".join(placed)))
        if t["configs"]:
            details.append(("configs", joined(c["name"] for c in t["configs"])))
        lines.append(Line("Topic", t["name"], tuple(_flag(body, details)), ((t["name"], ""),)))
    return lines


def _delete_topics(body: Body) -> list[Line]:
    lines = [Line("Topic", name, (), ((name, ""),)) for name in body["topic_names"]]
    for t in body["topics"]:  # v6: by name or by topic id
        if t["name"] is not None:
            lines.append(Line("Topic", t["name"], (), ((t["name"], ""),)))
        else:
            topic_id = kafka_uuid(t["topic_id"])
            lines.append(Line("Topic", topic_id, (("topicId", topic_id),), ((topic_id, ""),)))
    return lines


def _deleted_topics(body: Body) -> Results:
    codes = {}
    for t in body["responses"]:
        if t["name"] is not None:
            codes[t["name"]] = t["error_code"]
        codes[kafka_uuid(t["topic_id"])] = t["error_code"]
    return Results(codes)


def _delete_records(body: Body) -> list[Line]:
    return [
        Line(
            "Topic",
            t["name"],
            (
                (
                    "offsets",
                    joined(f"{p['partition_index']}:{p['offset']}" for p in t["partitions"]),
                ),
            ),
            partition_keys(t["name"], (p["partition_index"] for p in t["partitions"])),
        )
        for t in body["topics"]
    ]


def _create_partitions(body: Body) -> list[Line]:
    lines = []
    for t in body["topics"]:
        details: list[tuple[str, object]] = [("count", t["count"])]
        if t["assignments"]:
            placed = (joined(a["broker_ids"]) for a in t["assignments"])
            details.append(("assignments", ";".join(placed)))
        lines.append(Line("Topic", t["name"], tuple(_flag(body, details)), ((t["name"], ""),)))
    return lines


def _write_txn_markers(body: Body) -> list[Line]:
    lines = []
    for m in body["markers"]:
        for t in m["topics"]:
            details = (
                ("producerId", m["producer_id"]),
                ("producerEpoch", m["producer_epoch"]),
                ("transactionResult", "COMMIT" if m["transaction_result"] else "ABORT"),
                ("partitions", joined(t["partition_indexes"])),
            )
            keys = tuple(((m["producer_id"], t["name"], p), str(p)) for p in t["partition_indexes"])
            lines.append(Line("Topic", t["name"], details, keys))
    return lines


def _txn_markers_written(body: Body) -> Results:
    return Results(
        {
            (m["producer_id"], t["name"], p["partition_index"]): p["error_code"]
            for m in body["markers"]
            for t in m["topics"]
            for p in t["partitions"]
        }
    )


# -- partitions and the cluster ---------------------------------------------------------


def _alter_replica_log_dirs(body: Body) -> list[Line]:
    return [
        Line(
            "Topic",
            t["name"],
            (("logDir", d["path"]), ("partitions", joined(t["partitions"]))),
            partition_keys(t["name"], t["partitions"]),
        )
        for d in body["dirs"]
        for t in d["topics"]
    ]


def _elect_leaders(body: Body) -> list[Line]:
    election = ("electionType", named(ELECTION_TYPES, body["election_type"]))
    if body["topic_partitions"] is None:
        # Every partition: the response names them.
        return [Line("Cluster", CLUSTER, (election, ("partitions", "all")))]
    return [
        Line(
            "Topic",
            t["topic"],
            (election, ("partitions", joined(t["partitions"]))),
            partition_keys(t["topic"], t["partitions"]),
        )
        for t in body["topic_partitions"]
    ]


def _elected(body: Body) -> Results:
    return _by_partition(
        body["replica_election_results"],
        "topic",
        "partition_result",
        "partition_id",
        body["error_code"],
    )


def _elected_everywhere(lines: list[Line], body: Body) -> list[Line]:
    """An election over every partition: one line per topic the response names."""
    if not lines or lines[0].kind != "Cluster" or body["error_code"]:
        return lines
    election = lines[0].details[0]
    return [
        Line(
            "Topic",
            t["topic"],
            (election, ("partitions", joined(p["partition_id"] for p in t["partition_result"]))),
            partition_keys(t["topic"], (p["partition_id"] for p in t["partition_result"])),
        )
        for t in body["replica_election_results"]
    ] or lines


def _reassign(body: Body) -> list[Line]:
    lines = []
    for t in body["topics"]:
        moves = (
            f"{p['partition_index']}:{'cancel' if p['replicas'] is None else joined(p['replicas'])}"
            for p in t["partitions"]
        )
        lines.append(
            Line(
                "Topic",
                t["name"],
                (("replicas", ";".join(moves)),),
                partition_keys(t["name"], (p["partition_index"] for p in t["partitions"])),
            )
        )
    return lines


def _reassigned(body: Body) -> Results:
    return _by_partition(
        body["responses"], "name", "partitions", "partition_index", body["error_code"]
    )


def _update_features(body: Body) -> list[Line]:
    lines = []
    for f in body["feature_updates"]:
        details: list[tuple[str, object]] = [("maxVersionLevel", f["max_version_level"])]
        if f["upgrade_type"] != 1:  # v0's allow_downgrade reads as UPGRADE (1) from v1 on
            details.append(("upgradeType", named(UPGRADE_TYPES, f["upgrade_type"])))
        elif f["allow_downgrade"]:
            details.append(("allowDowngrade", "true"))
        lines.append(
            Line("Feature", f["feature"], tuple(_flag(body, details)), ((f["feature"], ""),))
        )
    return lines


def _features_updated(body: Body) -> Results:
    # From v2 the response has no per-feature results: the top error is all.
    return Results({f["feature"]: f["error_code"] for f in body["results"]}, body["error_code"])


def _one(
    kind: str, field: str, details: Callable[[Body], tuple[tuple[str, object], ...]]
) -> Callable[[Body], list[Line]]:
    """A request about one broker, controller or voter, answered with one error."""

    def lines(body: Body) -> list[Line]:
        return [Line(kind, str(body[field]), details(body))]

    return lines


def _voter(body: Body) -> tuple[tuple[str, object], ...]:
    out: list[tuple[str, object]] = [("voterDirectoryId", kafka_uuid(body["voter_directory_id"]))]
    listeners = body.get("listeners")
    if listeners:
        out.append(("listeners", joined(f"{e['name']}={e['host']}:{e['port']}" for e in listeners)))
    return tuple(out)


def _top(body: Body) -> Results:
    return Results(top=body["error_code"])


# -- configs and quotas -----------------------------------------------------------------


def _config_resource(r: Body) -> tuple[str, str]:
    kind = named(CONFIG_RESOURCES, r["resource_type"])
    name = r["resource_name"]
    if not name and kind in ("Broker", "BrokerLogger"):
        name = DEFAULT  # every broker's (cluster-wide) configs
    return kind, name


def _alter_configs(body: Body) -> list[Line]:
    lines = []
    for r in body["resources"]:
        kind, name = _config_resource(r)
        ops = (
            c["name"] if "config_operation" not in c
            else f"{named(CONFIG_OPERATIONS, c['config_operation'])}:{c['name']}"
            for c in r["configs"]
        )  # fmt: skip
        details = _flag(body, [("configs", joined(ops))])
        lines.append(
            Line(kind, name, tuple(details), (((r["resource_type"], r["resource_name"]), ""),))
        )
    return lines


def _configs_altered(body: Body) -> Results:
    return Results(
        {(r["resource_type"], r["resource_name"]): r["error_code"] for r in body["responses"]}
    )


def _entity(entity: list[Body]) -> tuple[tuple[str, str | None], ...]:
    return tuple((e["entity_type"], e["entity_name"]) for e in entity)


def _alter_quotas(body: Body) -> list[Line]:
    lines = []
    for e in body["entries"]:
        key = _entity(e["entity"])
        name = joined(f"{t}={DEFAULT if n is None else n}" for t, n in key)
        ops = joined(f"{o['key']}={'remove' if o['remove'] else o['value']}" for o in e["ops"])
        details = _flag(body, [("quotas", ops)])
        lines.append(Line("ClientQuota", name, tuple(details), ((frozenset(key), ""),)))
    return lines


def _quotas_altered(body: Body) -> Results:
    return Results({frozenset(_entity(e["entity"])): e["error_code"] for e in body["entries"]})


# -- ACLs -------------------------------------------------------------------------------


def _acl_details(acl: Body, prefix: str = "acl") -> tuple[tuple[str, object], ...]:
    """An ACL's entry (``AccessControlEntry``); a filter's null matches any."""
    principal = acl["principal"] if "principal" in acl else acl["principal_filter"]
    host = acl["host"] if "host" in acl else acl["host_filter"]
    return (
        (f"{prefix}Principal", ANY if principal is None else principal),
        (f"{prefix}Host", ANY if host is None else host),
        (f"{prefix}Operation", acl_name(AclOperation, acl["operation"])),
        (f"{prefix}PermissionType", acl_name(AclPermissionType, acl["permission_type"])),
    )


def _create_acls(body: Body) -> list[Line]:
    return [
        Line(
            resource_type_name(c["resource_type"]),
            c["resource_name"],
            _acl_details(c),
            ((i, ""),),
            acl_name(PatternType, c["resource_pattern_type"]),
        )
        for i, c in enumerate(body["creations"])
    ]


def _positional(entries: list[Body]) -> Results:
    return Results({i: e["error_code"] for i, e in enumerate(entries)})


def _delete_acls(body: Body) -> list[Line]:
    return [
        Line(
            resource_type_name(f["resource_type_filter"]),
            ANY if f["resource_name_filter"] is None else f["resource_name_filter"],
            _acl_details(f, "filter"),
            ((i, ""),),
            acl_name(PatternType, f["pattern_type_filter"]),
        )
        for i, f in enumerate(body["filters"])
    ]


def _acls_deleted(lines: list[Line], body: Body) -> list[Line]:
    """Each ACL a filter matched, with its own result; a filter that matched
    none, or failed whole, is its own line."""
    out = []
    for line, result in zip(lines, body["filter_results"], strict=False):
        if result["error_code"]:
            out.append(line)
            continue
        if not result["matching_acls"]:
            out.append(dataclasses.replace(line, details=(*line.details, ("matched", 0))))
            continue
        index = line.keys[0][0]
        for j, acl in enumerate(result["matching_acls"]):
            out.append(
                Line(
                    resource_type_name(acl["resource_type"]),
                    acl["resource_name"],
                    _acl_details(acl),
                    (((index, j), ""),),
                    acl_name(PatternType, acl["pattern_type"]),
                )
            )
    return out


def _acl_results(body: Body) -> Results:
    codes: dict[Key, int] = {}
    for i, result in enumerate(body["filter_results"]):
        codes[i] = result["error_code"]
        for j, acl in enumerate(result["matching_acls"]):
            codes[(i, j)] = acl["error_code"]
    return Results(codes)


# -- groups -----------------------------------------------------------------------------


def _delete_groups(body: Body) -> list[Line]:
    return [Line("Group", g, (), ((g, ""),)) for g in body["groups_names"]]


def _group_partitions(body: Body, topic: str, detail: Callable[[str, Body], str]) -> list[Line]:
    group = body["group_id"]
    parts = [(t[topic], p) for t in body["topics"] for p in t["partitions"]]
    keys = tuple(
        ((name, p["partition_index"]), f"{name}:{p['partition_index']}") for name, p in parts
    )
    return [Line("Group", group, (("partitions", joined(detail(n, p) for n, p in parts)),), keys)]


def _offset_delete(body: Body) -> list[Line]:
    return _group_partitions(body, "name", lambda n, p: f"{n}:{p['partition_index']}")


def _alter_share_offsets(body: Body) -> list[Line]:
    return _group_partitions(
        body, "topic_name", lambda n, p: f"{n}:{p['partition_index']}={p['start_offset']}"
    )


def _delete_share_offsets(body: Body) -> list[Line]:
    names = [t["topic_name"] for t in body["topics"]]
    return [
        Line("Group", body["group_id"], (("topics", joined(names)),), tuple((n, n) for n in names))
    ]


def _share_offsets_deleted(body: Body) -> Results:
    return Results(
        {t["topic_name"]: t["error_code"] for t in body["responses"]}, body["error_code"]
    )


# -- the table --------------------------------------------------------------------------

#: Every API that changes a cluster which a client can send (a broker or a
#: controller as Kafka's ``Admin`` reaches it), by API key; the data APIs
#: (Produce, Fetch, commits, transactions) are not here and stream unparsed.
ADMIN_APIS: Final[Mapping[int, AdminApi]] = {
    19: AdminApi("Create", _create_topics, lambda b: _by_name(b["topics"])),
    20: AdminApi("Delete", _delete_topics, _deleted_topics),
    21: AdminApi(
        "Delete",
        _delete_records,
        lambda b: _by_partition(b["topics"], "name", "partitions", "partition_index"),
    ),
    # Admin.abortTransaction writes the markers itself (ALTER on the cluster).
    27: AdminApi("Alter", _write_txn_markers, _txn_markers_written),
    30: AdminApi("Alter", _create_acls, lambda b: _positional(b["results"])),
    31: AdminApi("Alter", _delete_acls, _acl_results, _acls_deleted),
    33: AdminApi("AlterConfigs", _alter_configs, _configs_altered),
    34: AdminApi(
        "Alter",
        _alter_replica_log_dirs,
        lambda b: _by_partition(b["results"], "topic_name", "partitions", "partition_index"),
    ),
    37: AdminApi("Alter", _create_partitions, lambda b: _by_name(b["results"])),
    42: AdminApi("Delete", _delete_groups, lambda b: _by_name(b["results"], "group_id")),
    43: AdminApi("Alter", _elect_leaders, _elected, _elected_everywhere),
    44: AdminApi("AlterConfigs", _alter_configs, _configs_altered),
    45: AdminApi("Alter", _reassign, _reassigned),
    47: AdminApi(
        "Delete",
        _offset_delete,
        lambda b: _by_partition(
            b["topics"], "name", "partitions", "partition_index", b["error_code"]
        ),
    ),
    49: AdminApi("AlterConfigs", _alter_quotas, _quotas_altered),
    57: AdminApi("Alter", _update_features, _features_updated),
    64: AdminApi("Alter", _one("Broker", "broker_id", lambda b: ()), _top),
    80: AdminApi("Alter", _one("Voter", "voter_id", _voter), _top),
    81: AdminApi("Alter", _one("Voter", "voter_id", _voter), _top),
    # KIP-932's share groups: READ on the group to alter, DELETE to delete.
    91: AdminApi(
        "Read",
        _alter_share_offsets,
        lambda b: _by_partition(
            b["responses"], "topic_name", "partitions", "partition_index", b["error_code"]
        ),
    ),
    92: AdminApi("Delete", _delete_share_offsets, _share_offsets_deleted),
    94: AdminApi("Alter", _one("Controller", "controller_id", lambda b: ()), _top),
}
