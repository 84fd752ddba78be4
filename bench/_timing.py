"""Timing one call in a loop, shared by the micro-benchmarks (imports nothing
of ours, so a benchmark may load it before choosing which tree's code runs)."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["best_us"]


def best_us(run: Callable[[], object], repeat: int, rounds: int) -> float:
    """The best of ``rounds`` of ``repeat`` calls of ``run``, in µs per call."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(repeat):
            run()
        best = min(best, (time.perf_counter() - start) / repeat * 1e6)
    return best
