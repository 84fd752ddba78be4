"""The edge's authorization, as one request filter on the proxy core.

The data path has fast lanes: a one-topic Produce is decided from its head
and streams on; a consumer's Fetch is read by a walker that only collects its
topic names (or ids, v13+, named from the map of topic ids). Both ask a cache
of allowed decisions (per principal, host, operation and resource), emptied
whenever the ACL snapshot changes, and build no audit line unless the audit
logger would write the allowed ones (DEBUG).
Everything else, and anything refused, goes the general way: the request
decoded, its rule decided (:mod:`._table`), the answer built.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable
from typing import Final

from sasl_scram.authz import AclOperation
from sasl_scram.authz import Action
from sasl_scram.authz import Authorizer
from sasl_scram.authz import ResourceType
from sasl_scram.authz import java_host_address
from sasl_scram.frontdoor._errors import PeerProtocolError
from sasl_scram.frontdoor._filters import PASS
from sasl_scram.frontdoor._filters import EdgeSession
from sasl_scram.frontdoor._filters import RequestFilter
from sasl_scram.frontdoor._filters import RequestOutcome
from sasl_scram.frontdoor._filters import Respond
from sasl_scram.frontdoor._filters import Rewrite
from sasl_scram.frontdoor._inflight import InFlight
from sasl_scram.frontdoor.authorization._check import AuditSink
from sasl_scram.frontdoor.authorization._check import RequestCheck
from sasl_scram.frontdoor.authorization._heads import fetch_head
from sasl_scram.frontdoor.authorization._heads import produce_head
from sasl_scram.frontdoor.authorization._table import RULES
from sasl_scram.frontdoor.authorization._topic_names import TopicNames
from sasl_scram.frontdoor.authorization._verdicts import ALLOWED
from sasl_scram.frontdoor.authorization._verdicts import Body
from sasl_scram.frontdoor.authorization._verdicts import Refused
from sasl_scram.kafka import KafkaCodecError
from sasl_scram.kafka import MessageSpec
from sasl_scram.kafka import message_spec

__all__ = ["AuthorizationFilter"]

_I16: Final = struct.Struct(">h")
_I32: Final = struct.Struct(">i")
# api key, api version, correlation id.
_HEAD: Final = 8
_PRODUCE: Final = 0
_FETCH: Final = 1
#: The Fetch versions the walker reads (v13+ by topic id, resolved by the map).
_FETCH_WALKED: Final = range(4, 19)
#: KIP-227's FINAL_EPOCH: a full fetch that opens no session.
_SESSIONLESS: Final = -1
#: Session id 0 and FINAL_EPOCH.
_SESSIONLESS_IDS: Final = _I32.pack(0) + _I32.pack(_SESSIONLESS)
#: Decisions cached at most, then the cache starts again.
_MAX_CACHED: Final = 1 << 16
_DEBUG: Final = 10
_WRITE, _READ = AclOperation.WRITE, AclOperation.READ
_TOPIC, _TXN = ResourceType.TOPIC, ResourceType.TRANSACTIONAL_ID


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
        audit_enabled: whether the audit writes lines of a level (``logging``'s
            numbers); allowed decisions (DEBUG) are built only when it does.
        topic_names: the cluster's topic ids (one map per process; by default
            one of this filter's own, which nothing refreshes).
    """

    def __init__(
        self,
        acls: Callable[[], Authorizer],
        audit: AuditSink,
        audit_enabled: Callable[[int], bool] = lambda level: True,
        topic_names: TopicNames | None = None,
    ) -> None:
        self.topic_names = topic_names if topic_names is not None else TopicNames()
        self.api_keys = frozenset(RULES)
        self.head_keys = frozenset({_PRODUCE})
        self._acls = acls
        self._audit = audit
        self._audit_enabled = audit_enabled
        self._cached_for: Authorizer | None = None
        self._allowed: dict[tuple[str, str, str, int, int, str], bool] = {}

    # -- the fast lanes ---------------------------------------------------------------
    def _snapshot(self) -> Authorizer:
        authorizer = self._acls()
        if authorizer is not self._cached_for or len(self._allowed) > _MAX_CACHED:
            self._cached_for = authorizer
            self._allowed = {}
        return authorizer

    def _may(
        self, authorizer: Authorizer, session: EdgeSession, op: AclOperation,
        kind: ResourceType, name: str,
    ) -> bool:  # fmt: skip
        """One decision, cached; refusals are left to the general way (and logged there)."""
        principal = session.principal
        key = (principal.principal_type, principal.name, session.client_host, op, kind, name)
        allowed = self._allowed.get(key)
        if allowed is None:
            action = Action.on(op, kind, name)
            host = _java_host(session.client_host)
            allowed = authorizer.authorize(principal, host, action).allowed
            self._allowed[key] = allowed
        return allowed

    def _audit_allowed(
        self, authorizer: Authorizer, session: EdgeSession, request: str,
        checks: list[tuple[AclOperation, ResourceType, str]],
    ) -> None:  # fmt: skip
        if self._audit_enabled(_DEBUG):
            host = _java_host(session.client_host)
            check = RequestCheck(authorizer, session, host, request, self.topic_names)
            for op, kind, name in checks:
                check.allowed(op, kind, name)
            check.audit(self._audit)

    def on_head(
        self, session: EdgeSession, api_key: int, version: int, buf: bytes, start: int, end: int
    ) -> bool | None:
        """A Produce to one topic, allowed, streams through with its record
        batches unread; any other is read whole (refused, or split by topic)."""
        try:
            head = produce_head(buf, start, end, version)
        except ValueError:
            return True  # read whole: on_request says what is wrong
        if head is None:
            return None
        topic = head.first_topic
        if head.topics != 1 or topic is None:
            return True
        authorizer = self._snapshot()
        checks = [(_WRITE, _TOPIC, topic)]
        if head.transactional_id is not None:
            checks.insert(0, (_WRITE, _TXN, head.transactional_id))
        for op, kind, name in checks:
            if not self._may(authorizer, session, op, kind, name):
                return True
        self._audit_allowed(authorizer, session, "Produce", checks)
        return False

    def _fetch(
        self, session: EdgeSession, entry: InFlight, payload: bytes
    ) -> RequestOutcome | None:
        """A consumer's Fetch whose every topic is allowed, made sessionless; ``None``
        for the general way. KIP-227's incremental fetches name only what changed,
        so a session would let a partition be read after its READ was revoked: the
        edge sends every Fetch as a full one that opens no session, and the client,
        told no session was made, keeps sending full fetches."""
        try:
            head = fetch_head(payload, _HEAD, entry.api_version)
        except (ValueError, IndexError, struct.error):
            return None
        if head.replica_id >= 0:
            return None
        topics = head.topics
        if head.topic_ids:
            topics = []
            for topic_id in head.topic_ids:
                name = self.topic_names.name(topic_id)
                if name is None:
                    return None  # the general way answers UNKNOWN_TOPIC_ID
                topics.append(name)
        authorizer = self._snapshot()
        for topic in topics:
            if not self._may(authorizer, session, _READ, _TOPIC, topic):
                return None
        self._audit_allowed(authorizer, session, "Fetch", [(_READ, _TOPIC, t) for t in topics])
        if head.epoch_at < 0 or head.session_epoch == _SESSIONLESS:
            return PASS
        at = head.epoch_at  # the session id, then the epoch
        return Rewrite(payload[: at - 4] + _SESSIONLESS_IDS + payload[at + 4 :])

    # -- the general way ------------------------------------------------------------------
    def on_request(self, session: EdgeSession, entry: InFlight, payload: bytes) -> RequestOutcome:
        key, version = entry.api_key, entry.api_version
        if key == _FETCH and version in _FETCH_WALKED:
            fast = self._fetch(session, entry, payload)
            if fast is not None:
                return fast
        spec = message_spec(key)
        try:
            start = spec.request_body_start(version, payload)
            request = spec.read_request_body(version, payload, start)
        except (KafkaCodecError, struct.error, IndexError) as exc:
            # Kafka closes a connection whose request does not parse.
            raise PeerProtocolError(f"{spec.name} v{version} request unreadable: {exc}") from None
        sessionless = key == _FETCH and request.get("session_epoch", _SESSIONLESS) != _SESSIONLESS
        if sessionless:  # see _fetch
            request = {**request, "session_id": 0, "session_epoch": _SESSIONLESS}
        host = _java_host(session.client_host)
        check = RequestCheck(self._snapshot(), session, host, spec.name, self.topic_names)
        verdict = RULES[key](check, version, request)
        check.audit(self._audit)
        if verdict is ALLOWED:
            if sessionless:
                return Rewrite(payload[:start] + spec.write_request_body(version, request))
            return PASS
        if isinstance(verdict, Refused):
            if key == _PRODUCE and request["acks"] == 0:
                # KafkaApis closes an acks=0 producer's connection on any error.
                raise PeerProtocolError("Produce with acks=0 refused at the edge")
            return Respond(_response(spec, entry, verdict.response))
        merge = verdict.merge  # type: ignore[union-attr]
        entry.reshape = functools.partial(_reshape, spec, version, check, self._audit, merge)
        if verdict.request is request and not sessionless:  # type: ignore[union-attr]
            return PASS
        body = spec.write_request_body(version, verdict.request)  # type: ignore[union-attr]
        return Rewrite(payload[:start] + body)


def _response(spec: MessageSpec, entry: InFlight, body: Body) -> bytes:
    version = entry.api_version
    header = entry.correlation_id.to_bytes(4, "big", signed=True)
    if spec.response_header_version(version) >= 1:
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
    try:
        start = spec.response_body_start(version, payload)
        answer = spec.read_response_body(version, payload, start)
    except (KafkaCodecError, struct.error, IndexError) as exc:
        raise PeerProtocolError(f"{spec.name} v{version} response unreadable: {exc}") from None
    merge(answer)
    check.audit(audit)
    return payload[:start] + spec.write_response_body(version, answer)
