"""Kafka's own perf tools as ``bench_frontdoor.py`` runs them, and their output read.

``org.apache.kafka.tools.ProducerPerformance`` (``kafka-producer-perf-test``)
and ``org.apache.kafka.tools.ConsumerPerformance``
(``kafka-consumer-perf-test``), from the kafka-tools jar among the broker's
jars that ``make brokers`` caches. The parsers are pure (text in, figures
out), so ``tests/bench/test_kafka_perf.py`` checks them on the tools' real
lines.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import fields
from pathlib import Path
from typing import Any

PRODUCER_CLASS = "org.apache.kafka.tools.ProducerPerformance"
CONSUMER_CLASS = "org.apache.kafka.tools.ConsumerPerformance"
# What bin/kafka-producer-perf-test.sh and kafka-consumer-perf-test.sh set
# (KAFKA_HEAP_OPTS="-Xmx512M"); the tools' INFO lines go.
JVM_FLAGS = ("-Xmx512m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")
TASKSET = shutil.which("taskset") or "taskset"
# A run that takes longer than this is stuck, whatever the machine's load.
TIMEOUT_S = 900.0

# ProducerPerformance.Stats.printTotal: the whole run, then (with
# --warmup-records) the same figures without the warm-up. Percentiles are
# whole milliseconds: the tool records each latency as an int of
# System.currentTimeMillis() differences. The groups are ProducerRun's fields.
_PRODUCER_TOTAL = re.compile(
    r"^(?P<records>\d+) (?P<steady>steady state )?records sent, "
    r"(?P<rate>[\d.]+) records/sec \((?P<mb_s>[\d.]+) MB/sec\), "
    r"(?P<avg_ms>[\d.]+) ms avg latency, (?P<max_ms>[\d.]+) ms max latency, "
    r"(?P<p50_ms>\d+) ms 50th, (?P<p95_ms>\d+) ms 95th, (?P<p99_ms>\d+) ms 99th, "
    r"(?P<p999_ms>\d+) ms 99\.9th\.$"
)
# ConsumerPerformance's header names the columns of its one line of figures:
# ConsumerRun's fields by column.
_CONSUMER_HEADER = "start.time"
_CONSUMER_COLUMNS = {
    "mb": "data.consumed.in.MB",
    "mb_s": "MB.sec",
    "records": "data.consumed.in.nMsg",
    "rate": "nMsg.sec",
    "rebalance_ms": "rebalance.time.ms",
    "fetch_ms": "fetch.time.ms",
    "fetch_mb_s": "fetch.MB.sec",
    "fetch_rate": "fetch.nMsg.sec",
}


@dataclass(frozen=True)
class ProducerRun:
    """ProducerPerformance's summary: steady state when it printed one."""

    records: int
    rate: float  # records/s
    mb_s: float  # MB/s as the tool counts them (2**20 bytes)
    avg_ms: float
    max_ms: float
    p50_ms: int
    p95_ms: int
    p99_ms: int
    p999_ms: int
    steady: bool


@dataclass(frozen=True)
class ConsumerRun:
    """ConsumerPerformance's figures. ``fetch_*`` leave out the group join
    (``rebalance.time.ms``), which the overall ones include."""

    mb: float
    mb_s: float
    records: int
    rate: float
    rebalance_ms: float
    fetch_ms: float
    fetch_mb_s: float
    fetch_rate: float


def _numbers(cls: type[Any], text: Mapping[str, str]) -> dict[str, Any]:
    """``cls``'s numeric fields from their text (ValueError, KeyError if missing)."""
    kinds = {"int": int, "float": float}
    return {f.name: kinds[str(f.type)](text[f.name]) for f in fields(cls) if f.type in kinds}


def parse_producer(text: str) -> ProducerRun:
    """The last summary line of ProducerPerformance's output, the steady-state one
    if any. ValueError when there is none (the run failed)."""
    found: ProducerRun | None = None
    for line in text.splitlines():
        match = _PRODUCER_TOTAL.match(line.strip())
        if match is not None and (found is None or not found.steady):
            steady = match["steady"] is not None
            found = ProducerRun(**_numbers(ProducerRun, match.groupdict()), steady=steady)
    if found is None:
        raise ValueError(f"no ProducerPerformance summary in: {text[-2000:]!r}")
    return found


def parse_consumer(text: str) -> ConsumerRun:
    """The line under ConsumerPerformance's header ("start.time, end.time, ...").
    ValueError when there is none or it is short."""
    lines = [line.strip() for line in text.splitlines()]
    for i, line in enumerate(lines[:-1]):
        if line.startswith(_CONSUMER_HEADER):
            names = [n.strip() for n in line.split(",")]
            values = [v.strip() for v in lines[i + 1].split(",")]
            row = dict(zip(names, values, strict=False))
            with contextlib.suppress(KeyError, ValueError):
                fields_text = {f: row[column] for f, column in _CONSUMER_COLUMNS.items()}
                if len(values) == len(names):
                    return ConsumerRun(**_numbers(ConsumerRun, fields_text))
            break
    raise ValueError(f"no ConsumerPerformance figures in: {text[-2000:]!r}")


def client_config(path: Path, user: str, password: str, mechanism: str) -> Path:
    """A --command-config file: SCRAM over SASL_PLAINTEXT as ``user``."""
    module = "org.apache.kafka.common.security.scram.ScramLoginModule"
    path.write_text(
        "security.protocol=SASL_PLAINTEXT\n"
        f"sasl.mechanism={mechanism}\n"
        f'sasl.jaas.config={module} required username="{user}" password="{password}";\n'
    )
    return path


def tool_command(classpath: str, cpus: str, main_class: str, *args: str) -> list[str]:
    """One of the tools, confined to ``cpus`` (taskset's list form) from its first thread."""
    return [
        TASKSET,
        "-c",
        cpus,
        shutil.which("java") or "java",
        *JVM_FLAGS,
        "-cp",
        classpath,
        main_class,
        *args,
    ]


def producer_args(
    bootstrap: str, topic: str, records: int, size: int, throughput: int, config: Path
) -> list[str]:
    """ProducerPerformance's arguments: the producer's own defaults (acks=all,
    linger.ms=5), a tenth of the records as warm-up, left out of the figures."""
    return [
        "--bootstrap-server", bootstrap,
        "--topic", topic,
        "--num-records", str(records),
        "--record-size", str(size),
        "--throughput", str(throughput),
        "--warmup-records", str(records // 10),
        "--command-config", str(config),
    ]  # fmt: skip


def consumer_args(bootstrap: str, topic: str, records: int, group: str, config: Path) -> list[str]:
    """ConsumerPerformance's arguments: ``records`` from the start of ``topic``."""
    return [
        "--bootstrap-server", bootstrap,
        "--topic", topic,
        "--num-records", str(records),
        "--group", group,
        "--timeout", "60000",
        "--command-config", str(config),
    ]  # fmt: skip


def run_tool(command: list[str]) -> str:
    """Run to the end; its stdout. RuntimeError with its stderr's tail if it failed."""
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    if result.returncode != 0:
        raise RuntimeError(
            f"{command[command.index('-cp') + 2]} exited with {result.returncode}: "
            f"{result.stderr[-2000:]}"
        )
    return result.stdout
