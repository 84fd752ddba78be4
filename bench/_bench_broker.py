"""Apache Kafka's own broker beside ``kafka-scram serve`` in ``bench_endpoint.py``.

The newest Kafka 4.x in KRaft combined mode (broker and controller in one
JVM), from the jars ``make brokers`` caches, started by the tests' launcher
(``tests/kafka_broker.py``) with the JVM flags of Kafka's own start script and
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

from _java_style import (
    ALL_CPUS,
    ITERATIONS,
    PASSWORD,
    REAUTH_INTERVAL_MS,
    ROOT,
    USER,
    Target,
    cpu_seconds,
    java_style,
    pin,
)

if str(ROOT) not in sys.path:  # tests/ and tools/ live at the repository's root
    sys.path.insert(0, str(ROOT))

from tools.fetch_kafka_broker import KAFKA_VERSIONS, is_fetched, libs_dir

if TYPE_CHECKING:
    from tests.kafka_broker import KafkaBroker

VERSION = KAFKA_VERSIONS["kraft"]
# HotSpot's C2 compiles a method after about 10,000 calls plus back-edges; a
# login calls the SCRAM and network code a few times, and the rate at
# concurrency 10 levels off within 10-15 s here. 25 s leaves a margin.
WARM_UP_S = 25.0
# Of the warm-up, the share spent on logins (in windows of LOGIN_WARM_UP_WINDOW_S,
# each printed); the rest re-authenticates, paced, on the reauth listener.
LOGIN_SHARE = 0.8
LOGIN_WARM_UP_WINDOW_S = 5.0
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


def warm_up(exe: Path, broker: Target, seconds: float) -> list[float]:
    """Unrecorded logins, then paced re-authentications; the logins/s of each window."""
    rates = []
    left = seconds * LOGIN_SHARE
    while left > 0:
        window = min(LOGIN_WARM_UP_WINDOW_S, left)
        rates.append(java_style(exe, broker.pid, broker.port, 10, "login", window).rate)
        left -= window
    reauth = seconds * (1 - LOGIN_SHARE)
    if reauth > 0:
        java_style(exe, broker.pid, broker.reauth_port, 1000, "reauth", reauth, REAUTH_INTERVAL_MS)
    return rates


@contextlib.contextmanager
def started(exe: Path, cpu: int, warm_up_s: float) -> Iterator[Target]:
    """A broker with the bench user, pinned to ``cpu`` and warmed up; stopped after."""
    # Imported here: the launcher is a pytest plugin module, and --no-broker needs none of it.
    from tests.kafka_broker import KafkaBroker

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
    rates = warm_up(exe, target, warm_up_s)
    before = cpu_seconds(broker.pid)
    time.sleep(IDLE_S)
    idle = (cpu_seconds(broker.pid) - before) / IDLE_S
    print(
        f"  broker: Kafka {VERSION} up in {start_s:.0f} s; warm-up logins/s at concurrency 10, "
        f"per {LOGIN_WARM_UP_WINDOW_S:.0f} s window: {', '.join(f'{r:,.0f}' for r in rates)}; "
        f"idle, it then used {idle * 1000:.0f} ms of CPU per second (counted in its CPU per login)",
        flush=True,
    )
    return dataclasses.replace(target, idle_cpu=idle)
