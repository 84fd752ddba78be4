"""The edge's ACLs in a running serve: the snapshot requests are decided on,
Kafka's authorizer log, and the ACL RPCs answered at the edge."""

from __future__ import annotations

from sasl_scram.endpoint.acls._edge_acls import EdgeAcls
from sasl_scram.endpoint.acls._edge_acls import audit_writes
from sasl_scram.endpoint.acls._edge_acls import edge_acls
from sasl_scram.endpoint.acls._edge_acls import log_decision
from sasl_scram.endpoint.acls._rpcs import AclRpcs
from sasl_scram.endpoint.acls._rpcs import acl_handlers

__all__ = ["AclRpcs", "EdgeAcls", "acl_handlers", "audit_writes", "edge_acls", "log_decision"]
