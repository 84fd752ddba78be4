"""Kroxylicious as ``bench_frontdoor.py``'s side-by-side row runs it.

Kroxylicious's proxy runtime (``tools/fetch_kroxylicious.py`` caches its jars
from Maven Central) is started by ``KroxyliciousLauncher.java`` beside this
file, compiled with ``javac`` against those jars at bench time: it does what
the kroxylicious-app main does (parse the YAML configuration with
``ConfigParser``, start ``KafkaProxy``) without the app's command line.

The configuration is a pass-through: one virtual cluster in front of the
bench's broker, a port-per-broker gateway (``portIdentifiesNode``: the
bootstrap port, then one port per broker node id) in plain TCP on both
sides, no filters. Clients log in to the broker *through* it: Kroxylicious
forwards SaslHandshake and SaslAuthenticate as it forwards everything else
(its 0.12 default, no authentication offload), while ``serve`` terminates
SASL at its edge and logs in to the broker with its own ``upstream.`` login.
Beyond the bytes, Kroxylicious's own filters decode and re-encode
ApiVersions, Metadata, FindCoordinator and DescribeCluster (broker
addresses), and Produce v10+ and Fetch v16+ responses (KIP-951's
``NodeEndpoints``), which serve avoids by capping Produce at v9 and Fetch
at v15.

The pure parts (the configuration, the ratio lines) are checked by
``tests/bench/test_kroxylicious.py``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import select
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Protocol

LAUNCHER = Path(__file__).resolve().with_name("KroxyliciousLauncher.java")
MAIN_CLASS = "KroxyliciousLauncher"
# What the app's kroxylicious-start.sh passes outside a container (no heap
# size: the JVM's own default, a quarter of the RAM), with G1 named: a JVM
# that sees fewer than 2 CPUs would otherwise pick the serial collector.
# The logging goes through slf4j-simple at WARN, where the app's log4j2
# configuration has WARN for the root and INFO for its own start-up lines.
JVM_FLAGS = (
    "-XX:+UseG1GC",
    "-XX:+ExitOnOutOfMemoryError",
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
)
START_TIMEOUT_S = 60.0
# The targets printed beside the figures.
TARGET_RATE_RATIO = 0.95  # records/s through a proxy against direct
TARGET_ADDED_P50_MS = 0.5  # paced produce latency added by a proxy
TARGET_CPU_RATIO = 0.5  # serve's CPU per MB against Kroxylicious's, each direction


class ProducerFigures(Protocol):
    """What the row keeps of ProducerPerformance's summary (``_kafka_perf.ProducerRun``)."""

    @property
    def rate(self) -> float: ...
    @property
    def mb_s(self) -> float: ...
    @property
    def avg_ms(self) -> float: ...
    @property
    def p50_ms(self) -> int: ...
    @property
    def p99_ms(self) -> int: ...


@dataclass
class SideFigures:
    """One mode's figures in the side-by-side row, a list entry per round."""

    producer_rate: list[float] = field(default_factory=list)  # records/s, full speed
    producer_mb_s: list[float] = field(default_factory=list)
    consumer_rate: list[float] = field(default_factory=list)  # while fetching
    consumer_mb_s: list[float] = field(default_factory=list)
    paced_p50_ms: list[float] = field(default_factory=list)
    paced_p99_ms: list[float] = field(default_factory=list)
    paced_avg_ms: list[float] = field(default_factory=list)
    # The proxy's CPU (ms) per MB of payload over the producer run, and over
    # the consumer run; the broker's the same way.
    produce_ms_per_mb: list[float] = field(default_factory=list)
    fetch_ms_per_mb: list[float] = field(default_factory=list)
    broker_produce_ms_per_mb: list[float] = field(default_factory=list)
    broker_fetch_ms_per_mb: list[float] = field(default_factory=list)
    jit_share: list[float] = field(default_factory=list)  # a JVM's compiler threads, of its CPU
    idle_ms_per_s: float | None = None  # the proxy's CPU with no client

    def add_producer(self, run: ProducerFigures) -> None:
        self.producer_rate.append(run.rate)
        self.producer_mb_s.append(run.mb_s)

    def add_paced(self, run: ProducerFigures) -> None:
        self.paced_p50_ms.append(run.p50_ms)
        self.paced_p99_ms.append(run.p99_ms)
        self.paced_avg_ms.append(run.avg_ms)

    @property
    def both_ms_per_mb(self) -> list[float]:
        """Per MB forwarded either way: each round produced and fetched as many MB."""
        return [
            (p + f) / 2 for p, f in zip(self.produce_ms_per_mb, self.fetch_ms_per_mb, strict=True)
        ]


