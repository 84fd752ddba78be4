"""The edge's ACLs as a running front door holds them, and its authorizer log.

One immutable :class:`~sasl_scram.authz.Authorizer` snapshot, the store's,
replaced whole when the store's ACLs change: a request is decided on the
snapshot it read.
Each decision Kafka's authorizer would log goes to the ``kafka_scram.audit``
logger at Kafka's level for it (``StandardAuthorizer.logAuditMessage``):
denials at INFO, allowed actions at DEBUG, probes at TRACE (5).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from sasl_scram.audit import AUDIT_LOGGER_NAME
from sasl_scram.audit import escape
from sasl_scram.authz import Authorizer
from sasl_scram.authz import audit_level
from sasl_scram.authz import audit_message
from sasl_scram.endpoint._config import EndpointConfig
from sasl_scram.frontdoor.authorization import Decided
from sasl_scram.store import AclStore
from sasl_scram.store import AclStoreUnavailable

__all__ = ["EdgeAcls", "audit_writes", "edge_acls", "log_decision"]

_log = logging.getLogger(AUDIT_LOGGER_NAME)
log = logging.getLogger(__name__)


class EdgeAcls:
    """The edge's ACLs and settings as requests are decided on them.

    Args:
        store: where the ACLs are kept (``None``: none, only the settings).
        super_users: ``super.users``.
        allow_everyone_if_no_acl_found: ``allow.everyone.if.no.acl.found``.

    A store that cannot vouch for its copy (ZooKeeper out of reach for too
    long) fails closed: nobody but a super user is allowed, logged once.
    """

    __slots__ = ("_closed", "_current", "_failing", "_seen", "_store")

    def __init__(
        self,
        store: AclStore | None,
        super_users: Iterable[str] = (),
        allow_everyone_if_no_acl_found: bool = False,
    ) -> None:
        self._store = store
        self._closed = Authorizer((), super_users=super_users)
        self._current = self._closed.with_settings(
            allow_everyone_if_no_acl_found=allow_everyone_if_no_acl_found
        )
        self._seen: Authorizer | None = None
        self._failing = False

    def snapshot(self) -> Authorizer:
        """The ACLs now, with serve's settings; read per request, no I/O."""
        store = self._store
        if store is None:
            return self._current
        try:
            acls = store.acls()
        except AclStoreUnavailable as exc:
            if not self._failing:
                self._failing = True
                log.warning("Edge ACLs unavailable, only super users are allowed: %s", exc)
            return self._closed
        if self._failing:
            self._failing = False
            log.warning("Edge ACLs available again")
        if acls is not self._seen:
            self._seen = acls
            self._current = acls.with_settings(
                super_users=self._current.super_users,
                allow_everyone_if_no_acl_found=self._current.allow_everyone_if_no_acl_found,
            )
        return self._current

    def refresh(self) -> None:
        """The store changed through us: the next snapshot reads it again."""
        self._seen = None


def audit_writes(level: int) -> bool:
    """Whether the audit logger writes lines of ``level``."""
    return _log.isEnabledFor(level)


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


def edge_acls(config: EndpointConfig, store: AclStore | None) -> EdgeAcls | None:
    """The edge's ACLs, kept in ``store``, when ``authorizer.class.name`` is set."""
    if not config.authorizer:
        return None
    return EdgeAcls(
        store,
        [str(p) for p in config.super_users],
        config.allow_everyone_if_no_acl_found,
    )
