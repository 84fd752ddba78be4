"""The audit trail of ``kafka-scram serve``: one INFO line on its own logger,
:data:`AUDIT_LOGGER_NAME` (``kafka_scram.audit``), for each successful login
(and KIP-368 re-authentication), each credential change, each refused
administrative or token request, each delegation token created, renewed or
expired, and, at a front door, each resource an administrative request it
forwarded changes, with the cluster's answer.

The lines take the shape of Kafka's authorizer log (``AclAuthorizer``'s
``logAuditMessage``, logger ``kafka.authorizer.logger``), so the tools that read
a broker's audit lines read ours; docs/security.md gives the format and how to
send this logger to its own file. Every value a client or an administrator
chose is escaped (:func:`escape`): a user name cannot end a line or imitate
the delimiters of the next field.
"""

from __future__ import annotations

from sasl_scram.audit._trail import AUDIT_LOGGER_NAME
from sasl_scram.audit._trail import audit
from sasl_scram.audit._trail import audit_event
from sasl_scram.audit._trail import audit_message
from sasl_scram.audit._trail import error_name
from sasl_scram.audit._trail import escape
from sasl_scram.audit._trail import event_message
from sasl_scram.audit._trail import request_name

__all__ = [
    "AUDIT_LOGGER_NAME",
    "audit",
    "audit_event",
    "audit_message",
    "error_name",
    "escape",
    "event_message",
    "request_name",
]
