"""``make bench``, part 6: what authorization at the edge costs per request.

The edge's ACLs as the issue of record sizes them: 100 ACLs, 10 of them
PREFIXED, over topics, groups and transactional ids of several users. In one
process, best of ``--rounds`` timings of many repetitions each:

* ``authorize``: one decision of the engine (WRITE on a topic a prefixed ACL
  allows, for a user with ACLs of their own);
* ``produce head``: the filter's decision on a one-topic Produce from its
  head, which then streams (the data path's whole cost at the edge);
* ``fetch``: a consumer's Fetch v12 (one topic, three partitions) read whole,
  decided and passed on;
* ``proxy produce``: a 1 KB one-topic Produce fed through a whole
  ``ProxyConnection`` with and without the filter, and the ratio.

The target: authorization of one request costs at most 5 us on the hot path.
"""

from __future__ import annotations

import argparse
import struct
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from _timing import best_us  # noqa: E402

from sasl_scram.authz import AccessControlEntry  # noqa: E402
from sasl_scram.authz import AclBinding  # noqa: E402
from sasl_scram.authz import AclOperation  # noqa: E402
from sasl_scram.authz import AclPermissionType  # noqa: E402
from sasl_scram.authz import Action  # noqa: E402
from sasl_scram.authz import Authorizer  # noqa: E402
from sasl_scram.authz import PatternType  # noqa: E402
from sasl_scram.authz import ResourcePattern  # noqa: E402
from sasl_scram.authz import ResourceType  # noqa: E402
from sasl_scram.config import KafkaPrincipal  # noqa: E402
from sasl_scram.frontdoor import EdgeRequestFilter  # noqa: E402
from sasl_scram.frontdoor import EdgeSession  # noqa: E402
from sasl_scram.frontdoor import FilterChain  # noqa: E402
from sasl_scram.frontdoor import InFlight  # noqa: E402
from sasl_scram.frontdoor import ProxyBounds  # noqa: E402
from sasl_scram.frontdoor import ProxyConnection  # noqa: E402
from sasl_scram.frontdoor.authorization import AuthorizationFilter  # noqa: E402
from sasl_scram.kafka._message_table import message_spec  # noqa: E402

SESSION = EdgeSession(KafkaPrincipal.user("user-7"), "10.0.0.7", "c1")
TARGET_US = 5.0


def acls() -> Authorizer:
    """100 ACLs, 10 PREFIXED, over 10 users."""
    bindings = []
    for i in range(90):
        kind = (ResourceType.TOPIC, ResourceType.GROUP, ResourceType.TRANSACTIONAL_ID)[i % 3]
        op = (AclOperation.WRITE, AclOperation.READ, AclOperation.DESCRIBE)[i % 3]
        bindings.append(
            AclBinding(
                ResourcePattern(kind, f"name-{i}", PatternType.LITERAL),
                AccessControlEntry(f"User:user-{i % 10}", "*", op, AclPermissionType.ALLOW),
            )
        )
    for i in range(10):
        bindings.append(
            AclBinding(
                ResourcePattern(ResourceType.TOPIC, f"team-{i}.", PatternType.PREFIXED),
                AccessControlEntry(
                    f"User:user-{i}", "*", AclOperation.ALL, AclPermissionType.ALLOW
                ),
            )
        )
    return Authorizer(bindings)


def request(key: int, version: int, body: dict[str, Any]) -> bytes:
    spec = message_spec(key)
    head = struct.pack(">hhih", key, version, 7, 8) + b"producer"
    if spec.flexible(version):
        head += b"\x00"
    return head + spec.write_request_body(version, body)


def proxy_produce_us(chain: FilterChain, frame: bytes, repeat: int, rounds: int) -> float:
    bounds = ProxyBounds.from_settings(
        max_request=1 << 20, max_parsed_request=1 << 19, upstream_timeout_ms=30000
    )
    proxy = ProxyConnection(bounds, chain.bind(SESSION), forwarded={0: (0, 9)})
    proxy.upstream_ready(0.0, 0)
    response = struct.pack(">ii", 4 + 3, 7) + b"ok!"

    def one() -> None:
        proxy.client_data(frame)
        proxy.cluster_data(response)

    return best_us(one, repeat, rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=20000)
    args = parser.parse_args()
    authorizer = acls()
    audit: list[object] = []
    # The audit logger at INFO, its default: allowed decisions (DEBUG) build no line.
    authz = AuthorizationFilter(lambda: authorizer, lambda decided: None, lambda level: level > 10)
    principal = SESSION.principal
    action = Action.on(AclOperation.WRITE, ResourceType.TOPIC, "team-7.orders")
    produce_body = {"transactional_id": None, "acks": 1, "timeout_ms": 30000, "topic_data": [
        {"name": "team-7.orders", "partition_data": [{"index": 0, "records": b"r" * 1024}]}]}  # fmt: skip
    produce = request(0, 9, produce_body)
    fetch = request(1, 12, {"max_wait_ms": 500, "min_bytes": 1, "topics": [
        {"topic": "team-7.orders", "partitions": [
            {"partition": p, "fetch_offset": 100, "partition_max_bytes": 1 << 20}
            for p in range(3)]}]})  # fmt: skip
    rows = {
        "authorize": best_us(
            lambda: authorizer.authorize(principal, "10.0.0.7", action), args.repeat, args.rounds
        ),
        "produce head": best_us(
            lambda: authz.on_head(SESSION, 0, 9, produce, 8, len(produce)),
            args.repeat,
            args.rounds,
        ),
        "fetch": best_us(
            lambda: authz.on_request(SESSION, InFlight(7, 1, 12), fetch), args.repeat, args.rounds
        ),
    }
    frame = struct.pack(">i", len(produce)) + produce
    plain = FilterChain([EdgeRequestFilter(frozenset({17, 18, 36}))])
    with_acls = FilterChain([EdgeRequestFilter(frozenset({17, 18, 36})), authz])
    base = proxy_produce_us(plain, frame, args.repeat, args.rounds)
    checked = proxy_produce_us(with_acls, frame, args.repeat, args.rounds)
    assert not audit
    print("Authorization at the edge, per request (best of "
          f"{args.rounds} x {args.repeat}; 100 ACLs, 10 prefixed)")  # fmt: skip
    for name, us in rows.items():
        print(f"  {name:<14} {us:6.2f} us")
    print(f"  proxy produce  {base:6.2f} us without ACLs, {checked:6.2f} us with "
          f"(x{checked / base:.2f}, +{checked - base:.2f} us)")  # fmt: skip
    worst = max(rows["produce head"], rows["fetch"], checked - base)
    verdict = "meets" if worst <= TARGET_US else "misses"
    print(f"  hot path: {worst:.2f} us per request, {verdict} the {TARGET_US:.0f} us target")


if __name__ == "__main__":
    main()