def render_config(upstream: str, host: str, bootstrap_port: int, node_ids: Sequence[int]) -> str:
    """Kroxylicious 0.12's configuration: one virtual cluster in front of
    ``upstream``, its bootstrap on ``host:bootstrap_port`` and broker N on
    ``bootstrap_port + 1 + N - min(node_ids)``, no filters.

    JSON, which is YAML too: ``ConfigParser`` reads it with Jackson's YAML
    factory, and a test can read it back without a YAML library.
    """
    first, last = min(node_ids), max(node_ids)
    config = {
        "virtualClusters": [
            {
                "name": "bench",
                "targetCluster": {"bootstrapServers": upstream},
                "gateways": [
                    {
                        "name": "plain",
                        "portIdentifiesNode": {
                            "bootstrapAddress": f"{host}:{bootstrap_port}",
                            "advertisedBrokerAddressPattern": host,
                            "nodeStartPort": bootstrap_port + 1,
                            "nodeIdRanges": [{"name": "brokers", "start": first, "end": last}],
                        },
                    }
                ],
                "logNetwork": False,
                "logFrames": False,
            }
        ]
    }
    return json.dumps(config, indent=2) + "\n"


def compile_launcher(libs: Path, out: Path) -> Path:
    """``KroxyliciousLauncher`` compiled into ``out`` against ``libs``; the folder."""
    javac = shutil.which("javac")
    if javac is None:
        raise SystemExit("bench_frontdoor.py: error: javac not found; install a JDK (make system)")
    out.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [javac, "-d", str(out), "-cp", str(libs / "*"), str(LAUNCHER)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"javac {LAUNCHER.name} failed:\n{result.stderr[-2000:]}")
    return out


def _wait_ready(proc: subprocess.Popen[str], log: Path) -> None:
    """Until the launcher prints ``ready`` (every port bound); RuntimeError with
    its log's tail if it exits or takes longer than ``START_TIMEOUT_S``."""
    assert proc.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT_S
    while (left := deadline - time.monotonic()) > 0:
        readable, _, _ = select.select([proc.stdout], [], [], left)
        if readable:
            line = proc.stdout.readline()
            if line.strip() == "ready":
                return
            if not line:
                break
    proc.kill()
    proc.wait()
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
    raise RuntimeError(f"Kroxylicious did not start:\n{tail}")


@contextlib.contextmanager
def started(
    libs: Path, tmp: Path, upstream: str, node_ids: Sequence[int], cpus: str, bootstrap_port: int
) -> Iterator[tuple[str, int]]:
    """Kroxylicious in front of ``upstream``, every thread on ``cpus`` from the
    start (the JVM sizes its Netty event loops and compiler threads from
    them): its bootstrap and pid."""
    classes = compile_launcher(libs, tmp / "kroxylicious-classes")
    config = tmp / "kroxylicious.yaml"
    config.write_text(render_config(upstream, "127.0.0.1", bootstrap_port, node_ids))
    log = tmp / "kroxylicious.log"
    java = shutil.which("java") or "java"
    command = [shutil.which("taskset") or "taskset", "-c", cpus, java, *JVM_FLAGS]
    command += ["-cp", f"{classes}{os.pathsep}{libs / '*'}", MAIN_CLASS, str(config)]
    with log.open("a") as stderr:
        proc = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=stderr, stdin=subprocess.DEVNULL, text=True
        )
    try:
        _wait_ready(proc, log)
        yield f"127.0.0.1:{bootstrap_port}", proc.pid
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def span(values: list[float], fmt: str = ",.0f") -> str:
    """The median, then the range, as ``_java_style.span`` prints them (this
    module is also imported as ``bench._kroxylicious``, where that one is not
    importable by its bare name)."""
    if not values:
        return "n/a"
    return f"{statistics.median(values):{fmt}} [{min(values):{fmt}}-{max(values):{fmt}}]"


def per_round(
    a: list[float], b: list[float], op: Callable[[float, float], float] = lambda x, y: x / y
) -> list[float]:
    return [op(x, y) for x, y in zip(a, b, strict=True)]


