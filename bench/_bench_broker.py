"""Apache Kafka's own broker beside ``kafka-scram serve`` in ``bench_endpoint.py``.

The newest Kafka 4.x in KRaft combined mode (broker and controller in one
JVM), from the jars ``make brokers`` caches, started by the tests' launcher
(``tests/support/kafka_broker.py``) with the JVM flags of Kafka's own start script and
the JVM's full JIT: the tests stop at C1 (``-XX:TieredStopAtLevel=1``) to
start faster, which a measured broker must not. The JVM starts already
confined to the server's CPU, so it sizes its compiler and collector threads
for the one core it has (as in a one-CPU container), rather than spinning for
a second core it cannot use. The bench user is created through the broker
itself (KIP-554) with the same mechanism and iterations as serve's. Then
Java-style logins run unrecorded for ``WARM_UP_S``, so that C2 has compiled
the login path before any window is measured; the warm-up prints its own
rates, which show it level off.

The broker is started once for all rounds: its start and warm-up take about
40 s, which fresh processes every round would repeat seven times.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from _java_style import ALL_CPUS
from _java_style import ITERATIONS
from _java_style import PASSWORD
from _java_style import REAUTH_INTERVAL_MS
from _java_style import ROOT
from _java_style import USER
from _java_style import Target
from _java_style import cpu_seconds
from _java_style import java_style
from _java_style import pin

if str(ROOT) not in sys.path:  # tests/ and tools/ live at the repository's root
    sys.path.insert(0, str(ROOT))

from tools.fetch_kafka_broker import KAFKA_VERSIONS
from tools.fetch_kafka_broker import is_fetched
from tools.fetch_kafka_broker import libs_dir

if TYPE_CHECKING:
    from tests.support.kafka_broker import KafkaBroker

VERSION = KAFKA_VERSIONS["kraft"]
# HotSpot's C2 compiles a method after about 10,000 calls plus back-edges; a
# login calls the SCRAM and network code a few times, so the rate at
# concurrency 10 levels off within 10-15 s on a quiet machine. 25 s leaves a
# margin; the logins then go on while the JIT's compiler threads still work.
WARM_UP_S = 25.0
# Of the warm-up, what re-authenticates (paced, on the reauth listener) first;
# the rest logs in, in windows of LOGIN_WARM_UP_WINDOW_S, each printed.
REAUTH_WARM_UP_S = 5.0
LOGIN_WARM_UP_WINDOW_S = 5.0
# Warm once the JIT's compiler threads used under this share of a core in
# each of the last QUIET_WINDOWS windows (a CPU-starved compiler can lag the
# logins by tens of seconds, and its work would count in the broker's CPU per
# login; one quiet window can be a lull between two compilations) ...
JIT_QUIET = 0.02
QUIET_WINDOWS = 2
# ... or after this long in all, warm or not (the bench then says so).
WARM_UP_MAX_S = 120.0
# Idle CPU is sampled over this long once warm.
IDLE_S = 2.0
# What bin/kafka-server-start.sh passes: KAFKA_HEAP_OPTS, then
# KAFKA_JVM_PERFORMANCE_OPTS from bin/kafka-run-class.sh (G1 named explicitly,
# which a JVM that sees one CPU would otherwise swap for the serial collector).
# They come after the launcher's own -Xms/-Xmx, and the last one wins.
JVM_FLAGS = (
    "-Xms1g",
    "-Xmx1g",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
)


def compiler_cpu_seconds(pid: int) -> float:
    """CPU time of the JVM's JIT compiler threads ("C1 CompilerThre", "C2 CompilerThre")."""
    ticks = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/stat") as f:
                stat = f.read()
        except OSError:  # a thread that ended meanwhile
            continue
        name, _, rest = stat.partition("(")[2].rpartition(")")
        if "CompilerThre" in name:
            fields = rest.split()
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def warm_up(exe: Path, broker: Target, seconds: float) -> tuple[list[str], bool]:
    """Unrecorded paced re-authentications, then logins for at least the rest of
    ``seconds`` and until the JIT is quiet; each login window's figures, and
    whether the JIT went quiet."""
    reauth = min(REAUTH_WARM_UP_S, seconds / 5)
    if reauth > 0:
        java_style(exe, broker.pid, broker.reauth_port, 1000, "reauth", reauth, REAUTH_INTERVAL_MS)
    windows: list[str] = []
    spent, quiet = reauth, 0
    while spent < WARM_UP_MAX_S and (spent < seconds or quiet < QUIET_WINDOWS):
        window = min(LOGIN_WARM_UP_WINDOW_S, max(seconds - spent, 1.0))
        if spent >= seconds:  # waiting for the JIT: whole windows, for tick resolution
            window = LOGIN_WARM_UP_WINDOW_S
        compiling = compiler_cpu_seconds(broker.pid)
        sample = java_style(exe, broker.pid, broker.port, 10, "login", window)
        share = (compiler_cpu_seconds(broker.pid) - compiling) / window
        quiet = quiet + 1 if share < JIT_QUIET else 0
        windows.append(f"{sample.rate:,.0f}/s ({share:.0%} JIT)")
        spent += window
    return windows, quiet >= QUIET_WINDOWS


