"""The front door's fuzz target: a logged-in client's bytes and the cluster's
answers through a :class:`ProxyConnection` with serve's own filter chain.

An input is ``n`` (two bytes, big-endian), then ``n`` bytes from the client,
then the cluster's bytes. The chain is the one ``serve`` builds with edge ACLs
and the audit on: what stays at the edge (the login, the token, KIP-554 and
ACL RPCs), the authorization filter on a fixed set of ACLs, the audit of
administrative requests, and the address rewriter on the responses. Each
stream is fed in two halves, the first through the fast path the adapter uses
(``forward_client``, ``forward_cluster``), the second through the general one;
an answer the edge owes is taken as given, a due re-login as done, and the
clock passes the re-authentication time between the two streams.

The surface documents no error: bad bytes from either peer close the
connection (``CloseConnection``), so anything that leaves it is a finding.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sasl_scram.authz import AccessControlEntry
from sasl_scram.authz import AclBinding
from sasl_scram.authz import AclOperation
from sasl_scram.authz import AclPermissionType
from sasl_scram.authz import Authorizer
from sasl_scram.authz import PatternType
from sasl_scram.authz import ResourcePattern
from sasl_scram.authz import ResourceType
from sasl_scram.config import KafkaPrincipal
from sasl_scram.frontdoor import ACL_API_KEYS
from sasl_scram.frontdoor import EDGE_API_KEYS
from sasl_scram.frontdoor import Action
from sasl_scram.frontdoor import AddressRewriteFilter
from sasl_scram.frontdoor import AddressRewriter
from sasl_scram.frontdoor import AnswerLocally
from sasl_scram.frontdoor import EdgeRequestFilter
from sasl_scram.frontdoor import EdgeSession
from sasl_scram.frontdoor import FilterChain
from sasl_scram.frontdoor import ProxyBounds
from sasl_scram.frontdoor import ProxyConnection
from sasl_scram.frontdoor import Relogin
from sasl_scram.frontdoor import edge_api_versions
from sasl_scram.frontdoor.audit import AdminAuditFilter
from sasl_scram.frontdoor.authorization import AUTHORIZED_CAPS
from sasl_scram.frontdoor.authorization import RULES
from sasl_scram.frontdoor.authorization import UNCHECKED
from sasl_scram.frontdoor.authorization import AuthorizationFilter
from sasl_scram.kafka import known_api_keys
from sasl_scram.kafka import message_spec

__all__ = ["EDGE_KEYS", "FORWARDED", "example_body", "front_door", "front_door_input"]

#: What ``serve`` answers itself with edge ACLs on.
EDGE_KEYS = EDGE_API_KEYS | ACL_API_KEYS
#: The cluster as the message table knows Kafka: every API at every version.
_CLUSTER = [
    {"api_key": k, "min_version": s.min_version, "max_version": s.max_version}
    for k in sorted(known_api_keys())
    for s in (message_spec(k),)
]
#: What is forwarded, worked out as ``serve`` does with edge ACLs.
FORWARDED = {
    e["api_key"]: (e["min_version"], e["max_version"])
    for e in edge_api_versions(
        _CLUSTER,
        {k: (0, 0) for k in EDGE_KEYS},
        only=RULES.keys() | UNCHECKED,
        caps=AUTHORIZED_CAPS,
    )
    if e["api_key"] not in EDGE_KEYS
}
_BOUNDS = ProxyBounds.from_settings(
    max_request=104857600, max_parsed_request=524288, upstream_timeout_ms=30000
)
_SESSION = EdgeSession(KafkaPrincipal.user("alice"), "10.0.0.5", "fuzz-1")
#: Re-authentication at the cluster falls between the two streams.
_LIFETIME_MS = 1000


def _binding(
    name: str,
    op: AclOperation,
    rtype: ResourceType = ResourceType.TOPIC,
    pattern: PatternType = PatternType.LITERAL,
    permission: AclPermissionType = AclPermissionType.ALLOW,
) -> AclBinding:
    return AclBinding(
        ResourcePattern(rtype, name, pattern),
        AccessControlEntry("User:alice", "*", op, permission),
    )


#: ``orders`` is alice's (every operation on a topic, a group or a
#: transactional id of that name), ``payments`` refused, resources starting
#: ``pre-`` readable by prefix, the cluster describable: each request meets
#: allowed, refused and mixed cases.
_ACLS = Authorizer(
    [
        binding
        for rtype in (ResourceType.TOPIC, ResourceType.GROUP, ResourceType.TRANSACTIONAL_ID)
        for binding in (
            _binding("orders", AclOperation.ALL, rtype),
            _binding("payments", AclOperation.ALL, rtype, permission=AclPermissionType.DENY),
            _binding("pre-", AclOperation.READ, rtype, PatternType.PREFIXED),
        )
    ]
    + [_binding("kafka-cluster", AclOperation.DESCRIBE, ResourceType.CLUSTER)]
)


def _connection() -> ProxyConnection:
    requests = [
        EdgeRequestFilter(EDGE_KEYS),
        AuthorizationFilter(lambda: _ACLS, lambda decided: None),
        AdminAuditFilter(emit=lambda line: None),
    ]
    rewriter = AddressRewriter("127.0.0.1", 9100, learn=lambda node, host, port: None)
    chain = FilterChain(requests, [AddressRewriteFilter(rewriter)])
    return ProxyConnection(_BOUNDS, chain.bind(_SESSION), forwarded=FORWARDED)


def _settle(conn: ProxyConnection, actions: list[Action]) -> None:
    """Carry out what the adapter would: the edge answers, re-logins succeed."""
    pending = list(actions)
    while pending:
        action = pending.pop(0)
        if isinstance(action, AnswerLocally):
            pending.extend(conn.local_answered())
        elif isinstance(action, Relogin):
            pending.extend(conn.relogin_done(2.0, _LIFETIME_MS))
    if conn.in_flight > _BOUNDS.max_in_flight:
        raise AssertionError(f"{conn.in_flight} requests in flight, over the bound")


def _feed(conn: ProxyConnection, data: bytes, *, client: bool) -> None:
    half = len(data) // 2
    fast = conn.forward_client if client else conn.forward_cluster
    if fast(data[:half]) is None:
        _settle(conn, conn.take_actions())
    _settle(conn, conn.client_data(data[half:]) if client else conn.cluster_data(data[half:]))


def front_door(data: bytes) -> None:
    """One input: a client's bytes after its login, then the cluster's."""
    size = int.from_bytes(data[:2], "big")
    client, cluster = data[2 : 2 + size], data[2 + size :]
    conn = _connection()
    _settle(conn, conn.upstream_ready(0.0, _LIFETIME_MS))
    _feed(conn, client, client=True)
    _settle(conn, conn.tick(1.0))
    _feed(conn, cluster, client=False)
    conn.close()


def front_door_input(client: bytes, cluster: bytes = b"") -> bytes:
    """An input of :func:`front_door` made of the two streams."""
    return len(client).to_bytes(2, "big") + client + cluster


def example_body(struct: Any, version: int, name: str) -> dict[str, Any]:
    """A body with one element in every array and ``name`` in every string,
    so that each request names a resource the filter decides on."""
    body: dict[str, Any] = {}
    for f in struct.fields:
        if not f.present(version):
            continue
        kind = f.type
        if hasattr(kind, "element"):
            element = kind.element
            if hasattr(element, "fields"):
                body[f.name] = [example_body(element, version, name)]
            elif getattr(element, "name", "") == "string":
                body[f.name] = [name]
        elif hasattr(kind, "fields"):
            body[f.name] = example_body(kind, version, name)
        elif kind.name == "string":
            body[f.name] = name
        elif kind.name == "records":
            body[f.name] = b"batch"
        elif f.name == "acks":
            body[f.name] = -1
    return body


def _frame(head: bytes, body: bytes) -> bytes:
    payload = head + body
    return len(payload).to_bytes(4, "big") + payload


def seeds() -> Iterator[bytes]:
    """Every forwarded API at its lowest and highest version, each naming an
    allowed, a refused and a prefixed resource, alone and answered with the
    response's example body (which the rewriter and the refusal merge read)."""
    correlation = 0
    for key, (low, high) in sorted(FORWARDED.items()):
        spec = message_spec(key)
        for version in sorted({low, high}):
            for name in ("orders", "payments", "pre-x"):
                correlation += 1
                head = key.to_bytes(2, "big") + version.to_bytes(2, "big")
                head += correlation.to_bytes(4, "big") + b"\x00\x04fuzz"
                answer = correlation.to_bytes(4, "big")
                if spec.request_header_version(version) >= 2:
                    head += b"\x00"  # the header's tagged fields (KIP-482)
                if spec.response_header_version(version) >= 1:
                    answer += b"\x00"
                body = example_body(spec.request(version), version, name)
                request = _frame(head, spec.write_request_body(version, body))
                reply = example_body(spec.response(version), version, name)
                response = _frame(answer, spec.write_response_body(version, reply))
                yield front_door_input(request)
                yield front_door_input(request, response)