def mode_lines(mode: str, f: SideFigures, paced_rate: int) -> list[str]:
    """One mode's own figures."""
    lines = [
        f"{mode}:",
        f"  producer      {span(f.producer_rate)} records/s, {span(f.producer_mb_s, '.1f')} MB/s",
        f"  consumer      {span(f.consumer_rate)} records/s, {span(f.consumer_mb_s, '.1f')} MB/s"
        " (fetching)",
        f"  paced {paced_rate}/s   p50 {span(f.paced_p50_ms)} ms, p99 {span(f.paced_p99_ms)} ms, "
        f"avg {span(f.paced_avg_ms, '.2f')} ms",
        f"  broker's CPU per MB: produce {span(f.broker_produce_ms_per_mb, '.1f')} ms, "
        f"fetch {span(f.broker_fetch_ms_per_mb, '.1f')} ms",
    ]
    if f.produce_ms_per_mb:
        lines.append(
            f"  its CPU per MB: produce {span(f.produce_ms_per_mb, '.2f')} ms, "
            f"fetch {span(f.fetch_ms_per_mb, '.2f')} ms, "
            f"both ways {span(f.both_ms_per_mb, '.2f')} ms"
            + (f"; idle {f.idle_ms_per_s:.1f} ms per s" if f.idle_ms_per_s is not None else "")
        )
    if f.jit_share:
        lines.append(
            f"  its JIT compiler threads: {span([100 * s for s in f.jit_share], '.1f')} % of its"
            " CPU in the measured rounds"
        )
    return lines


def against_direct(mode: str, f: SideFigures, d: SideFigures) -> list[str]:
    """``mode`` against direct, round by round."""
    minus: Callable[[float, float], float] = lambda a, b: a - b  # noqa: E731
    return [
        f"{mode} / direct: producer records/s "
        f"{span(per_round(f.producer_rate, d.producer_rate), '.2f')}, consumer records/s "
        f"{span(per_round(f.consumer_rate, d.consumer_rate), '.2f')} "
        f"(target >= {TARGET_RATE_RATIO})",
        f"  added paced produce latency: p50 {span(per_round(f.paced_p50_ms, d.paced_p50_ms, minus), '+.0f')}"
        f" ms (target <= {TARGET_ADDED_P50_MS} ms), p99 "
        f"{span(per_round(f.paced_p99_ms, d.paced_p99_ms, minus), '+.0f')} ms, avg "
        f"{span(per_round(f.paced_avg_ms, d.paced_avg_ms, minus), '+.2f')} ms",
    ]


def ratio(x: float, y: float) -> float:
    """``x / y``, infinite where ``y`` is 0: the floor's CPU in a short round can
    be under one clock tick of ``/proc``'s accounting."""
    return x / y if y else math.inf


def cpu_ratio_line(name: str, a: SideFigures, b: SideFigures, note: str = "") -> str:
    """``a``'s CPU per MB against ``b``'s, round by round, each direction and both ways."""
    return (
        f"{name}, CPU per MB round by round: produce "
        f"{span(per_round(a.produce_ms_per_mb, b.produce_ms_per_mb, ratio), '.2f')}, fetch "
        f"{span(per_round(a.fetch_ms_per_mb, b.fetch_ms_per_mb, ratio), '.2f')}{note}, both ways "
        f"{span(per_round(a.both_ms_per_mb, b.both_ms_per_mb, ratio), '.2f')}"
    )


def report_lines(
    results: dict[str, SideFigures], modes: Sequence[str], paced_rate: int
) -> list[str]:
    """The row's figures: ``modes`` are direct, serve and Kroxylicious, in that
    order, then any floors (the relays), each set against both proxies."""
    direct, serve, krox = (results[m] for m in modes[:3])
    lines = [""]
    for mode in modes:
        lines += mode_lines(mode, results[mode], paced_rate)
    for mode in modes[1:]:
        lines += against_direct(mode, results[mode], direct)
    lines.append(
        cpu_ratio_line(
            f"{modes[1]} / {modes[2]}", serve, krox, f" (target <= {TARGET_CPU_RATIO} each)"
        )
    )
    for mode in modes[3:]:
        floor = results[mode]
        # A floor makes the calls and does nothing else: where it is above
        # the target, no proxy making these calls (in its language) meets it.
        note = f" (serve's <= {TARGET_CPU_RATIO} needs this below it)"
        lines.append(cpu_ratio_line(f"{mode} / {modes[2]}", floor, krox, note))
        lines.append(cpu_ratio_line(f"{modes[1]} / {mode}", serve, floor))
    return lines
