"""The ACLs of one resource type, indexed for one ``authorize`` in a few dictionary
look-ups.

Kafka's ``StandardAuthorizerData`` keeps every ACL in one set sorted by resource
type, then resource name in **reverse**, then pattern type, operation, principal,
host and permission (``StandardAcl.compareTo``), and finds the ACLs of a resource
by walking that set from its name down through the names that are prefixes of it.
Here the same ACLs sit in a dict per pattern: literal names, prefixes (tried at
each length some prefix has), and the ``*`` literal. Each pattern's entries are
keyed by (principal type, principal name, requested operation), with ALL and the
implied operations expanded when the index is built, so a request looks up its
principal and ``User:*`` and compares hosts only.

Each entry keeps its rank in Kafka's order, so the ACL a decision names is the
one Kafka's walk would name: the first matching DENY, else the last matching ALLOW.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from sasl_scram.authz._decision import Decision
from sasl_scram.authz._decision import RuleKind
from sasl_scram.authz._enums import AclOperation
from sasl_scram.authz._enums import AclPermissionType
from sasl_scram.authz._enums import PatternType
from sasl_scram.authz._enums import ResourceType
from sasl_scram.authz._errors import AuthzError
from sasl_scram.authz._model import WILDCARD_HOST
from sasl_scram.authz._model import WILDCARD_RESOURCE
from sasl_scram.authz._model import AclBinding
from sasl_scram.authz._tables import covered_operations

__all__ = [
    "WILDCARD_KEYS",
    "Entry",
    "Group",
    "Key",
    "TypeIndex",
    "acl_sort_key",
    "check_storable",
    "java_order",
    "kafka_order",
    "principal_key",
    "split_by_type",
]

#: (principal type, principal name, requested operation).
Key = tuple[str, str, AclOperation]
#: The wildcard principal's key for each operation, built once.
WILDCARD_KEYS: Final[dict[AclOperation, Key]] = {op: ("User", "*", op) for op in AclOperation}


def java_order(text: str) -> bytes:
    """A sort key that orders strings as Java's ``String.compareTo`` does (by UTF-16
    code unit; Python compares code points, which differs past U+FFFF)."""
    return text.encode("utf-16-be", "surrogatepass")


def acl_sort_key(binding: AclBinding) -> tuple[int, bytes, bytes, int]:
    """The part of ``StandardAcl.compareTo`` after type, name and pattern type."""
    entry = binding.entry
    return (
        entry.operation.code,
        java_order(entry.principal),
        java_order(entry.host),
        entry.permission_type.code,
    )


def kafka_order(bindings: Iterable[AclBinding]) -> tuple[AclBinding, ...]:
    """The bindings of one type in ``StandardAcl`` order: name in reverse (Java's string
    order), then pattern type, operation, principal, host and permission type."""
    ordered = sorted(bindings, key=acl_sort_key)
    ordered.sort(key=lambda binding: binding.pattern.pattern_type)
    ordered.sort(key=lambda binding: java_order(binding.pattern.name), reverse=True)
    return tuple(ordered)


def principal_key(principal: str) -> tuple[str, str]:
    """``StandardAcl.kafkaPrincipal``: split at the first ``:``."""
    principal_type, colon, name = principal.partition(":")
    if not colon:
        raise AuthzError(
            f"ACL principal {principal!r} has no ':' between type and name "
            "(Kafka's StandardAuthorizer fails every request that reaches it): "
            "write Type:Name, e.g. User:alice"
        )
    return principal_type, name


def check_storable(binding: AclBinding) -> None:
    """Refuse what no authorizer can hold: a filter or unknown value, a principal
    without ``Type:``."""
    if binding.is_unknown:
        raise AuthzError(
            f"ACL binding contains unknown elements: {binding}; "
            "give a concrete type, LITERAL or PREFIXED, an operation and ALLOW or DENY"
        )
    principal_key(binding.entry.principal)


class Entry:
    """One ACL, ready to answer: its host, its rank in Kafka's order within its
    pattern, and the decision it gives."""

    __slots__ = ("decision", "host", "rank")

    def __init__(self, host: str, rank: int, decision: Decision) -> None:
        self.host = host
        self.rank = rank
        self.decision = decision


#: A pattern's entries for one key: DENY ones by rising rank, ALLOW ones by falling rank.
Entries = tuple[tuple[Entry, ...], tuple[Entry, ...]]


class Group:
    """The ACLs of one resource pattern."""

    __slots__ = ("entries",)

    def __init__(self, bindings: Iterable[AclBinding]) -> None:
        ordered = sorted(bindings, key=acl_sort_key)
        denies: dict[Key, list[Entry]] = {}
        allows: dict[Key, list[Entry]] = {}
        for rank, binding in enumerate(ordered):
            entry = binding.entry
            allow = entry.permission_type is AclPermissionType.ALLOW
            made = Entry(entry.host, rank, Decision(allow, RuleKind.MATCHING_ACL, binding))
            principal_type, name = principal_key(entry.principal)
            table = allows if allow else denies
            for op in covered_operations(entry.operation, entry.permission_type):
                table.setdefault((principal_type, name, op), []).append(made)
        self.entries: dict[Key, Entries] = {
            key: (tuple(denies.get(key, ())), tuple(reversed(allows.get(key, ()))))
            for key in denies.keys() | allows.keys()
        }

    def match(self, keys: tuple[Key, Key], host: str) -> tuple[Entry | None, Entry | None]:
        """The first matching DENY and the last matching ALLOW, in Kafka's order."""
        deny: Entry | None = None
        allow: Entry | None = None
        for key in keys:
            found = self.entries.get(key)
            if found is None:
                continue
            for entry in found[0]:
                if entry.host == WILDCARD_HOST or entry.host == host:
                    if deny is None or entry.rank < deny.rank:
                        deny = entry
                    break
            for entry in found[1]:
                if entry.host == WILDCARD_HOST or entry.host == host:
                    if allow is None or entry.rank > allow.rank:
                        allow = entry
                    break
        return deny, allow


