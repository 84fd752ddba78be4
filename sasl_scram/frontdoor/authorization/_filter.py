"""The edge's authorization, as one request filter on the proxy core."""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable
from typing import Final

from sasl_scram.authz import AclOperation
from sasl_scram.authz import Authorizer
from sasl_scram.authz import ResourceType
from sasl_scram.authz import java_host_address
from sasl_scram.frontdoor._errors import PeerProtocolError
from sasl_scram.frontdoor._filters import PASS
from sasl_scram.frontdoor._filters import Buffer
from sasl_scram.frontdoor._filters import EdgeSession
from sasl_scram.frontdoor._filters import RequestFilter
from sasl_scram.frontdoor._filters import RequestOutcome
from sasl_scram.frontdoor._filters import Respond
from sasl_scram.frontdoor._filters import Rewrite
from sasl_scram.frontdoor._inflight import InFlight
from sasl_scram.frontdoor.authorization._check import AuditSink
from sasl_scram.frontdoor.authorization._check import RequestCheck
from sasl_scram.frontdoor.authorization._produce_head import produce_head
from sasl_scram.frontdoor.authorization._table import RULES
from sasl_scram.frontdoor.authorization._verdicts import ALLOWED
from sasl_scram.frontdoor.authorization._verdicts import Body
from sasl_scram.frontdoor.authorization._verdicts import Refused
from sasl_scram.kafka import KafkaCodecError
from sasl_scram.kafka._message_table import MessageSpec
from sasl_scram.kafka._message_table import message_spec
from sasl_scram.kafka._primitives import Reader

__all__ = ["AuthorizationFilter"]

_I16: Final = struct.Struct(">h")
# api key, api version, correlation id.
_HEAD: Final = 8
_PRODUCE: Final = 0


def body_start(payload: bytes, flexible: bool) -> int:
    """Where a request's body starts: after the header's client id (request
    header v1) and, in flexible versions, its tagged fields (v2)."""
    length: int = _I16.unpack_from(payload, _HEAD)[0]
    start = _HEAD + 2 + max(length, 0)
    if flexible:
        r = Reader(payload, start)
        for _ in range(r.uvarint()):
            r.uvarint()
            r.raw(r.uvarint())
        start = r.pos
    return start


def _response_body_start(payload: bytes, flexible: bool) -> int:
    if not flexible:
        return 4
    r = Reader(payload, 4)
    for _ in range(r.uvarint()):
        r.uvarint()
        r.raw(r.uvarint())
    return r.pos


@functools.lru_cache(maxsize=4096)
def _java_host(host: str) -> str:
    return java_host_address(host)


class AuthorizationFilter(RequestFilter):
    """Every request authorized as Kafka's ``KafkaApis`` authorizes it, against
    the edge's ACLs, before it leaves the edge.

    Args:
        acls: the current snapshot of the edge's ACLs and settings (read once
            per request: a change applies from the next request on).
        audit: told each decision Kafka's authorizer would log.
    """

    def __init__(self, acls: Callable[[], Authorizer], audit: AuditSink) -> None:
        self.api_keys = frozenset(RULES)
        self.head_keys = frozenset({_PRODUCE})
        self._acls = acls
        self._audit = audit

    def on_head(
        self, session: EdgeSession, api_key: int, version: int, buf: Buffer, start: int, end: int
    ) -> bool | None:
        """A Produce to one topic, allowed, streams through with its record
        batches unread; any other is read whole (refused, or split by topic)."""
        try:
            head = produce_head(buf, start, end, version)
        except (ValueError, struct.error):
            return True  # read whole: on_request says what is wrong
        if head is None:
            return None
        if head.topics != 1 or head.first_topic is None:
            return True
        check = RequestCheck(self._acls(), session, _java_host(session.client_host), "Produce")
        transactional_id = head.transactional_id
        if transactional_id is not None and not check.allowed(
            AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id
        ):
            return True
        if not check.allowed(AclOperation.WRITE, ResourceType.TOPIC, head.first_topic):
            return True
        check.audit(self._audit)
        return False

    def on_request(self, session: EdgeSession, entry: InFlight, payload: bytes) -> RequestOutcome:
        key, version = entry.api_key, entry.api_version
        spec = message_spec(key)
        flexible = spec.flexible(version)
        try:
            start = body_start(payload, flexible)
            request = spec.read_request_body(version, payload, start)
        except (KafkaCodecError, struct.error, IndexError) as exc:
            # Kafka closes a connection whose request does not parse.
            raise PeerProtocolError(f"{spec.name} v{version} request unreadable: {exc}") from None
        check = RequestCheck(self._acls(), session, _java_host(session.client_host), spec.name)
        verdict = RULES[key](check, version, request)
        check.audit(self._audit)
        if verdict is ALLOWED:
            return PASS
        if isinstance(verdict, Refused):
            if key == _PRODUCE and request["acks"] == 0:
                # KafkaApis closes an acks=0 producer's connection on any error.
                raise PeerProtocolError("Produce with acks=0 refused at the edge")
            return Respond(_response(spec, entry, verdict.response))
        merge = verdict.merge  # type: ignore[union-attr]
        entry.reshape = functools.partial(_reshape, spec, version, check, self._audit, merge)
        if verdict.request is request:  # type: ignore[union-attr]
            return PASS
        body = spec.write_request_body(version, verdict.request)  # type: ignore[union-attr]
        return Rewrite(payload[:start] + body)


def _response(spec: MessageSpec, entry: InFlight, body: Body) -> bytes:
    version = entry.api_version
    header = entry.correlation_id.to_bytes(4, "big", signed=True)
    if spec.flexible(version):
        header += b"\x00"  # response header v1: no tagged fields
    return header + spec.write_response_body(version, body)


def _reshape(
    spec: MessageSpec,
    version: int,
    check: RequestCheck,
    audit: AuditSink,
    merge: Callable[[Body], None],
    payload: bytes,
) -> bytes:
    """The cluster's answer with the edge's part merged in."""
    start = _response_body_start(payload, spec.flexible(version))
    try:
        answer = spec.read_response_body(version, payload, start)
    except (KafkaCodecError, struct.error, IndexError) as exc:
        raise PeerProtocolError(f"{spec.name} v{version} response unreadable: {exc}") from None
    merge(answer)
    check.audit(audit)
    return payload[:start] + spec.write_response_body(version, answer)
