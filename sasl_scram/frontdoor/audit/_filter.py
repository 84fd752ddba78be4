"""The front door's audit of forwarded administrative requests.

:class:`AdminAuditFilter` is a watcher on the filter chain: it reads each
request of :data:`ADMIN_API_KEYS` and, through :attr:`InFlight.watch`, the
cluster's response to it, and writes one line per resource the request
changes, on the ``kafka_scram.audit`` logger in the shape of Kafka's authorizer
log: the edge user, what was asked and the cluster's answer as Kafka's error
names. It never changes nor holds up a frame: what it cannot read is forwarded
as it came and audited as ``unparsed``; a request too large to read whole
(past ``sasl.server.max.receive.size``) streams through unread, and so does a
response; a response the connection closed before is ``unanswered`` (the
cluster may have acted on the request all the same).
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable
from typing import Any
from typing import Final

from sasl_scram.audit import AUDIT_LOGGER_NAME
from sasl_scram.audit import audit_message
from sasl_scram.authz import CLUSTER_NAME as CLUSTER
from sasl_scram.frontdoor._filters import PASS
from sasl_scram.frontdoor._filters import EdgeSession
from sasl_scram.frontdoor._filters import RequestFilter
from sasl_scram.frontdoor._filters import RequestOutcome
from sasl_scram.frontdoor._inflight import InFlight
from sasl_scram.frontdoor._wire import read_uvarint as uvarint
from sasl_scram.frontdoor.audit._apis import ADMIN_APIS
from sasl_scram.frontdoor.audit._apis import AdminApi
from sasl_scram.frontdoor.audit._lines import Details
from sasl_scram.frontdoor.audit._lines import Line
from sasl_scram.frontdoor.audit._lines import Results
from sasl_scram.frontdoor.audit._lines import outcome
from sasl_scram.kafka import message_spec

__all__ = ["ADMIN_API_KEYS", "AdminAuditFilter", "audit_enabled", "cluster_identity"]

_log = logging.getLogger(AUDIT_LOGGER_NAME)
_CLIENT_ID = struct.Struct(">h")
# api key, api version, correlation id.
_REQUEST_HEAD = 8
#: The administrative APIs audited, by API key.
ADMIN_API_KEYS: Final = frozenset(ADMIN_APIS)
#: A line's resource when the request could not be read (``ResourceType.UNKNOWN``
#: never names one otherwise).
_UNPARSED = ("Unknown", "unparsed")


def audit_enabled() -> bool:
    """Whether ``kafka_scram.audit`` logs INFO: else the administrative requests
    are not read at all (the filter is left out of the chain)."""
    return _log.isEnabledFor(logging.INFO)


def cluster_identity(session: EdgeSession) -> tuple[str, str]:
    """Who the cluster sees for this connection, as a line's detail."""
    if session.cluster_principal is not None:
        principal = session.cluster_principal
        return "clusterPrincipal", f"{principal.principal_type}:{principal.name}"
    if session.cluster_token_id is not None:
        return "clusterTokenId", session.cluster_token_id
    return "clusterPrincipal", "unknown"


def _log_line(line: str) -> None:
    _log.info("%s", line)


class AdminAuditFilter(RequestFilter):
    """Audits each forwarded administrative request (:data:`ADMIN_API_KEYS`).

    Args:
        emit: where each line goes; by default INFO on ``kafka_scram.audit``.
    """

    api_keys = ADMIN_API_KEYS
    watcher = True

    def __init__(self, emit: Callable[[str], None] = _log_line) -> None:
        self.emit = emit

    def on_request(self, session: EdgeSession, entry: InFlight, payload: bytes) -> RequestOutcome:
        api = ADMIN_APIS[entry.api_key]
        try:
            lines: list[Line] | None = api.lines(_request_body(entry, payload))
        except Exception:  # whatever the cause, the request goes on as it came
            lines = None
        entry.watch = _Watch(self, session, entry, api, lines)
        return PASS

    def on_unread(self, session: EdgeSession, entry: InFlight) -> None:
        entry.watch = _Watch(self, session, entry, ADMIN_APIS[entry.api_key], None)


