"""What CreateAcls, DeleteAcls and DescribeAcls accept, and the answer to what they do not.

Three stages, as in Kafka:

1. **Parsing** (``CreateAclsRequest.validate``, ``DeleteAclsRequest`` and
   ``DescribeAclsRequest.normalizeAndValidate``): a code 0 (UNKNOWN) anywhere, or
   a pattern other than LITERAL at version 0 (ANY in a v0 filter is read as
   LITERAL), fails the parse; ``RequestContext.parseRequest`` turns that into an
   ``InvalidRequestException`` and the broker **closes the connection** without an
   answer. Here: :class:`MalformedAclRequest`.
2. **Building the bindings** (``CreateAclsRequest.aclBinding``): a creation with a
   filter value (resource type ANY, pattern ANY or MATCH, operation or permission
   ANY) makes Kafka's constructors throw inside the handler, so **every** creation
   answers UNKNOWN_SERVER_ERROR with no message (``ApiError.fromThrowable``).
   Codes Kafka does not know read as UNKNOWN (``fromCode``) and pass on.
3. **Each creation or filter**: ``AclApis.handleCreateAcls``, then the
   controller's ``AclControlManager.validateNewAcl`` or ``validateFilter``
   (KRaft), or 3.9's ``AclAuthorizer.createAcls`` (ZooKeeper).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sasl_scram.authz._enums import AclOperation
from sasl_scram.authz._enums import AclPermissionType
from sasl_scram.authz._enums import PatternType
from sasl_scram.authz._enums import ResourceType
from sasl_scram.authz._errors import AuthzError
from sasl_scram.authz._model import CLUSTER_NAME
from sasl_scram.authz._model import AccessControlEntry
from sasl_scram.authz._model import AccessControlEntryFilter
from sasl_scram.authz._model import AclBinding
from sasl_scram.authz._model import AclBindingFilter
from sasl_scram.authz._model import ResourcePattern
from sasl_scram.authz._model import ResourcePatternFilter
from sasl_scram.kafka import ErrorCode

__all__ = [
    "AclCreation",
    "AclFilterFields",
    "CreationResult",
    "FilterResult",
    "MalformedAclRequest",
    "check_create_acls",
    "check_delete_filters",
    "check_describe_filter",
]

_UNKNOWN = 0
_ANY = 1
_MATCH = 2
_LITERAL = PatternType.LITERAL.code


class MalformedAclRequest(AuthzError):
    """The request does not parse: Kafka closes the connection without an answer."""


@dataclass(frozen=True, slots=True)
class AclCreation:
    """One creation of a CreateAcls request, as on the wire
    (``CreateAclsRequestData.AclCreation``): codes, not yet enums."""

    resource_type: int
    resource_name: str
    resource_pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int


@dataclass(frozen=True, slots=True)
class AclFilterFields:
    """One DeleteAcls filter or the DescribeAcls filter, as on the wire."""

    resource_type: int
    resource_name: str | None
    pattern_type: int
    principal: str | None
    host: str | None
    operation: int
    permission_type: int

    def to_filter(self, pattern_type: int | None = None) -> AclBindingFilter:
        """``DeleteAclsRequest.aclFilter``, ``DescribeAclsRequest.filter``."""
        code = self.pattern_type if pattern_type is None else pattern_type
        return AclBindingFilter(
            ResourcePatternFilter(
                ResourceType.from_code(self.resource_type),
                self.resource_name,
                PatternType.from_code(code),
            ),
            AccessControlEntryFilter(
                self.principal,
                self.host,
                AclOperation.from_code(self.operation),
                AclPermissionType.from_code(self.permission_type),
            ),
        )


@dataclass(frozen=True, slots=True)
class CreationResult:
    """One creation's answer: the binding to store, or the error it answers."""

    binding: AclBinding | None
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None


@dataclass(frozen=True, slots=True)
class FilterResult:
    """One DeleteAcls filter: the filter to apply, or the error it answers."""

    filter: AclBindingFilter
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None


def _parse_creations(creations: Sequence[AclCreation], version: int) -> None:
    """``CreateAclsRequest.validate``."""
    if version == 0 and any(c.resource_pattern_type != _LITERAL for c in creations):
        raise MalformedAclRequest(
            "Version 0 only supports literal resource pattern types: "
            "send LITERAL, or CreateAcls v1+ for PREFIXED"
        )
    for c in creations:
        codes = (c.resource_pattern_type, c.resource_type, c.permission_type, c.operation)
        if _UNKNOWN in codes:
            raise MalformedAclRequest(
                "CreatableAcls contain unknown elements (a code 0): "
                "give a resource type, pattern, operation and permission"
            )


def _binding(c: AclCreation) -> AclBinding | None:
    """``CreateAclsRequest.aclBinding``; ``None`` where Kafka's constructors throw."""
    if c.resource_type == _ANY or c.resource_pattern_type in (_ANY, _MATCH):
        return None
    if _ANY in (c.operation, c.permission_type):
        return None
    return AclBinding(
        ResourcePattern(
            ResourceType.from_code(c.resource_type),
            c.resource_name,
            PatternType.from_code(c.resource_pattern_type),
        ),
        AccessControlEntry(
            c.principal,
            c.host,
            AclOperation.from_code(c.operation),
            AclPermissionType.from_code(c.permission_type),
        ),
    )


