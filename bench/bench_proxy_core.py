"""What the forwarding path's Python costs per request, with no sockets.

A 1 KB Produce v9 and its 63-byte-class response, in a loop, through:

* ``core``: ``ProxyConnection.client_data`` and ``cluster_data`` alone (the
  general path, as bench_authorization.py's proxy row);
* ``fast core``: ``forward_client`` and ``forward_cluster``, the fast path
  (a tree without it has no such row);
* ``adapter``: ``ProxyAdapter.client_data`` and its cluster-side callback,
  that is the core as serve drives it plus the adapter's dispatch and the
  transports' ``writelines`` (a C no-op here: ``deque(maxlen=0).extend``).

Best of ``--repeat`` timings per round, in microseconds per request and
response. With ``--compare OTHER`` (another checkout, its compiled core
built), each round runs this tree and OTHER, each pure Python and compiled,
in one process each, in rotating order, and prints each row's median and
range over the rounds. No broker, no event loop: the figures are the
interpreter's (or mypyc's) share of serve's produce CPU.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _timing import best_us

ROOT = Path(__file__).resolve().parent.parent


def _frames() -> tuple[bytes, bytes]:
    from sasl_scram.kafka._message_table import message_spec

    spec = message_spec(0)
    body = {"transactional_id": None, "acks": 1, "timeout_ms": 30000, "topic_data": [
        {"name": "team-7.orders", "partition_data": [{"index": 0, "records": b"r" * 1024}]}]}  # fmt: skip
    head = struct.pack(">hhih", 0, 9, 7, 8) + b"producer" + b"\x00"
    payload = head + spec.write_request_body(9, body)
    request = struct.pack(">i", len(payload)) + payload
    response = struct.pack(">ii", 4 + 55, 7) + b"\x00" * 55
    return request, response


def _proxy() -> Any:
    from sasl_scram.config import KafkaPrincipal
    from sasl_scram.frontdoor import EdgeRequestFilter
    from sasl_scram.frontdoor import EdgeSession
    from sasl_scram.frontdoor import FilterChain
    from sasl_scram.frontdoor import ProxyBounds
    from sasl_scram.frontdoor import ProxyConnection

    bounds = ProxyBounds.from_settings(
        max_request=1 << 20, max_parsed_request=1 << 19, upstream_timeout_ms=30000
    )
    session = EdgeSession(KafkaPrincipal.user("user-7"), "10.0.0.7", "c1")
    chain = FilterChain([EdgeRequestFilter(frozenset({17}))])
    proxy = ProxyConnection(bounds, chain.bind(session), forwarded={0: (0, 9)})
    proxy.upstream_ready(0.0, 0)
    return proxy


class _Transport:
    """What the adapter calls of a transport on the hot path."""

    def __init__(self) -> None:
        sink: collections.deque[object] = collections.deque(maxlen=0)
        self.writelines = sink.extend


class _Edge:
    """The edge connection as the adapter sees it once forwarding."""

    conn_id = "c1"
    client_host = "10.0.0.7"
    local_port = 9092

    def __init__(self) -> None:
        from sasl_scram.endpoint import EndpointConfig
        from sasl_scram.endpoint.login import ConnectionSettings
        from sasl_scram.endpoint.login import ServerConnection

        serve = EndpointConfig.from_properties({"scram.credential.store.path": "x.db"}, ())
        self.client_transport = _Transport()
        settings = ConnectionSettings(
            mechanisms=serve.mechanisms,
            api_versions=(),
            sasl_max_receive=serve.sasl_max_receive,
            max_request=serve.max_request,
            user_max_request=serve.user_max_request,
            user_max_array=serve.user_max_array,
            max_reauth_ms=0,
            legacy_librdkafka_nonce=serve.legacy_librdkafka_nonce,
        )
        self.server_connection = ServerConnection(settings, lambda: int(time.time() * 1000))


def _adapter() -> Any:
    """A ProxyAdapter as after a login, its proxy connection forwarding and its
    writers those of no-op transports; its opening task never runs."""
    import asyncio

    from sasl_scram._mechanism import SCRAM_SHA_256
    from sasl_scram._server import ScramSession
    from sasl_scram.endpoint.login import Authenticated
    from sasl_scram.endpoint.proxy._forward import FrontDoor
    from sasl_scram.endpoint.proxy._forward import ProxyAdapter
    from sasl_scram.endpoint.proxy._upstream import ClusterView
    from sasl_scram.frontdoor import ProxyBounds
    from sasl_scram.frontdoor import read_upstream

    async def build() -> Any:
        upstream = read_upstream({"upstream.bootstrap.servers": "127.0.0.1:9"}, 9092)
        assert upstream is not None
        bounds = ProxyBounds.from_settings(
            max_request=1 << 20, max_parsed_request=1 << 19, upstream_timeout_ms=30000
        )
        door = FrontDoor(upstream, ClusterView([], {}), "localhost", {17: (0, 1)}, bounds)
        session = ScramSession(SCRAM_SHA_256, "user-7", "user-7", False, None)
        edge: Any = _Edge()
        adapter = ProxyAdapter(door, edge, Authenticated(session, False), (b"", []))
        assert adapter._task is not None
        adapter._task.cancel()
        return adapter

    adapter = asyncio.run(build())
    adapter._proxy = _proxy()
    cluster = _Transport()
    if hasattr(adapter._proxy, "forward_client"):  # the fast path: writers bound at attach
        adapter._to_cluster = cluster.writelines
        adapter._to_client = adapter._edge.client_transport.writelines
    else:
        adapter._to_cluster = cluster
    return adapter


def measure(repeat: int, rounds: int) -> dict[str, Any]:
    import sasl_scram._native

    request, response = _frames()
    proxy = _proxy()

    def core() -> None:
        proxy.client_data(request)
        proxy.cluster_data(response)

    adapter = _adapter()
    to_client, from_cluster = adapter.client_data, adapter._cluster_data

    def whole() -> None:
        to_client(request)
        from_cluster(response)

    got = {
        "status": sasl_scram._native.status(),
        "core": best_us(core, repeat, rounds),
        "adapter": best_us(whole, repeat, rounds),
    }
    fast = _proxy()
    if hasattr(fast, "forward_client"):
        up, down = fast.forward_client, fast.forward_cluster

        def fast_core() -> None:
            up(request)
            down(response)

        got["fast core"] = best_us(fast_core, repeat, rounds)
    return got


def _one(tree: Path, pure: bool, repeat: int, rounds: int) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    env.pop("KAFKA_SCRAM_PURE_PYTHON", None)
    if pure:
        env["KAFKA_SCRAM_PURE_PYTHON"] = "1"
    here = str(Path(__file__).resolve())
    argv = [sys.executable, here, "--one", "--repeat", str(repeat), "--rounds", str(rounds)]
    done = subprocess.run(argv, env=env, cwd=tree, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def compare(other: Path, rounds: int, repeat: int, best_of: int) -> None:
    configs = [(name, tree, pure) for name, tree in (("new", ROOT), ("old", other))
               for pure in (True, False)]  # fmt: skip
    results: dict[str, list[dict[str, Any]]] = {}
    for n in range(rounds):
        shift = n % len(configs)
        for name, tree, pure in configs[shift:] + configs[:shift]:
            key = f"{name} {'pure Python' if pure else 'compiled'}"
            got = _one(tree, pure, repeat, best_of)
            results.setdefault(key, []).append(got)
            print(f"round {n + 1}: {key}: core {got['core']:.2f} us, adapter "
                  f"{got['adapter']:.2f} us ({got['status']})", flush=True)  # fmt: skip
    print(f"\nload average at the end: {os.getloadavg()}")
    for key, runs in results.items():
        row = []
        for field in ("core", "fast core", "adapter"):
            values = [r[field] for r in runs if field in r]
            if not values:
                continue
            row.append(
                f"{field} {statistics.median(values):.2f} us ({min(values):.2f}-{max(values):.2f})"
            )
        print(f"{key:22} " + ", ".join(row))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=5, help="best of, per measurement")
    parser.add_argument("--repeat", type=int, default=20000)
    parser.add_argument("--compare", type=Path, help="another checkout, measured alternately")
    parser.add_argument("--compare-rounds", type=int, default=7)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.compare is not None:
        compare(args.compare, args.compare_rounds, args.repeat, args.rounds)
        return
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    got = measure(args.repeat, args.rounds)
    if args.one:
        print(json.dumps(got))
        return
    print(
        got["status"] + ": " + ", ".join(f"{k} {v:.2f} us" for k, v in got.items() if k != "status")
    )


if __name__ == "__main__":
    main()
