"""What counting per edge user costs a forwarded frame (``python bench/bench_user_metrics.py``).

A :class:`ProxyConnection` (the front door's sans-IO core, as ``serve`` runs it)
forwards Produce-sized requests (1 KB and 16 KB) and their responses, fed whole,
one frame at a time, with each way of counting its frames:

* ``none``: no metrics (``scram.metrics.listener`` unset);
* ``per API``: the per-API cells alone, as before the rows per user;
* ``per API + user``: :class:`TrafficObserver`, the per-API cells and the
  user's row, in a list (one process);
* ``shared``: the same over a worker's float cells in a shared block
  (``scram.workers`` above 1).

Each figure is the best of ``--repeat`` runs of ``--frames`` request and
response pairs, in nanoseconds of this thread's CPU per pair (not wall time: other processes on the
machine then count less): the difference between two rows is
what that counting adds to a frame. Nothing else runs: the real cost of a
forwarded frame also has the two sockets' system calls, which this leaves out,
so the share it prints is an upper bound.
"""

from __future__ import annotations

import argparse
import mmap
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sasl_scram.config import KafkaPrincipal  # noqa: E402
from sasl_scram.endpoint._edge_metrics import EdgeMetrics  # noqa: E402
from sasl_scram.endpoint._edge_metrics import UserNames  # noqa: E402
from sasl_scram.endpoint._edge_metrics import edge_cells  # noqa: E402
from sasl_scram.endpoint._forward_metrics import FORWARD_CELLS  # noqa: E402
from sasl_scram.endpoint._forward_metrics import ForwardMetrics  # noqa: E402
from sasl_scram.frontdoor import EdgeRequestFilter  # noqa: E402
from sasl_scram.frontdoor import EdgeSession  # noqa: E402
from sasl_scram.frontdoor import FilterChain  # noqa: E402
from sasl_scram.frontdoor import ProxyBounds  # noqa: E402
from sasl_scram.frontdoor import ProxyConnection  # noqa: E402

FETCH = 1  # Fetch v12: a request that always gets a response, read as Produce's are
SESSION = EdgeSession(KafkaPrincipal.user("alice"), "127.0.0.1", "c1")
Observers = tuple[Callable[[int, int], None] | None, Callable[[int, int], None] | None]


def _frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def _proxy(observers: Observers) -> ProxyConnection:
    bounds = ProxyBounds.from_settings(
        max_request=104857600, max_parsed_request=524288, upstream_timeout_ms=30000
    )
    proxy = ProxyConnection(
        bounds,
        FilterChain([EdgeRequestFilter(frozenset())], []).bind(SESSION),
        forwarded={FETCH: (0, 15)},
        observe_request=observers[0],
        observe_response=observers[1],
    )
    proxy.upstream_ready(0.0, 0, b"")
    return proxy


def _shared(n: int) -> Any:
    return memoryview(mmap.mmap(-1, 8 * n)).cast("d")


def _ways() -> dict[str, Callable[[], Observers]]:
    def per_api() -> Observers:
        metrics = ForwardMetrics()
        return metrics.request, metrics.response

    def per_user(shared: bool) -> Observers:
        names = UserNames(100)
        cells = _shared(edge_cells(100)) if shared else None
        metrics = ForwardMetrics(_shared(FORWARD_CELLS) if shared else None)
        metrics.edge = EdgeMetrics(names, cells)
        observer = metrics.observer("alice")
        return observer.request, observer.response

    return {
        "none": lambda: (None, None),
        "per API": per_api,
        "per API + user": lambda: per_user(False),
        "shared": lambda: per_user(True),
    }


def _run(way: Callable[[], Observers], size: int, frames: int) -> float:
    """Seconds for ``frames`` request and response pairs of ``size`` bytes each."""
    proxy = _proxy(way())
    body = b"\x00\x03cli\x00" + b"r" * size
    requests = [_frame(struct.pack(">hhi", FETCH, 12, i) + body) for i in range(1, frames + 1)]
    responses = [_frame(struct.pack(">i", i) + b"\x00" * 64) for i in range(1, frames + 1)]
    start = time.thread_time()
    for req, resp in zip(requests, responses, strict=True):
        proxy.client_data(req)
        proxy.cluster_data(resp)
    return time.thread_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--frames", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    ways = _ways()
    for size in (1024, 16384):
        best = {name: float("inf") for name in ways}
        for _ in range(args.repeat):  # interleaved: a noisy neighbour hits every way alike
            for name, way in ways.items():
                best[name] = min(best[name], _run(way, size, args.frames))
        base = best["none"]
        print(f"{size // 1024} KB requests, ns per request and response (best of {args.repeat}):")
        for name, seconds in best.items():
            ns = seconds / args.frames * 1e9
            extra = (seconds - base) / base * 100
            print(f"  {name:15s} {ns:8.0f}  ({extra:+.1f}% against none)")


if __name__ == "__main__":
    main()
