"""The names Kafka gives the codes an administrative request carries, for the
audit lines: the ACL enumerations' (``sasl_scram.authz``'s), and the types of
config resources (``ConfigResource.Type``) and of incremental config
operations (``AlterConfigOp.OpType``), feature upgrade types
(``FeatureUpdate.UpgradeType``) and election types (``ElectionType``), as
kafka-clients 4.4.0 defines them. A code our tables do not hold is written as
its number."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from sasl_scram.authz import AclOperation
from sasl_scram.authz import AclPermissionType
from sasl_scram.authz import PatternType
from sasl_scram.authz import ResourceType

__all__ = [
    "CONFIG_OPERATIONS",
    "CONFIG_RESOURCES",
    "ELECTION_TYPES",
    "UPGRADE_TYPES",
    "acl_name",
    "named",
    "resource_type_name",
]

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


def acl_name(kind: type[AclOperation | AclPermissionType | PatternType], code: int) -> str:
    """An ACL enumeration's constant, as kafka-acls prints it (``READ``, ``PREFIXED``)."""
    try:
        return kind(code).name
    except ValueError:
        return str(code)


def resource_type_name(code: int) -> str:
    """A resource type as the authorizer log writes it (``SecurityUtils.resourceTypeName``:
    ``Topic``, ``TransactionalId``)."""
    try:
        return ResourceType(code).display_name
    except ValueError:
        return str(code)