class _Watch:
    """One request's lines, written once the cluster has answered (or never will)."""

    __slots__ = ("_api", "_entry", "_filter", "_lines", "_session")

    def __init__(
        self,
        audit_filter: AdminAuditFilter,
        session: EdgeSession,
        entry: InFlight,
        api: AdminApi,
        lines: list[Line] | None,
    ) -> None:
        self._filter = audit_filter
        self._session = session
        self._entry = entry
        self._api = api
        self._lines = lines

    def response(self, payload: bytes | None) -> None:
        lines, results = self._lines, None
        if payload is not None:
            try:
                body = _response_body(self._entry, payload)
                if lines is None:
                    # The request was not read: its response's errors, whoever they are for.
                    results = Results(top=_first_error(body))
                else:
                    results = self._api.results(body)
                    if self._api.answered is not None:
                        lines = self._api.answered(lines, body)
            except Exception:  # the response went on as it came
                results = None
        self._write(lines, results, "unparsed")

    def lost(self) -> None:
        self._write(self._lines, None, "unanswered")

    def _write(self, lines: list[Line] | None, results: Results | None, missing: str) -> None:
        """Each line with its result: from ``results``, else ``missing``."""
        session, entry, api = self._session, self._entry, self._api
        common: Details = (
            *((("tokenId", session.token_id),) if session.token_id else ()),
            cluster_identity(session),
            ("connectionId", session.connection_id),
            ("correlationId", entry.correlation_id),
        )
        request = message_spec(entry.api_key).name
        if lines is None:
            lines = [Line(*_UNPARSED, (("apiVersion", entry.api_version),))]
        elif not lines:
            # A request that names nothing changes nothing, but it was sent.
            lines = [Line("Cluster", CLUSTER, (("resources", 0),))]
        for line in lines:
            text, denied = outcome(line, results) if results is not None else (missing, False)
            self._filter.emit(
                audit_message(
                    session.principal,
                    not denied,
                    api.operation,
                    session.client_host,
                    (line.kind, line.name),
                    request,
                    (*line.details, *common, ("result", text)),
                    pattern=line.pattern,
                )
            )


def _request_body(entry: InFlight, payload: bytes) -> dict[str, Any]:
    """The request's body, after its header (v1, or v2 with tagged fields)."""
    spec = message_spec(entry.api_key)
    (length,) = _CLIENT_ID.unpack_from(payload, _REQUEST_HEAD)
    pos = _REQUEST_HEAD + 2 + max(length, 0)
    if spec.flexible(entry.api_version):
        pos = _skip_tags(payload, pos)
    return spec.read_request_body(entry.api_version, payload, pos)


def _response_body(entry: InFlight, payload: bytes) -> dict[str, Any]:
    """The response's body, after its correlation id (and tagged fields, header v1)."""
    spec = message_spec(entry.api_key)
    pos = _skip_tags(payload, 4) if spec.flexible(entry.api_version) else 4
    return spec.read_response_body(entry.api_version, payload, pos)


def _skip_tags(payload: bytes, pos: int) -> int:
    """Past a header's tagged fields (KIP-482)."""
    end = len(payload)
    got = uvarint(payload, pos, end)
    if got is None:
        raise ValueError("truncated tagged fields")
    count, pos = got
    for _ in range(count):
        for _ in range(2):  # the tag, then the size
            got = uvarint(payload, pos, end)
            if got is None:
                raise ValueError("truncated tagged fields")
            size, pos = got
        pos += size
    return pos


def _first_error(value: Any) -> int:
    """The first error code other than NONE anywhere in a response, else NONE."""
    if isinstance(value, dict):
        code = value.get("error_code")
        if isinstance(code, int) and code:
            return code
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            if code := _first_error(item):
                return code
    return 0
