"""The names Kafka gives the codes an administrative request carries, for the
audit lines: ACL resource, pattern, operation and permission types
(``org.apache.kafka.common.acl``, ``org.apache.kafka.common.resource``), the
types of config resources (``ConfigResource.Type``) and of incremental config
operations (``AlterConfigOp.OpType``), feature upgrade types
(``FeatureUpdate.UpgradeType``) and election types (``ElectionType``), as
kafka-clients 4.4.0 defines them. A code Kafka does not define is written as
its number."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = [
    "ACL_OPERATIONS",
    "CONFIG_OPERATIONS",
    "CONFIG_RESOURCES",
    "ELECTION_TYPES",
    "PATTERN_TYPES",
    "PERMISSION_TYPES",
    "RESOURCE_TYPES",
    "UPGRADE_TYPES",
    "named",
]

#: ``ResourceType``, as ``SecurityUtils.resourceTypeName`` writes it in the
#: authorizer log (``TransactionalId``, not ``TRANSACTIONAL_ID``).
RESOURCE_TYPES: Final[Mapping[int, str]] = {
    0: "Unknown",
    1: "Any",
    2: "Topic",
    3: "Group",
    4: "Cluster",
    5: "TransactionalId",
    6: "DelegationToken",
    7: "User",
}
PATTERN_TYPES: Final[Mapping[int, str]] = {
    0: "UNKNOWN",
    1: "ANY",
    2: "MATCH",
    3: "LITERAL",
    4: "PREFIXED",
}
#: ``AclOperation``, as kafka-acls prints an ACL's operation.
ACL_OPERATIONS: Final[Mapping[int, str]] = {
    0: "UNKNOWN",
    1: "ANY",
    2: "ALL",
    3: "READ",
    4: "WRITE",
    5: "CREATE",
    6: "DELETE",
    7: "ALTER",
    8: "DESCRIBE",
    9: "CLUSTER_ACTION",
    10: "DESCRIBE_CONFIGS",
    11: "ALTER_CONFIGS",
    12: "IDEMPOTENT_WRITE",
    13: "CREATE_TOKENS",
    14: "DESCRIBE_TOKENS",
    15: "TWO_PHASE_COMMIT",
}
PERMISSION_TYPES: Final[Mapping[int, str]] = {0: "UNKNOWN", 1: "ANY", 2: "DENY", 3: "ALLOW"}
#: ``ConfigResource.Type`` by id, named as the resource kind of a config line.
CONFIG_RESOURCES: Final[Mapping[int, str]] = {
    0: "Unknown",
    2: "Topic",
    4: "Broker",
    8: "BrokerLogger",
    16: "ClientMetrics",
    32: "Group",
}
CONFIG_OPERATIONS: Final[Mapping[int, str]] = {0: "SET", 1: "DELETE", 2: "APPEND", 3: "SUBTRACT"}
UPGRADE_TYPES: Final[Mapping[int, str]] = {
    0: "UNKNOWN",
    1: "UPGRADE",
    2: "SAFE_DOWNGRADE",
    3: "UNSAFE_DOWNGRADE",
}
ELECTION_TYPES: Final[Mapping[int, str]] = {0: "PREFERRED", 1: "UNCLEAN"}


def named(table: Mapping[int, str], code: int) -> str:
    return table.get(code, str(code))
