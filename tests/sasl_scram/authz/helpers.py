"""Short ways to write ACLs and questions in the authz tests."""

from __future__ import annotations

import functools

from sasl_scram.authz import AccessControlEntry
from sasl_scram.authz import AclBinding
from sasl_scram.authz import AclOperation
from sasl_scram.authz import AclPermissionType
from sasl_scram.authz import Action
from sasl_scram.authz import PatternType
from sasl_scram.authz import ResourcePattern
from sasl_scram.authz import ResourceType

TOPIC = ResourceType.TOPIC
GROUP = ResourceType.GROUP
CLUSTER = ResourceType.CLUSTER
LITERAL = PatternType.LITERAL
PREFIXED = PatternType.PREFIXED
ALLOW = AclPermissionType.ALLOW
DENY = AclPermissionType.DENY
Op = AclOperation


def acl(
    permission: AclPermissionType,
    name: str,
    op: AclOperation,
    principal: str = "User:alice",
    *,
    host: str = "*",
    rtype: ResourceType = TOPIC,
    pattern: PatternType = LITERAL,
) -> AclBinding:
    return AclBinding(
        ResourcePattern(rtype, name, pattern), AccessControlEntry(principal, host, op, permission)
    )


#: ``acl`` with its permission given: ``allow(name, op, principal, host=..., ...)``.
allow = functools.partial(acl, ALLOW)
deny = functools.partial(acl, DENY)


def ask(op: AclOperation, name: str, rtype: ResourceType = TOPIC) -> Action:
    return Action.on(op, rtype, name)
