"""The ``make run`` rows of ``bench_endpoint.py``: ``kafka-scram serve`` started as
``make run`` starts it, beside the bench server ("this tree").

``make run`` runs the venv's ``kafka-scram`` (an editable install, compiled by
setup.py) with ``config/server.properties``: a SQLite store, a bootstrap super
user, INFO logging. The bench server runs the same endpoint with an in-memory
store. Both are pinned to the same CPU and measured in alternating order with
fresh processes each round; the ratio of their CPU per login is the
target: ``make run`` within 10% of the bench's compiled row (docs/performance.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from _java_style import DURATION_S
from _java_style import ROOT
from _java_style import Sample
from _java_style import build_client
from _java_style import cpus
from _java_style import java_style
from _java_style import pin
from _java_style import seed_bench_store
from _java_style import serve_port
from _java_style import span
from _java_style import table_line

#: Concurrencies compared (the Java-style login rows of the main table).
CONCURRENCIES = (1, 10, 100)
WARM_UP_S = 0.3
#: The ratio of CPU per login ``make run`` may cost over the bench's compiled row.
TARGET = 1.10

#: Starts the bench server ("this tree"): its process and port.
StartServer = Callable[[], tuple[subprocess.Popen[str], int]]


def start_make_run_serve(cwd: Path) -> tuple[subprocess.Popen[str], int]:
    """``kafka-scram serve --config config/server.properties`` as ``make run`` runs it
    (no PYTHONPATH: the installed package), in ``cwd``, on a free port."""
    # The shipped configuration names .kafka-scram/credentials.db under the
    # working directory; the bench user goes in before serve starts.
    seed_bench_store(cwd / ".kafka-scram" / "credentials.db")
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KAFKA_SCRAM_PURE_PYTHON")
    }
    proc = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "kafka-scram"),
            "serve",
            "--config",
            str(ROOT / "config" / "server.properties"),
            "--override",
            "listeners=SASL_PLAINTEXT://127.0.0.1:0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=cwd,
        env=env,
    )
    return proc, serve_port(proc)


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    proc.wait(30)


def make_run_section(rounds: int, start_this_tree: StartServer) -> None:
    """Both servers at each concurrency, every round; then the ratios."""
    exe = build_client()
    server_cpu, _ = cpus()
    print(
        "\nmake run's serve (the venv's kafka-scram, config/server.properties: SQLite store,"
        "\n  bootstrap user, INFO log) beside the bench server (in-memory store), both pinned to"
        f"\n  CPU {server_cpu}; Java-style logins, {rounds} alternating rounds of "
        f"{DURATION_S:.0f} s windows, fresh processes each round."
    )
    names = ("this tree", "make run")
    results: dict[tuple[str, int], list[Sample]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-make-run-") as tmp:
        for i in range(rounds):
            servers = {"this tree": start_this_tree()}
            try:
                servers["make run"] = start_make_run_serve(Path(tmp))
                for proc, port in servers.values():
                    pin(proc.pid, {server_cpu})
                    java_style(exe, proc.pid, port, 10, "login", seconds=WARM_UP_S)
                for c in CONCURRENCIES:
                    for name in names[:: 1 if i % 2 == 0 else -1]:
                        proc, port = servers[name]
                        sample = java_style(exe, proc.pid, port, c, "login", DURATION_S)
                        results.setdefault((name, c), []).append(sample)
            finally:
                for proc, _ in servers.values():
                    _stop(proc)
    for c in CONCURRENCIES:
        for name in names:
            print(table_line(f"login     c={c:<4d} {name:9s}", results[name, c]))
    for c in CONCURRENCIES:
        pairs = list(zip(results["make run", c], results["this tree", c], strict=True))
        rate = span([a.rate / b.rate for a, b in pairs], ".2f")
        cpu = span([a.server_us / b.server_us for a, b in pairs], ".2f")
        print(
            f"login     c={c:<4d} make run / this tree: logins/s {rate}, "
            f"server CPU per login {cpu} (target <= {TARGET:.2f})"
        )