def _broker_check(binding: AclBinding) -> str | None:
    """``AclApis.handleCreateAcls``'s own checks."""
    pattern = binding.pattern
    if pattern.resource_type is ResourceType.CLUSTER and pattern.name != CLUSTER_NAME:
        return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    if not pattern.name:
        return "Invalid empty resource name"
    return None


def _controller_check(binding: AclBinding) -> str | None:
    """``AclControlManager.validateNewAcl`` (its empty-name check is never reached:
    the broker's runs first)."""
    pattern, entry = binding.pattern, binding.entry
    if pattern.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        return f"Invalid resourceType {pattern.resource_type.name}"
    if not pattern.pattern_type.is_specific:
        return f"Invalid patternType {pattern.pattern_type.name}"
    if entry.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        return f"Invalid operation {entry.operation.name}"
    if entry.permission_type not in (AclPermissionType.ALLOW, AclPermissionType.DENY):
        return f"Invalid permissionType {entry.permission_type.name}"
    return None


def _zookeeper_check(binding: AclBinding) -> str | None:
    """3.9 ``AclAuthorizer.createAcls``: unknown elements and ``/`` in a name (a
    ZooKeeper path separator) fail, wrapped as ``Failed to create ACL``."""
    if binding.is_unknown or "/" in binding.pattern.name:
        return "Failed to create ACL"
    return None


def check_create_acls(
    creations: Sequence[AclCreation], version: int, *, zookeeper: bool = False
) -> tuple[CreationResult, ...]:
    """CreateAcls's answer to each creation, in request order; the successes carry
    the binding to store (one already stored stays stored once).

    Raises :class:`MalformedAclRequest` where Kafka closes the connection.
    ``zookeeper``: 3.9's ``AclAuthorizer`` instead of the KRaft controller. There, a
    principal that is not ``Type:Name`` fails with UNKNOWN_SERVER_ERROR every
    creation on the same resource pattern (they are written as one node).
    """
    _parse_creations(creations, version)
    bindings = [_binding(c) for c in creations]
    if None in bindings:
        return tuple(CreationResult(None, ErrorCode.UNKNOWN_SERVER_ERROR) for _ in creations)
    results: list[CreationResult] = []
    for binding in bindings:
        assert binding is not None
        problem = _broker_check(binding) or (
            _zookeeper_check(binding) if zookeeper else _controller_check(binding)
        )
        if problem is None:
            results.append(CreationResult(binding))
        else:
            results.append(CreationResult(None, ErrorCode.INVALID_REQUEST, problem))
    return _zookeeper_principals(results) if zookeeper else tuple(results)


def _zookeeper_principals(results: list[CreationResult]) -> tuple[CreationResult, ...]:
    """``AclAuthorizer.createAcls`` writes each pattern's new ACLs as one update,
    whose ``AclEntry`` parses every principal: one bad principal fails them all."""
    failed = {
        r.binding.pattern for r in results if r.binding and ":" not in r.binding.entry.principal
    }
    return tuple(
        CreationResult(None, ErrorCode.UNKNOWN_SERVER_ERROR)
        if r.binding is not None and r.binding.pattern in failed
        else r
        for r in results
    )


def _parse_filter(fields: AclFilterFields, version: int, request: str) -> int:
    """The pattern code after version 0's normalization; raises where the parse fails."""
    code = fields.pattern_type
    if version == 0:
        pattern = PatternType.from_code(code)
        if pattern is PatternType.ANY:
            code = _LITERAL
        elif pattern is not PatternType.LITERAL:
            raise MalformedAclRequest(
                f"{request} version 0 supports only LITERAL and ANY pattern filters: "
                "send one of those, or version 1+"
            )
    if _UNKNOWN in (code, fields.resource_type, fields.operation, fields.permission_type):
        raise MalformedAclRequest(
            f"{request} filter contains UNKNOWN elements (a code 0): "
            "give ANY for a field that should match anything"
        )
    return code


def check_describe_filter(fields: AclFilterFields, version: int) -> AclBindingFilter:
    """DescribeAcls's filter. Raises :class:`MalformedAclRequest` where Kafka closes
    the connection; a code Kafka does not know reads as UNKNOWN and matches nothing."""
    return fields.to_filter(_parse_filter(fields, version, "DescribeAcls"))


def check_delete_filters(
    filters: Sequence[AclFilterFields], version: int, *, zookeeper: bool = False
) -> tuple[FilterResult, ...]:
    """DeleteAcls's filters, each with its error if the controller refuses it
    (``AclControlManager.validateFilter``: a field Kafka does not know).
    ``zookeeper``: 3.9's ``AclAuthorizer`` refuses none (such a filter matches nothing)."""
    codes = [_parse_filter(fields, version, "DeleteAcls") for fields in filters]
    results = []
    for fields, code in zip(filters, codes, strict=True):
        found = fields.to_filter(code)
        if not zookeeper and found.pattern_filter.is_unknown:
            results.append(FilterResult(found, ErrorCode.INVALID_REQUEST, "Unknown patternFilter."))
        elif not zookeeper and found.entry_filter.is_unknown:
            results.append(FilterResult(found, ErrorCode.INVALID_REQUEST, "Unknown entryFilter."))
        else:
            results.append(FilterResult(found))
    return tuple(results)