@dataclass(frozen=True, slots=True)
class TypeIndex:
    """Every ACL of one resource type."""

    bindings: frozenset[AclBinding]
    #: The same bindings in Kafka's order (``kafka_order``).
    ordered: tuple[AclBinding, ...]
    literal: dict[str, Group]
    prefixed: dict[str, Group]
    #: The lengths of the stored prefixes, longest first (Kafka's walk meets longer
    #: prefixes of a name first: they sort after shorter ones, and names go in reverse).
    prefix_lengths: tuple[int, ...]
    wildcard: Group | None

    @classmethod
    def build(cls, bindings: frozenset[AclBinding]) -> TypeIndex:
        literal: dict[str, list[AclBinding]] = {}
        prefixed: dict[str, list[AclBinding]] = {}
        for binding in bindings:
            pattern = binding.pattern
            table = literal if pattern.pattern_type is PatternType.LITERAL else prefixed
            table.setdefault(pattern.name, []).append(binding)
        wildcard = literal.pop(WILDCARD_RESOURCE, None)
        return cls(
            bindings,
            kafka_order(bindings),
            {name: Group(group) for name, group in literal.items()},
            {name: Group(group) for name, group in prefixed.items()},
            tuple(sorted({len(name) for name in prefixed}, reverse=True)),
            Group(wildcard) if wildcard else None,
        )

    def groups(self, name: str) -> tuple[list[Group], Group | None]:
        """The patterns that apply to the resource ``name``: its literal and prefixes,
        in Kafka's order, and the ``*`` literal when it applies.

        ``StandardAuthorizerData.checkSection`` skips a LITERAL ACL whose name is a
        proper prefix of the resource name before it checks for ``*``, so the ``*``
        ACLs never apply to a name that starts with ``*`` (a group or transactional
        id ``*x``), except ``*`` itself. ``AclAuthorizer`` (3.9, ZooKeeper) applies them.
        """
        found: list[Group] = []
        group = self.literal.get(name)
        if group is not None:
            found.append(group)
        size = len(name)
        for length in self.prefix_lengths:
            if length <= size:
                group = self.prefixed.get(name[:length])
                if group is not None:
                    found.append(group)
        wildcard = self.wildcard
        if wildcard is not None and name[:1] == WILDCARD_RESOURCE and name != WILDCARD_RESOURCE:
            wildcard = None
        return found, wildcard


def split_by_type(
    bindings: Iterable[AclBinding],
) -> dict[ResourceType, frozenset[AclBinding]]:
    """The bindings of each resource type, each checked once."""
    by_type: dict[ResourceType, set[AclBinding]] = {}
    for binding in bindings:
        check_storable(binding)
        by_type.setdefault(binding.pattern.resource_type, set()).add(binding)
    return {rtype: frozenset(group) for rtype, group in by_type.items()}
