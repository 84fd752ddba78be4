"""``Authorizer``: Kafka's ``StandardAuthorizer`` decisions over an immutable set of ACLs.

Sans-IO and immutable: built from bindings and two settings, changed by making a
new one (``add``, ``remove``, ``delete``, ``with_settings``), which rebuilds only
the resource types the change touches. One ``authorize`` is a handful of
dictionary look-ups (docs/authorization.md gives the measured cost).
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from sasl_scram.authz._by_type import PROBE_NAME
from sasl_scram.authz._by_type import check_by_type_args
from sasl_scram.authz._by_type import some_allowed
from sasl_scram.authz._by_type import some_allowed_zookeeper
from sasl_scram.authz._decision import Action
from sasl_scram.authz._decision import Decision
from sasl_scram.authz._decision import RuleKind
from sasl_scram.authz._enums import AclOperation
from sasl_scram.authz._enums import ResourceType
from sasl_scram.authz._errors import AuthzError
from sasl_scram.authz._index import WILDCARD_KEYS
from sasl_scram.authz._index import Group
from sasl_scram.authz._index import TypeIndex
from sasl_scram.authz._index import split_by_type
from sasl_scram.authz._model import WILDCARD_RESOURCE
from sasl_scram.authz._model import AclBinding
from sasl_scram.authz._model import AclBindingFilter
from sasl_scram.authz._tables import supported_operations
from sasl_scram.config import KafkaPrincipal

__all__ = ["Authorizer", "ResourceTypeDecision", "parse_super_users"]

_SUPER_USER: Final = Decision(True, RuleKind.SUPER_USER)
_NO_MATCHING_ACL: Final = Decision(False, RuleKind.NO_MATCHING_ACL)
_DEFAULT: Final = {flag: Decision(flag, RuleKind.NO_ACL) for flag in (False, True)}


def parse_super_users(value: str) -> frozenset[str]:
    """``super.users`` as ``StandardAuthorizer.getConfiguredSuperUsers`` reads it: split
    on ``;``, each entry trimmed, blank entries skipped, each checked as ``Type:Name``.
    Matching is then exact on ``Type:Name``."""
    users = frozenset(entry.strip() for entry in value.split(";") if entry.strip())
    for user in users:
        _check_super_user(user)
    return users


def _check_super_user(user: str) -> None:
    if ":" not in user:
        raise AuthzError(
            f"super.users entry {user!r} is not Type:Name: write e.g. User:admin, "
            "entries separated by ';'"
        )


@dataclass(frozen=True, slots=True)
class ResourceTypeDecision:
    """``authorizeByResourceType``'s answer. ``probe`` and ``probe_decision`` are the
    one ``authorize`` Kafka's default makes first, on ``(type, "hardcode")``: the only
    audit line it writes (logged if allowed, TRACE if denied)."""

    allowed: bool
    probe: Action
    probe_decision: Decision


class Authorizer:
    """The ACLs and settings of one ``StandardAuthorizer``, and its decisions.

    ``super_users`` are ``Type:Name`` strings (``parse_super_users`` reads the
    ``super.users`` value); ``allow_everyone_if_no_acl_found`` is the setting of
    that name. Bindings must be storable: concrete values, ``Type:Name`` principals.
    """

    __slots__ = ("_allow_if_no_acl", "_default", "_super_users", "_types")

    def __init__(
        self,
        bindings: Iterable[AclBinding] = (),
        *,
        super_users: Iterable[str] = (),
        allow_everyone_if_no_acl_found: bool = False,
    ) -> None:
        users = frozenset(super_users)
        for user in users:
            _check_super_user(user)
        types = {rtype: TypeIndex.build(group) for rtype, group in split_by_type(bindings).items()}
        self._set(types, users, allow_everyone_if_no_acl_found)

    def _set(
        self, types: dict[ResourceType, TypeIndex], users: frozenset[str], allow: bool
    ) -> None:
        self._types = types
        self._super_users = users
        self._allow_if_no_acl = allow
        self._default = _DEFAULT[allow]

    def _copy(self, types: dict[ResourceType, TypeIndex]) -> Authorizer:
        made = Authorizer.__new__(Authorizer)
        made._set(types, self._super_users, self._allow_if_no_acl)
        return made

    @property
    def super_users(self) -> frozenset[str]:
        return self._super_users

    @property
    def allow_everyone_if_no_acl_found(self) -> bool:
        return self._allow_if_no_acl

    @property
    def bindings(self) -> frozenset[AclBinding]:
        """Every stored ACL."""
        return frozenset().union(*(index.bindings for index in self._types.values()))

    def __len__(self) -> int:
        return sum(len(index.bindings) for index in self._types.values())

    def __repr__(self) -> str:
        return (
            f"Authorizer({len(self)} ACLs, super_users={sorted(self._super_users)}, "
            f"allow_everyone_if_no_acl_found={self._allow_if_no_acl})"
        )

    # --- changes: each returns a new Authorizer ---------------------------------

    def with_settings(
        self,
        *,
        super_users: Iterable[str] | None = None,
        allow_everyone_if_no_acl_found: bool | None = None,
    ) -> Authorizer:
        """The same ACLs under other settings (``configure``)."""
        users = self._super_users if super_users is None else frozenset(super_users)
        for user in users:
            _check_super_user(user)
        allow = self._allow_if_no_acl
        if allow_everyone_if_no_acl_found is not None:
            allow = allow_everyone_if_no_acl_found
        made = Authorizer.__new__(Authorizer)
        made._set(self._types, users, allow)
        return made

    def add(self, bindings: Iterable[AclBinding]) -> Authorizer:
        """These ACLs added; one already present is kept once, as CreateAcls does."""
        return self._changed(split_by_type(bindings), add=True)

    def remove(self, bindings: Iterable[AclBinding]) -> Authorizer:
        """These ACLs removed; one not present is ignored."""
        return self._changed(split_by_type(bindings), add=False)

    def delete(
        self, filters: Sequence[AclBindingFilter]
    ) -> tuple[Authorizer, tuple[tuple[AclBinding, ...], ...]]:
        """DeleteAcls on KRaft (``AclControlManager.deleteAclsForFilter``): every ACL a
        filter matches is removed and listed under **each** filter that matches it
        (3.9's ``AclAuthorizer`` lists it under the first only). Validate the
        filters first (``check_delete_filters``)."""
        stored = self.acls()
        matched = tuple(tuple(b for b in stored if f.matches(b)) for f in filters)
        return self.remove(b for group in matched for b in group), matched

    def _changed(
        self, change: dict[ResourceType, frozenset[AclBinding]], *, add: bool
    ) -> Authorizer:
        types = dict(self._types)
        for rtype, group in change.items():
            old = types.get(rtype)
            current = old.bindings if old is not None else frozenset()
            new = current | group if add else current - group
            if new == current:
                continue
            if new:
                types[rtype] = TypeIndex.build(new)
            else:
                del types[rtype]
        return self._copy(types)

    # --- reading ------------------------------------------------------------------

    def acls(self, filter: AclBindingFilter = AclBindingFilter.ANY) -> tuple[AclBinding, ...]:
        """DescribeAcls (``StandardAuthorizer.acls``): the ACLs the filter matches, in
        Kafka's order (type, name in reverse, pattern type, operation, principal,
        host, permission)."""
        return tuple(
            binding
            for rtype in sorted(self._types)
            for binding in self._types[rtype].ordered
            if filter.matches(binding)
        )

    # --- decisions ----------------------------------------------------------------

    def authorize(self, principal: KafkaPrincipal, host: str, action: Action) -> Decision:
        """``StandardAuthorizerData.authorize`` for one action.

        ``host`` is the client's address as Java prints it (``java_host_address``).
        """
        if self._super_users and (
            f"{principal.principal_type}:{principal.name}" in self._super_users
        ):
            return _SUPER_USER
        resource = action.resource
        index = self._types.get(resource.resource_type)
        if index is None:
            return self._default
        name = resource.name
        groups, wildcard = index.groups(name)
        if not groups and wildcard is None:
            return self._default
        op = action.operation
        keys = ((principal.principal_type, principal.name, op), WILDCARD_KEYS[op])
        return _decide(groups, wildcard, keys, host, name)

    def authorize_all(
        self, principal: KafkaPrincipal, host: str, actions: Iterable[Action]
    ) -> tuple[Decision, ...]:
        """One independent decision per action, from this one snapshot."""
        return tuple(self.authorize(principal, host, action) for action in actions)

    def authorized_operations(
        self,
        principal: KafkaPrincipal,
        host: str,
        resource_type: ResourceType,
        name: str,
        *,
        kafka_3_9: bool = False,
    ) -> int:
        """KIP-430's bit field (``AuthHelper.authorizedOperations``): bit ``1 << code``
        for each supported operation allowed on the LITERAL resource; the probes are
        not logged (``logIfAllowed`` and ``logIfDenied`` false)."""
        bits = 0
        for op in supported_operations(resource_type, kafka_3_9=kafka_3_9):
            action = Action.on(op, resource_type, name, log_if_allowed=False, log_if_denied=False)
            if self.authorize(principal, host, action).allowed:
                bits |= 1 << op.code
        return bits

    def authorize_by_resource_type(
        self,
        principal: KafkaPrincipal,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
    ) -> ResourceTypeDecision:
        """``StandardAuthorizer.authorizeByResourceType`` (the interface's default): may
        the principal do ``operation`` on some resource of the type?"""
        check_by_type_args(operation, resource_type)
        probe = Action.on(
            operation, resource_type, PROBE_NAME, reference_count=0, log_if_denied=False
        )
        probe_decision = self.authorize(principal, host, probe)
        allowed = probe_decision.allowed or some_allowed(
            self._bindings_of(resource_type), principal, host, operation
        )
        return ResourceTypeDecision(allowed, probe, probe_decision)

    def authorize_by_resource_type_zookeeper(
        self,
        principal: KafkaPrincipal,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
    ) -> bool:
        """3.9 ``AclAuthorizer.authorizeByResourceType`` over the same ACLs, for
        comparison: ``allow.everyone.if.no.acl.found`` allows whatever the ACLs unless
        the literal ``*`` is denied. ``super.users`` compare as parsed principals."""
        check_by_type_args(operation, resource_type)
        if any(
            user.partition(":")[::2] == (principal.principal_type, principal.name)
            for user in self._super_users
        ):
            return True
        return some_allowed_zookeeper(
            self._bindings_of(resource_type),
            principal,
            host,
            operation,
            allow_everyone_if_no_acl_found=self._allow_if_no_acl,
        )

    def _bindings_of(self, resource_type: ResourceType) -> frozenset[AclBinding]:
        index = self._types.get(resource_type)
        return index.bindings if index is not None else frozenset()


def _decide(
    groups: list[Group],
    wildcard: Group | None,
    keys: tuple[tuple[str, str, AclOperation], tuple[str, str, AclOperation]],
    host: str,
    name: str,
) -> Decision:
    """Kafka's ``findAclRule``: any matching DENY refuses, else any matching ALLOW
    grants, else the resource's ACLs refuse (``MatchingRuleBuilder.build``).

    Which ACL is named follows Kafka's walk: the first DENY it meets, else the last
    ALLOW. Its first pass goes down from the name through its prefixes; its second
    starts at the LITERAL ``*``. For the name ``*`` itself the PREFIXED ``*`` sorts
    after the LITERAL one (``StandardAcl`` order), so the first pass meets the
    LITERAL's DENY first and the second pass meets the PREFIXED's ALLOW last.
    """
    wild_deny, wild_allow = wildcard.match(keys, host) if wildcard is not None else (None, None)
    if wild_deny is not None and name == WILDCARD_RESOURCE:
        return wild_deny.decision
    named_allow = None
    for group in groups:
        deny, allow = group.match(keys, host)
        if deny is not None:
            return deny.decision
        if allow is not None:
            named_allow = allow
    if wild_deny is not None:
        return wild_deny.decision
    star = name == WILDCARD_RESOURCE
    allow = (named_allow or wild_allow) if star else (wild_allow or named_allow)
    return allow.decision if allow is not None else _NO_MATCHING_ACL
