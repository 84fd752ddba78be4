"""Kafka's fixed tables about operations: which an ALLOW implies, which each resource
type supports (KIP-430) and which error code refuses each type."""

from __future__ import annotations

from typing import Final

from sasl_scram.authz._enums import AclOperation
from sasl_scram.authz._enums import AclPermissionType
from sasl_scram.authz._enums import ResourceType
from sasl_scram.authz._errors import AuthzError
from sasl_scram.kafka import ErrorCode

__all__ = [
    "IMPLIES_DESCRIBE",
    "IMPLIES_DESCRIBE_CONFIGS",
    "authorization_error",
    "covered_operations",
    "supported_operations",
]

_Op = AclOperation

#: An ALLOW of any of these also allows DESCRIBE (``StandardAuthorizerData.IMPLIES_DESCRIBE``).
IMPLIES_DESCRIBE: Final = frozenset({_Op.DESCRIBE, _Op.READ, _Op.WRITE, _Op.DELETE, _Op.ALTER})
#: An ALLOW of either also allows DESCRIBE_CONFIGS (``IMPLIES_DESCRIBE_CONFIGS``).
IMPLIES_DESCRIBE_CONFIGS: Final = frozenset({_Op.DESCRIBE_CONFIGS, _Op.ALTER_CONFIGS})

# AclEntry.supportedOperations, in Kafka's order. Kafka 4.0 added the group's
# config operations (KIP-848's group configs); 3.9 lists READ, DESCRIBE, DELETE.
_SUPPORTED: Final[dict[ResourceType, tuple[AclOperation, ...]]] = {
    ResourceType.TOPIC: (
        _Op.READ,
        _Op.WRITE,
        _Op.CREATE,
        _Op.DESCRIBE,
        _Op.DELETE,
        _Op.ALTER,
        _Op.DESCRIBE_CONFIGS,
        _Op.ALTER_CONFIGS,
    ),
    ResourceType.GROUP: (
        _Op.READ,
        _Op.DESCRIBE,
        _Op.DELETE,
        _Op.DESCRIBE_CONFIGS,
        _Op.ALTER_CONFIGS,
    ),
    ResourceType.CLUSTER: (
        _Op.CREATE,
        _Op.CLUSTER_ACTION,
        _Op.DESCRIBE_CONFIGS,
        _Op.ALTER_CONFIGS,
        _Op.IDEMPOTENT_WRITE,
        _Op.ALTER,
        _Op.DESCRIBE,
    ),
    ResourceType.TRANSACTIONAL_ID: (_Op.DESCRIBE, _Op.WRITE),
    ResourceType.DELEGATION_TOKEN: (_Op.DESCRIBE,),
    ResourceType.USER: (_Op.CREATE_TOKENS, _Op.DESCRIBE_TOKENS),
}
_GROUP_3_9: Final = (_Op.READ, _Op.DESCRIBE, _Op.DELETE)

# AclEntry.authorizationError: the code a refused action on each type answers.
_AUTHORIZATION_ERRORS: Final[dict[ResourceType, ErrorCode]] = {
    ResourceType.TOPIC: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    ResourceType.GROUP: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    ResourceType.CLUSTER: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    ResourceType.TRANSACTIONAL_ID: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    ResourceType.DELEGATION_TOKEN: ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
}


def supported_operations(
    resource_type: ResourceType, *, kafka_3_9: bool = False
) -> tuple[AclOperation, ...]:
    """``AclEntry.supportedOperations``: the operations KIP-430's authorized-operations
    fields report for a type, as Kafka 4.x lists them (``kafka_3_9=True``: 3.9's)."""
    if kafka_3_9 and resource_type is ResourceType.GROUP:
        return _GROUP_3_9
    try:
        return _SUPPORTED[resource_type]
    except KeyError:
        raise AuthzError(
            f"{resource_type.name} is not a concrete resource type: give TOPIC, GROUP, CLUSTER, "
            "TRANSACTIONAL_ID, DELEGATION_TOKEN or USER"
        ) from None


def authorization_error(resource_type: ResourceType) -> ErrorCode:
    """``AclEntry.authorizationError``: TOPIC 29, GROUP 30, CLUSTER 31,
    TRANSACTIONAL_ID 53, DELEGATION_TOKEN 65. Kafka has none for USER or the filter
    values (its token APIs answer 65 themselves)."""
    try:
        return _AUTHORIZATION_ERRORS[resource_type]
    except KeyError:
        raise AuthzError(
            f"Kafka has no authorization error for {resource_type.name}: "
            "give TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID or DELEGATION_TOKEN"
        ) from None


def covered_operations(
    operation: AclOperation, permission: AclPermissionType
) -> frozenset[AclOperation]:
    """The requested operations an ACL's operation answers
    (``StandardAuthorizerData.findResult``).

    ALL answers every operation, for ALLOW and DENY alike. A DENY answers only its
    own operation: DENY READ does not deny DESCRIBE. An ALLOW also answers the
    operations it implies: READ, WRITE, DELETE and ALTER imply DESCRIBE, and
    ALTER_CONFIGS implies DESCRIBE_CONFIGS; nothing implies READ.
    """
    if operation is _Op.ALL:
        return frozenset(_Op)
    covered = {operation}
    if permission is AclPermissionType.ALLOW:
        if operation in IMPLIES_DESCRIBE:
            covered.add(_Op.DESCRIBE)
        if operation in IMPLIES_DESCRIBE_CONFIGS:
            covered.add(_Op.DESCRIBE_CONFIGS)
    return frozenset(covered)
