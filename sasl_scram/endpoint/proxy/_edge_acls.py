"""The edge's ACLs as a running front door holds them, and its authorizer log.

One immutable :class:`~sasl_scram.authz.Authorizer` snapshot, replaced whole
when the store's ACLs change: a request is decided on the snapshot it read.
Each decision Kafka's authorizer would log goes to the ``kafka_scram.audit``
logger at Kafka's level for it (``StandardAuthorizer.logAuditMessage``):
denials at INFO, allowed actions at DEBUG, probes at TRACE (5).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from sasl_scram.audit import AUDIT_LOGGER_NAME
from sasl_scram.audit import escape
from sasl_scram.authz import AclBinding
from sasl_scram.authz import Authorizer
from sasl_scram.authz import audit_level
from sasl_scram.authz import audit_message
from sasl_scram.endpoint._config import EndpointConfig
from sasl_scram.frontdoor.authorization import AuthorizationFilter
from sasl_scram.frontdoor.authorization import Decided

__all__ = ["EdgeAcls", "edge_authorization", "log_decision"]

_log = logging.getLogger(AUDIT_LOGGER_NAME)


class EdgeAcls:
    """The current snapshot of the edge's ACLs and settings."""

    __slots__ = ("current",)

    def __init__(self, authorizer: Authorizer) -> None:
        self.current = authorizer

    def snapshot(self) -> Authorizer:
        return self.current

    def replace(self, bindings: Iterable[AclBinding]) -> None:
        """The store's ACLs changed: decide from now on with ``bindings``."""
        current = self.current
        self.current = Authorizer(
            bindings,
            super_users=current.super_users,
            allow_everyone_if_no_acl_found=current.allow_everyone_if_no_acl_found,
        )


def log_decision(decided: Decided) -> None:
    """One line of Kafka's authorizer log, at Kafka's level for it."""
    level = int(audit_level(decided.action, decided.decision))
    if _log.isEnabledFor(level):
        line = audit_message(
            decided.session.principal,
            decided.host,
            decided.action,
            decided.decision,
            decided.request,
        )
        _log.log(level, "%s", escape_line(line))


def escape_line(line: str) -> str:
    """Names in the line come from clients: no line break or control character
    may reach the log (``sasl_scram.audit.escape`` on the whole line keeps its
    spaces, which separate Kafka's fields)."""
    return " ".join(escape(word) for word in line.split(" "))


def edge_authorization(config: EndpointConfig) -> tuple[EdgeAcls, AuthorizationFilter] | None:
    """The edge's ACLs and their request filter, when ``authorizer.class.name`` is set."""
    if not config.authorizer:
        return None
    acls = EdgeAcls(
        Authorizer(
            (),
            super_users=[str(p) for p in config.super_users],
            allow_everyone_if_no_acl_found=config.allow_everyone_if_no_acl_found,
        )
    )
    return acls, AuthorizationFilter(acls.snapshot, log_decision)
