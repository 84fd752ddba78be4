"""Authorization at the edge: every forwarded request decided as Kafka decides
it, against the edge's own ACLs, by one request filter on the proxy core.

Sans-IO. :class:`AuthorizationFilter` reads each request of the APIs in
:data:`RULES` whole (their versions capped by :data:`AUTHORIZED_CAPS`),
decides it with :mod:`sasl_scram.authz`, and forwards it, answers it at the
edge with Kafka's errors in the response's own shape, or forwards the allowed
part and merges the refused part's errors into the cluster's answer.
Requests that name topics by id are decided on the names :class:`TopicNames`
holds for them. docs/front-door.md lists the checks per API.
"""

from __future__ import annotations

from sasl_scram.frontdoor.authorization._check import AuditSink
from sasl_scram.frontdoor.authorization._check import Decided
from sasl_scram.frontdoor.authorization._check import RequestCheck
from sasl_scram.frontdoor.authorization._filter import AuthorizationFilter
from sasl_scram.frontdoor.authorization._table import AUTHORIZED_CAPS
from sasl_scram.frontdoor.authorization._table import RULES
from sasl_scram.frontdoor.authorization._table import UNCHECKED
from sasl_scram.frontdoor.authorization._topic_names import MAX_TOPIC_IDS
from sasl_scram.frontdoor.authorization._topic_names import REFRESH_INTERVAL_S
from sasl_scram.frontdoor.authorization._topic_names import TopicNames

__all__ = [
    "AUTHORIZED_CAPS",
    "MAX_TOPIC_IDS",
    "REFRESH_INTERVAL_S",
    "RULES",
    "UNCHECKED",
    "AuditSink",
    "AuthorizationFilter",
    "Decided",
    "RequestCheck",
    "TopicNames",
]
