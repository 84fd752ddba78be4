"""``authorizeByResourceType``: may the principal do ``op`` on *some* resource of a type?

Kafka asks it in one place, InitProducerId without a transactional id: WRITE on
any topic stands in for IDEMPOTENT_WRITE on the cluster. ``StandardAuthorizer``
keeps the default of ``org.apache.kafka.server.authorizer.Authorizer``; 3.9's
``AclAuthorizer`` overrides it with different answers (docs/authorization.md).
Neither expands implied operations here.
"""

from __future__ import annotations

from collections.abc import Iterable

from sasl_scram.authz._enums import AclOperation
from sasl_scram.authz._enums import AclPermissionType
from sasl_scram.authz._enums import PatternType
from sasl_scram.authz._enums import ResourceType
from sasl_scram.authz._errors import AuthzError
from sasl_scram.authz._index import principal_key
from sasl_scram.authz._model import WILDCARD_HOST
from sasl_scram.authz._model import WILDCARD_PRINCIPAL
from sasl_scram.authz._model import WILDCARD_RESOURCE
from sasl_scram.authz._model import AclBinding
from sasl_scram.config import KafkaPrincipal

__all__ = ["PROBE_NAME", "check_by_type_args", "some_allowed", "some_allowed_zookeeper"]

#: The name the default asks about first, so super users and ``*`` ACLs answer at once.
PROBE_NAME = "hardcode"


def check_by_type_args(operation: AclOperation, resource_type: ResourceType) -> None:
    """``SecurityUtils.authorizeByResourceTypeCheckArgs``."""
    if resource_type is ResourceType.ANY:
        raise AuthzError(
            "Must specify a non-filter resource type for authorizeByResourceType: "
            "give TOPIC, GROUP, ..."
        )
    if resource_type is ResourceType.UNKNOWN:
        raise AuthzError("Unknown resource type: give TOPIC, GROUP, ...")
    if operation is AclOperation.ANY:
        raise AuthzError(
            "Must specify a non-filter operation type for authorizeByResourceType: "
            "give WRITE, READ, ..."
        )
    if operation is AclOperation.UNKNOWN:
        raise AuthzError("Unknown operation type: give WRITE, READ, ...")


def _dominated(name: str, deny_prefixes: set[str]) -> bool:
    """A denied prefix is a prefix of ``name`` (``name`` itself included)."""
    return any(name[:size] in deny_prefixes for size in range(1, len(name) + 1))


def _matching(
    bindings: Iterable[AclBinding], principal: KafkaPrincipal, host: str, op: AclOperation
) -> Iterable[AclBinding]:
    """The bindings for this principal (or ``User:*``), host (or ``*``) and ``op`` (or ALL)."""
    session = (principal.principal_type, principal.name)
    for binding in bindings:
        entry = binding.entry
        if entry.host != host and entry.host != WILDCARD_HOST:
            continue
        if principal_key(entry.principal) != session and entry.principal != WILDCARD_PRINCIPAL:
            continue
        if entry.operation is op or entry.operation is AclOperation.ALL:
            yield binding


def some_allowed(
    bindings: Iterable[AclBinding], principal: KafkaPrincipal, host: str, op: AclOperation
) -> bool:
    """The default's scan, after its probe was refused (``Authorizer.authorizeByResourceType``).

    A DENY on the literal ``*`` refuses; an ALLOW on it grants; otherwise some
    allowed literal that is not denied literally, or some allowed prefix, must
    not start with a denied prefix. A literal DENY on another name changes nothing.
    """
    deny = {PatternType.LITERAL: set[str](), PatternType.PREFIXED: set[str]()}
    allow = {PatternType.LITERAL: set[str](), PatternType.PREFIXED: set[str]()}
    wildcard_allow = False
    for binding in _matching(bindings, principal, host, op):
        pattern = binding.pattern
        is_wildcard = pattern.pattern_type is PatternType.LITERAL and (
            pattern.name == WILDCARD_RESOURCE
        )
        if binding.entry.permission_type is AclPermissionType.DENY:
            if is_wildcard:
                return False
            deny[pattern.pattern_type].add(pattern.name)
        elif is_wildcard:
            wildcard_allow = True
        else:
            allow[pattern.pattern_type].add(pattern.name)
    if wildcard_allow:
        return True
    for name in allow[PatternType.LITERAL]:
        if name not in deny[PatternType.LITERAL] and not _dominated(
            name, deny[PatternType.PREFIXED]
        ):
            return True
    return any(
        not _dominated(name, deny[PatternType.PREFIXED]) for name in allow[PatternType.PREFIXED]
    )


def some_allowed_zookeeper(
    bindings: Iterable[AclBinding],
    principal: KafkaPrincipal,
    host: str,
    op: AclOperation,
    *,
    allow_everyone_if_no_acl_found: bool,
) -> bool:
    """3.9 ``AclAuthorizer.authorizeByResourceType`` after its super-user check.

    A DENY on the literal ``*`` refuses; then ``allow.everyone.if.no.acl.found``
    grants whatever the ACLs; with no DENY at all any ALLOW grants; otherwise as
    the default, but an allowed prefix is checked against denied prefixes only.
    Principals compare as strings (``User:alice``), not parsed.
    """
    principal_text = f"{principal.principal_type}:{principal.name}"
    names: dict[tuple[AclPermissionType, PatternType], set[str]] = {}
    for binding in bindings:
        entry = binding.entry
        if entry.host not in (host, WILDCARD_HOST):
            continue
        if entry.principal not in (principal_text, WILDCARD_PRINCIPAL):
            continue
        if entry.operation is op or entry.operation is AclOperation.ALL:
            key = (entry.permission_type, binding.pattern.pattern_type)
            names.setdefault(key, set()).add(binding.pattern.name)
    deny_literal = names.get((AclPermissionType.DENY, PatternType.LITERAL), set())
    if WILDCARD_RESOURCE in deny_literal:
        return False
    if allow_everyone_if_no_acl_found:
        return True
    deny_prefixed = names.get((AclPermissionType.DENY, PatternType.PREFIXED), set())
    allow_literal = names.get((AclPermissionType.ALLOW, PatternType.LITERAL), set())
    allow_prefixed = names.get((AclPermissionType.ALLOW, PatternType.PREFIXED), set())
    if not deny_literal and not deny_prefixed:
        return bool(allow_literal or allow_prefixed)
    if any(not _dominated(name, deny_prefixed) for name in allow_prefixed):
        return True
    return any(
        name == WILDCARD_RESOURCE
        or (name not in deny_literal and not _dominated(name, deny_prefixed))
        for name in allow_literal
    )
