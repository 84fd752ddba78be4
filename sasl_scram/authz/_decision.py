"""What is asked (``Action``) and what is answered (``Decision``), and how Kafka logs it.

Kafka's authorizer logs every answer on ``kafka.authorizer.logger``: a denial at
INFO when the action says ``logIfDenied``, an allowed action at DEBUG when it says
``logIfAllowed``, anything else at TRACE (``StandardAuthorizerData.logAuditMessage``,
``AclAuthorizer.logAuditMessage``). A ``Decision`` names the rule that decided so the
caller can write that line; nothing here logs.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

from sasl_scram.authz._enums import AclOperation
from sasl_scram.authz._enums import PatternType
from sasl_scram.authz._enums import ResourceType
from sasl_scram.authz._errors import AuthzError
from sasl_scram.authz._model import AclBinding
from sasl_scram.authz._model import ResourcePattern
from sasl_scram.config import KafkaPrincipal

__all__ = ["Action", "AuditLevel", "Decision", "RuleKind", "audit_level", "audit_message"]


@dataclass(frozen=True, slots=True)
class Action:
    """One operation on one resource (``org.apache.kafka.server.authorizer.Action``).

    ``resource`` must be LITERAL: Kafka's authorizers refuse any other pattern
    (``Only literal resources are supported``). ``log_if_allowed`` and
    ``log_if_denied`` say whether the answer is worth an audit line: a request
    for a named resource sets both; a filter over many (a regex subscription, the
    topics of an all-topics Metadata) or an authorized-operations probe clears them.
    """

    operation: AclOperation
    resource: ResourcePattern
    reference_count: int = 1
    log_if_allowed: bool = True
    log_if_denied: bool = True

    def __post_init__(self) -> None:
        if self.resource.pattern_type is not PatternType.LITERAL:
            raise AuthzError(
                "Only literal resources are supported. Got: "
                f"{self.resource.pattern_type.name}; ask about a LITERAL resource"
            )

    @classmethod
    def on(
        cls,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
        *,
        reference_count: int = 1,
        log_if_allowed: bool = True,
        log_if_denied: bool = True,
    ) -> Action:
        """The action ``operation`` on the LITERAL resource ``(resource_type, name)``."""
        return cls(
            operation,
            ResourcePattern(resource_type, name, PatternType.LITERAL),
            reference_count,
            log_if_allowed,
            log_if_denied,
        )


class RuleKind(enum.Enum):
    """Which rule decided (Kafka's ``MatchingRule``)."""

    #: The principal is in ``super.users`` (``SuperUserRule``).
    SUPER_USER = "SuperUser"
    #: An ACL matched: the first DENY, else an ALLOW (``MatchingAclRule``).
    MATCHING_ACL = "MatchingAcl"
    #: No ACL names the resource at all, so ``allow.everyone.if.no.acl.found``
    #: decides (``DefaultRule``).
    NO_ACL = "NoAcl"
    #: ACLs name the resource but none matches this principal, host and
    #: operation: denied whatever the default (the builder's ``DENY_RULE``).
    NO_MATCHING_ACL = "NoMatchingAcl"


@dataclass(frozen=True, slots=True)
class Decision:
    """An answer and the rule behind it. ``acl`` is set for ``MATCHING_ACL`` only."""

    allowed: bool
    rule: RuleKind
    acl: AclBinding | None = None

    def rule_text(self, *, record_style: bool = False) -> str:
        """The rule as Kafka's audit line prints it: ``SuperUser``, ``DefaultAllow``,
        ``DefaultDeny`` (both default rules print so), or
        ``MatchingAcl(acl=StandardAcl(resourceType=TOPIC, resourceName=t, ...))``.

        ``record_style``: Kafka 4.4's ``StandardAcl`` is a Java record, whose
        ``toString`` writes ``StandardAcl[...]``; 3.9 and 4.0 write ``StandardAcl(...)``.
        """
        if self.rule is RuleKind.SUPER_USER:
            return "SuperUser"
        if self.acl is None:
            return "DefaultAllow" if self.allowed else "DefaultDeny"
        pattern, entry = self.acl.pattern, self.acl.entry
        fields = (
            f"resourceType={pattern.resource_type.name}, resourceName={pattern.name}, "
            f"patternType={pattern.pattern_type.name}, principal={entry.principal}, "
            f"host={entry.host}, operation={entry.operation.name}, "
            f"permissionType={entry.permission_type.name}"
        )
        acl = f"StandardAcl[{fields}]" if record_style else f"StandardAcl({fields})"
        return f"MatchingAcl(acl={acl})"


class AuditLevel(enum.IntEnum):
    """The level Kafka's authorizer logs an answer at; values are :mod:`logging`'s
    (TRACE, which :mod:`logging` lacks, is 5)."""

    TRACE = 5
    DEBUG = 10
    INFO = 20


def audit_level(action: Action, decision: Decision) -> AuditLevel:
    """INFO for a denial the action logs, DEBUG for an allowed action it logs,
    TRACE otherwise (authorized-operations probes, filters over many resources)."""
    if decision.allowed:
        return AuditLevel.DEBUG if action.log_if_allowed else AuditLevel.TRACE
    return AuditLevel.INFO if action.log_if_denied else AuditLevel.TRACE


_RESULT: Final = {True: "Allowed", False: "Denied"}


def audit_message(
    principal: KafkaPrincipal,
    host: str,
    action: Action,
    decision: Decision,
    request: str,
    *,
    record_style: bool = False,
) -> str:
    """The audit line ``StandardAuthorizer`` writes (``buildAuditMessage``), e.g.
    ``Principal = User:alice is Denied operation = READ from host = 10.0.0.5 on
    resource = Topic:LITERAL:orders for request = Fetch with resourceRefCount = 1
    based on rule DefaultDeny``.

    ``request`` is the API's name as Kafka's ``ApiKeys`` spells it (``Fetch``,
    ``Metadata``). Names are copied verbatim, as Kafka does: escape the line
    (``sasl_scram.audit.escape``) before it reaches a log a client can write into.
    """
    resource = action.resource
    return (
        f"Principal = {principal} is {_RESULT[decision.allowed]} "
        f"operation = {action.operation.name} from host = {host} on resource = "
        f"{resource.resource_type.display_name}:{resource.pattern_type.name}:{resource.name} "
        f"for request = {request} with resourceRefCount = {action.reference_count} "
        f"based on rule {decision.rule_text(record_style=record_style)}"
    )
