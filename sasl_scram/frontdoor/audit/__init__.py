"""The front door's audit of the administrative requests it forwards.

:class:`AdminAuditFilter` watches the requests of :data:`ADMIN_API_KEYS`
(topics, configs, ACLs, quotas, partitions, features, brokers and controllers,
group deletions) and their responses, and writes one line per resource each
changes on the ``kafka_scram.audit`` logger, in the shape of Kafka's
authorizer log, naming the edge user and the cluster's answer. The data APIs
are not among them and stream through unparsed. docs/security.md gives the
lines.
"""

from __future__ import annotations

from sasl_scram.frontdoor.audit._filter import ADMIN_API_KEYS
from sasl_scram.frontdoor.audit._filter import AdminAuditFilter
from sasl_scram.frontdoor.audit._filter import audit_enabled
from sasl_scram.frontdoor.audit._filter import cluster_identity

__all__ = ["ADMIN_API_KEYS", "AdminAuditFilter", "audit_enabled", "cluster_identity"]
