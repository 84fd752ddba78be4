"""ACL bindings and the filters that select them, as Kafka's client classes define them.

``ResourcePattern``, ``AccessControlEntry`` and ``AclBinding`` are what is stored;
their filters are what DescribeAcls and DeleteAcls send. Construction refuses what
Kafka's constructors refuse, ``matches`` is Kafka's, and ``str()`` prints what
Kafka's ``toString`` prints (``org.apache.kafka.common.resource``,
``org.apache.kafka.common.acl``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar
from typing import Final

from sasl_scram.authz._enums import AclOperation
from sasl_scram.authz._enums import AclPermissionType
from sasl_scram.authz._enums import PatternType
from sasl_scram.authz._enums import ResourceType
from sasl_scram.authz._errors import AuthzError

__all__ = [
    "CLUSTER_NAME",
    "WILDCARD_HOST",
    "WILDCARD_PRINCIPAL",
    "WILDCARD_RESOURCE",
    "AccessControlEntry",
    "AccessControlEntryFilter",
    "AclBinding",
    "AclBindingFilter",
    "ResourcePattern",
    "ResourcePatternFilter",
]

#: The resource name that matches every name of its type (``ResourcePattern.WILDCARD_RESOURCE``).
WILDCARD_RESOURCE: Final = "*"
#: The principal that matches every ``User`` principal (``AclEntry.WILDCARD_PRINCIPAL_STRING``).
WILDCARD_PRINCIPAL: Final = "User:*"
#: The host that matches every client address (``AclEntry.WILDCARD_HOST``).
WILDCARD_HOST: Final = "*"
#: The only name of the CLUSTER resource (``Resource.CLUSTER_NAME``).
CLUSTER_NAME: Final = "kafka-cluster"

_ANY_TEXT: Final = "<any>"


@dataclass(frozen=True, slots=True)
class ResourcePattern:
    """A stored ACL's resource: type, name and LITERAL or PREFIXED (``ResourcePattern``).

    Kafka's constructor refuses the filter-only values ANY (type) and ANY or MATCH
    (pattern); UNKNOWN is accepted here as there, and refused where an ACL is stored.
    """

    resource_type: ResourceType
    name: str
    pattern_type: PatternType

    def __post_init__(self) -> None:
        if self.resource_type is ResourceType.ANY:
            raise AuthzError(
                "a resource pattern's type must not be ANY (a filter value): "
                "give a concrete type such as TOPIC or GROUP"
            )
        if self.pattern_type in (PatternType.MATCH, PatternType.ANY):
            raise AuthzError(
                f"a resource pattern's pattern type must not be {self.pattern_type.name} "
                "(a filter value): give LITERAL or PREFIXED"
            )

    def __str__(self) -> str:
        return (
            f"ResourcePattern(resourceType={self.resource_type.name}, name={self.name}, "
            f"patternType={self.pattern_type.name})"
        )

    @property
    def is_unknown(self) -> bool:
        return self.resource_type.is_unknown or self.pattern_type.is_unknown

    def to_filter(self) -> ResourcePatternFilter:
        return ResourcePatternFilter(self.resource_type, self.name, self.pattern_type)


@dataclass(frozen=True, slots=True)
class ResourcePatternFilter:
    """The resource half of a DescribeAcls/DeleteAcls filter (``ResourcePatternFilter``).

    ``name=None`` matches any name; ``pattern_type`` may be ANY or MATCH.
    """

    ANY: ClassVar[ResourcePatternFilter]

    resource_type: ResourceType
    name: str | None
    pattern_type: PatternType

    def __str__(self) -> str:
        name = _ANY_TEXT if self.name is None else self.name
        # Kafka prints a filter with the pattern's class name too.
        return (
            f"ResourcePattern(resourceType={self.resource_type.name}, name={name}, "
            f"patternType={self.pattern_type.name})"
        )

    @property
    def is_unknown(self) -> bool:
        return self.resource_type.is_unknown or self.pattern_type.is_unknown

    def matches(self, pattern: ResourcePattern) -> bool:
        """``ResourcePatternFilter.matches``.

        ANY compares the name exactly whatever the stored pattern type, so a ``*``
        filter finds only the ``*`` ACLs. MATCH finds the ACLs that would apply to
        a resource of that name: the LITERAL name, the LITERAL ``*`` and every
        PREFIXED pattern the name starts with.
        """
        if self.resource_type is not ResourceType.ANY and self.resource_type != (
            pattern.resource_type
        ):
            return False
        wanted = self.pattern_type
        if wanted not in (PatternType.ANY, PatternType.MATCH) and wanted != pattern.pattern_type:
            return False
        if self.name is None:
            return True
        if wanted is PatternType.ANY or wanted == pattern.pattern_type:
            return self.name == pattern.name
        if pattern.pattern_type is PatternType.LITERAL:
            return pattern.name in (self.name, WILDCARD_RESOURCE)
        if pattern.pattern_type is PatternType.PREFIXED:
            return self.name.startswith(pattern.name)
        raise AuthzError(
            f"cannot match a MATCH filter against a pattern of type {pattern.pattern_type.name}: "
            "stored patterns are LITERAL or PREFIXED"
        )


ResourcePatternFilter.ANY = ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY)


@dataclass(frozen=True, slots=True)
class AccessControlEntry:
    """Who may or may not do what from where (``AccessControlEntry``).

    ``principal`` is ``Type:Name`` (``User:alice``, ``User:*``); ``host`` is a
    client IP address as Java prints it, or ``*``. Kafka's constructor refuses the
    filter-only ANY for the operation and the permission type.
    """

    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def __post_init__(self) -> None:
        if self.operation is AclOperation.ANY:
            raise AuthzError(
                "an ACL's operation must not be ANY (a filter value): give one such as READ or ALL"
            )
        if self.permission_type is AclPermissionType.ANY:
            raise AuthzError(
                "an ACL's permission type must not be ANY (a filter value): give ALLOW or DENY"
            )

    def __str__(self) -> str:
        return _entry_text(self.principal, self.host, self.operation, self.permission_type)

    @property
    def is_unknown(self) -> bool:
        return self.operation.is_unknown or self.permission_type.is_unknown

    def to_filter(self) -> AccessControlEntryFilter:
        return AccessControlEntryFilter(
            self.principal, self.host, self.operation, self.permission_type
        )


@dataclass(frozen=True, slots=True)
class AccessControlEntryFilter:
    """The entry half of a filter (``AccessControlEntryFilter``): ``None`` principal or
    host matches any, ANY operation or permission type matches any. Strings compare
    exactly: a ``User:*`` filter finds only the ACLs whose principal is ``User:*``."""

    ANY: ClassVar[AccessControlEntryFilter]

    principal: str | None
    host: str | None
    operation: AclOperation
    permission_type: AclPermissionType

    def __str__(self) -> str:
        return _entry_text(self.principal, self.host, self.operation, self.permission_type)

    @property
    def is_unknown(self) -> bool:
        return self.operation.is_unknown or self.permission_type.is_unknown

    def matches(self, entry: AccessControlEntry) -> bool:
        """``AccessControlEntryFilter.matches``."""
        if self.principal is not None and self.principal != entry.principal:
            return False
        if self.host is not None and self.host != entry.host:
            return False
        if self.operation is not AclOperation.ANY and self.operation != entry.operation:
            return False
        return (
            self.permission_type is AclPermissionType.ANY
            or self.permission_type == entry.permission_type
        )


AccessControlEntryFilter.ANY = AccessControlEntryFilter(
    None, None, AclOperation.ANY, AclPermissionType.ANY
)


def _entry_text(
    principal: str | None, host: str | None, operation: AclOperation, permission: AclPermissionType
) -> str:
    """``AccessControlEntryData.toString``."""
    return (
        f"(principal={_ANY_TEXT if principal is None else principal}, "
        f"host={_ANY_TEXT if host is None else host}, "
        f"operation={operation.name}, permissionType={permission.name})"
    )


@dataclass(frozen=True, slots=True)
class AclBinding:
    """One ACL: a resource pattern and an entry (``AclBinding``)."""

    pattern: ResourcePattern
    entry: AccessControlEntry

    def __str__(self) -> str:
        return f"(pattern={self.pattern}, entry={self.entry})"

    @property
    def is_unknown(self) -> bool:
        return self.pattern.is_unknown or self.entry.is_unknown

    def to_filter(self) -> AclBindingFilter:
        return AclBindingFilter(self.pattern.to_filter(), self.entry.to_filter())


@dataclass(frozen=True, slots=True)
class AclBindingFilter:
    """A DescribeAcls or DeleteAcls filter (``AclBindingFilter``)."""

    ANY: ClassVar[AclBindingFilter]

    pattern_filter: ResourcePatternFilter
    entry_filter: AccessControlEntryFilter

    def __str__(self) -> str:
        return f"(patternFilter={self.pattern_filter}, entryFilter={self.entry_filter})"

    @property
    def is_unknown(self) -> bool:
        return self.pattern_filter.is_unknown or self.entry_filter.is_unknown

    def matches(self, binding: AclBinding) -> bool:
        """``AclBindingFilter.matches``: both halves match."""
        return self.pattern_filter.matches(binding.pattern) and self.entry_filter.matches(
            binding.entry
        )


AclBindingFilter.ANY = AclBindingFilter(ResourcePatternFilter.ANY, AccessControlEntryFilter.ANY)