@contextlib.contextmanager
def started(exe: Path, cpu: int, warm_up_s: float) -> Iterator[Target]:
    """A broker with the bench user, pinned to ``cpu`` and warmed up; stopped after."""
    # Imported here: the launcher is a pytest plugin module, and --no-broker needs none of it.
    from tests.support.kafka_broker import KafkaBroker

    if not is_fetched(VERSION):
        sys.exit(
            f"bench_endpoint.py: error: Kafka {VERSION}'s jars are not in {libs_dir(VERSION)}; "
            "run `make brokers`, or pass --no-broker"
        )
    with tempfile.TemporaryDirectory(prefix="kafka-scram-bench-") as tmp:
        broker = KafkaBroker("kraft", Path(tmp), jvm_flags=JVM_FLAGS)
        try:
            try:
                target = _prepare(broker, exe, cpu, warm_up_s)
            except Exception:
                print(f"broker log, last lines:\n{broker.log_tail(30)}", file=sys.stderr)
                raise
            yield target
        finally:
            broker.stop()


def _prepare(broker: KafkaBroker, exe: Path, cpu: int, warm_up_s: float) -> Target:
    """Start, add the bench user, pin, warm up, and say how that went."""
    from sasl_scram import SCRAM_SHA_256

    begun = time.monotonic()
    # The JVM inherits this thread's CPU set, and takes its processor count from it.
    own = os.sched_getaffinity(0) if ALL_CPUS else set()
    try:
        if own:
            os.sched_setaffinity(0, {cpu})
        broker.start()
    finally:
        if own:
            os.sched_setaffinity(0, own)
    broker.add_user(USER, PASSWORD, [SCRAM_SHA_256], ITERATIONS)
    start_s = time.monotonic() - begun
    assert broker.pid is not None
    pin(broker.pid, {cpu})  # already there; a no-op unless affinity was refused
    target = Target("broker", broker.pid, broker.port, broker.reauth_port)
    windows, quiet = warm_up(exe, target, warm_up_s)
    before = cpu_seconds(broker.pid)
    time.sleep(IDLE_S)
    idle = (cpu_seconds(broker.pid) - before) / IDLE_S
    print(
        f"  broker: Kafka {VERSION} up in {start_s:.0f} s; warm-up logins at concurrency 10, "
        f"per window of up to {LOGIN_WARM_UP_WINDOW_S:.0f} s (the JIT compilers' share of "
        f"the core): {', '.join(windows)}"
        + ("" if quiet else f"; the JIT still compiling after {WARM_UP_MAX_S:.0f} s")
        + f"; idle, it then used {idle * 1000:.0f} ms of CPU per second "
        "(counted in its CPU per login)",
        flush=True,
    )
    return dataclasses.replace(target, idle_cpu=idle)
