"""A brute-force reference for one decision, which the index must agree with.

It looks at every ACL of the type, in Kafka's ``StandardAcl`` order (as
``Authorizer.acls`` lists them, checked against Kafka's own order by
test_vectors.py), the way ``StandardAuthorizerData.findAclRule`` visits them: first
from the resource's name down, then from the LITERAL ``*`` down. Of the ACLs met
that apply to the resource, the first matching DENY refuses and is named;
otherwise the last matching ALLOW met is named. No index, no dictionaries: slow,
and plain enough to read against Kafka's source.
"""

from __future__ import annotations

from collections.abc import Sequence

from sasl_scram.authz import IMPLIES_DESCRIBE
from sasl_scram.authz import IMPLIES_DESCRIBE_CONFIGS
from sasl_scram.authz import WILDCARD_HOST
from sasl_scram.authz import WILDCARD_RESOURCE
from sasl_scram.authz import AclBinding
from sasl_scram.authz import AclOperation
from sasl_scram.authz import AclPermissionType
from sasl_scram.authz import Action
from sasl_scram.authz import Decision
from sasl_scram.authz import PatternType
from sasl_scram.authz import RuleKind
from sasl_scram.config import KafkaPrincipal

#: The operations whose ALLOW also allows the key (``StandardAuthorizerData``).
_IMPLIED_BY = {
    AclOperation.DESCRIBE: IMPLIES_DESCRIBE,
    AclOperation.DESCRIBE_CONFIGS: IMPLIES_DESCRIBE_CONFIGS,
}


def _java(text: str) -> bytes:
    """Java's ``String.compareTo`` order: by UTF-16 code unit."""
    return text.encode("utf-16-be", "surrogatepass")


def _from(ordered: Sequence[AclBinding], name: str, pattern: PatternType) -> list[AclBinding]:
    """The ACLs at or after (``name``, ``pattern``) in Kafka's order (names in reverse)."""
    start = _java(name)
    return [
        b
        for b in ordered
        if _java(b.pattern.name) < start
        or (_java(b.pattern.name) == start and b.pattern.pattern_type.code >= pattern.code)
    ]


def _applies(binding: AclBinding, name: str) -> bool:
    """The ACL's pattern covers the resource: its literal name, a prefix of it, or the
    LITERAL ``*`` (which Kafka skips for other names starting with ``*``)."""
    pattern = binding.pattern
    if pattern.pattern_type is PatternType.PREFIXED:
        return name.startswith(pattern.name)
    if pattern.name == WILDCARD_RESOURCE:
        return name == WILDCARD_RESOURCE or not name.startswith(WILDCARD_RESOURCE)
    return pattern.name == name


def _grants(binding: AclBinding, asked: AclOperation) -> bool:
    """The ACL's operation covers the one asked: the same, ALL, or (ALLOW only) one
    that implies it."""
    entry = binding.entry
    if entry.operation in (asked, AclOperation.ALL):
        return True
    if entry.permission_type is not AclPermissionType.ALLOW:
        return False
    return entry.operation in _IMPLIED_BY.get(asked, ())


def _matches(binding: AclBinding, principal: KafkaPrincipal, host: str, action: Action) -> bool:
    entry = binding.entry
    principal_type, _, principal_name = entry.principal.partition(":")
    session = (principal.principal_type, principal.name)
    if (principal_type, principal_name) not in (session, ("User", "*")):
        return False
    if entry.host not in (WILDCARD_HOST, host):
        return False
    return _grants(binding, action.operation)


def reference_decision(
    ordered: Sequence[AclBinding],
    principal: KafkaPrincipal,
    host: str,
    action: Action,
    *,
    allow_everyone_if_no_acl_found: bool,
) -> Decision:
    """The decision on ``action`` given ``ordered``, the ACLs of its resource type in
    Kafka's order (no super users: they are answered before any ACL)."""
    name = action.resource.name
    passes = (
        _from(ordered, name, PatternType.UNKNOWN),
        _from(ordered, WILDCARD_RESOURCE, PatternType.LITERAL),
    )
    any_applies = False
    last_allow: AclBinding | None = None
    for met in passes:
        for binding in met:
            if not _applies(binding, name):
                continue
            any_applies = True
            if not _matches(binding, principal, host, action):
                continue
            if binding.entry.permission_type is AclPermissionType.DENY:
                return Decision(False, RuleKind.MATCHING_ACL, binding)
            last_allow = binding
    if last_allow is not None:
        return Decision(True, RuleKind.MATCHING_ACL, last_allow)
    if not any_applies:
        return Decision(allow_everyone_if_no_acl_found, RuleKind.NO_ACL)
    return Decision(False, RuleKind.NO_MATCHING_ACL)
