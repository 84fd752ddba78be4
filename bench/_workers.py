"""The ``scram.workers`` rows of ``bench_endpoint.py``: the real ``kafka-scram
serve`` (SQLite store) with 1 and 2 worker processes at 100 and 1000
connections, in alternating rounds with fresh processes, nothing pinned (the
load generator shares the cores with the workers). The server's CPU counts
the parent and every worker."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _java_style import DURATION_S
from _java_style import ROOT
from _java_style import Sample
from _java_style import build_client
from _java_style import cpu_seconds
from _java_style import java_style
from _java_style import seed_bench_store
from _java_style import serve_port
from _java_style import span
from _java_style import table_line

from sasl_scram import _native

#: (workers, concurrency).
WORKER_ROWS = ((1, 100), (2, 100), (1, 1000), (2, 1000))
WARM_UP_S = 0.3


def start_serve(workers: int, base: Path) -> tuple[subprocess.Popen[str], int, list[int]]:
    """This tree's ``kafka-scram serve`` with ``workers`` processes on a SQLite store
    holding the bench user: the process, its port, and its pids (parent and workers)."""
    db = base / "credentials.db"
    seed_bench_store(db)
    config = base / f"workers-{workers}.properties"
    config.write_text(
        "listeners=SASL_PLAINTEXT://127.0.0.1:0\n"
        f"scram.credential.store.path={db}\nscram.workers={workers}\n"
    )
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "kafka-scram"), "serve", "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    port = serve_port(proc)
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
    return proc, port, [proc.pid, *map(int, children)]


def _window(exe: Path, pids: list[int], port: int, concurrency: int, seconds: float) -> Sample:
    """One unpinned window; the server's CPU summed over the parent and its workers."""
    before = sum(map(cpu_seconds, pids))
    sample = java_style(exe, pids[0], port, concurrency, "login", seconds, pinned=False)
    sample.server_us = (sum(map(cpu_seconds, pids)) - before) * 1e6 / sample.logins
    return sample


def workers_section(rounds: int) -> None:
    exe = build_client()
    print(
        "\nkafka-scram serve with scram.workers = 1 and 2 (SQLite store), Java-style logins,"
        "\n  nothing pinned: the load generator shares the cores with the workers."
        "\n  server CPU counts the parent and every worker."
        f"\n  {rounds} alternating rounds of {DURATION_S:.0f} s windows, fresh processes each round."
        f"\n  This tree's SCRAM core: {_native.status()}."
    )
    results: dict[tuple[int, int], list[Sample]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-workers-") as tmp:
        for i in range(rounds):
            for workers in (1, 2) if i % 2 == 0 else (2, 1):
                proc, port, pids = start_serve(workers, Path(tmp))
                try:
                    _window(exe, pids, port, 10, WARM_UP_S)
                    for w, c in WORKER_ROWS:
                        if w == workers:
                            results.setdefault((w, c), []).append(
                                _window(exe, pids, port, c, DURATION_S)
                            )
                finally:
                    proc.terminate()
                    proc.wait(30)
    for w, c in WORKER_ROWS:
        samples = results[w, c]
        waited = span([100 * s.client_wait for s in samples], ".0f")
        print(
            table_line(f"login     c={c:<4d} workers={w}", samples)
            + f", load generator waiting for a CPU {waited}% of the window"
        )
    for c in sorted({c for _, c in WORKER_ROWS}):
        pairs = zip(results[2, c], results[1, c], strict=True)
        ratios = [two.rate / one.rate for two, one in pairs]
        print(f"login     c={c:<4d} 2 workers / 1 worker logins/s: {span(ratios, '.2f')}")
