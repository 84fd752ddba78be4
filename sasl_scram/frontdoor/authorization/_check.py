"""One request's authorization: Kafka's decisions for one principal, counted
and logged as ``KafkaApis`` makes and logs them.

Kafka's ``AuthHelper.filterByAuthorized`` asks the authorizer once per
*distinct* resource name with the number of times the request names it
(``resourceRefCount``); :class:`RequestCheck` does the same, caching each
answer for the request, and hands every decision that Kafka's authorizer
would log to the audit sink once the request has been decided.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass

from sasl_scram.authz import CLUSTER_NAME
from sasl_scram.authz import AclOperation
from sasl_scram.authz import Action
from sasl_scram.authz import Authorizer
from sasl_scram.authz import Decision
from sasl_scram.authz import ResourceType
from sasl_scram.frontdoor._filters import EdgeSession
from sasl_scram.frontdoor.authorization._topic_names import TopicNames

__all__ = ["AuditSink", "Decided", "RequestCheck"]


@dataclass(frozen=True, slots=True)
class Decided:
    """One decision, for the audit: who, the action, the answer, the request."""

    session: EdgeSession
    host: str
    action: Action
    decision: Decision
    request: str


#: Told each decision Kafka's authorizer would log (its level is the sink's to
#: choose: ``sasl_scram.authz.audit_level``).
AuditSink = Callable[[Decided], None]

_Key = tuple[AclOperation, ResourceType, str]


class RequestCheck:
    """The decisions of one request, on one snapshot of the edge's ACLs.

    Args:
        authorizer: the ACLs and settings this request is decided on.
        session: who sent it.
        host: the client's address as Java prints it (the ACLs' host match).
        request: the API's name as Kafka's ``ApiKeys`` spells it (audit lines).
        topic_names: the cluster's topic ids, for requests that name topics by id
            (and the Metadata answers that teach them).
    """

    __slots__ = (
        "_answers",
        "_counts",
        "_emitted",
        "_logged",
        "authorizer",
        "host",
        "request",
        "session",
        "topic_names",
    )

    def __init__(
        self,
        authorizer: Authorizer,
        session: EdgeSession,
        host: str,
        request: str,
        topic_names: TopicNames | None = None,
    ) -> None:
        self.authorizer = authorizer
        self.topic_names = topic_names if topic_names is not None else TopicNames()
        self.session = session
        self.host = host
        self.request = request
        self._answers: dict[_Key, Decision] = {}
        self._counts: dict[_Key, int] = {}
        self._logged: dict[_Key, tuple[bool, bool]] = {}
        self._emitted: set[_Key] = set()

    def allowed(
        self,
        operation: AclOperation,
        resource_type: ResourceType,
        name: str,
        *,
        log_if_allowed: bool = True,
        log_if_denied: bool = True,
    ) -> bool:
        """Whether the session may do ``operation`` on the LITERAL resource."""
        key = (operation, resource_type, name)
        self._counts[key] = self._counts.get(key, 0) + 1
        decision = self._answers.get(key)
        if decision is None:
            action = Action.on(operation, resource_type, name)
            decision = self.authorizer.authorize(self.session.principal, self.host, action)
            self._answers[key] = decision
            self._logged[key] = (log_if_allowed, log_if_denied)
        return decision.allowed

    def cluster(self, operation: AclOperation, *, log_if_denied: bool = True) -> bool:
        """``AuthHelper.authorize(CLUSTER, kafka-cluster)``."""
        return self.allowed(
            operation, ResourceType.CLUSTER, CLUSTER_NAME, log_if_denied=log_if_denied
        )

    def filter_allowed(
        self,
        operation: AclOperation,
        resource_type: ResourceType,
        names: Iterable[str],
        *,
        log_if_allowed: bool = True,
        log_if_denied: bool = True,
    ) -> set[str]:
        """``AuthHelper.filterByAuthorized``: the names allowed, one decision per
        distinct name, counted by how often ``names`` holds it."""
        return {
            name
            for name in names
            if self.allowed(
                operation,
                resource_type,
                name,
                log_if_allowed=log_if_allowed,
                log_if_denied=log_if_denied,
            )
        }

    def by_resource_type(self, operation: AclOperation, resource_type: ResourceType) -> bool:
        """``authorizeByResourceType`` (InitProducerId without a transactional id)."""
        decided = self.authorizer.authorize_by_resource_type(
            self.session.principal, self.host, operation, resource_type
        )
        return bool(decided.allowed)

    def audit(self, sink: AuditSink) -> None:
        """Hand each logged decision not handed yet to ``sink``, once per distinct
        resource with its reference count, as Kafka's authorizer logs them."""
        for key, decision in self._answers.items():
            if key in self._emitted:
                continue
            self._emitted.add(key)
            log_if_allowed, log_if_denied = self._logged[key]
            if not (log_if_allowed if decision.allowed else log_if_denied):
                continue
            operation, resource_type, name = key
            action = Action.on(
                operation,
                resource_type,
                name,
                reference_count=self._counts[key],
                log_if_allowed=log_if_allowed,
                log_if_denied=log_if_denied,
            )
            sink(Decided(self.session, self.host, action, decision, self.request))
