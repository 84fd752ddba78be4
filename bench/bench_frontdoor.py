"""``make bench``, part 4: the front door against Kafka's own perf tools.

Kafka's ``ProducerPerformance`` and ``ConsumerPerformance`` (the kafka-tools
jar of the broker's version), 1 KB records, side by side in one run:

* direct: to a real broker (Kafka 4.x, KRaft, its SASL_PLAINTEXT listener,
  SCRAM-SHA-256), as the bench user the broker holds;
* through ``kafka-scram serve`` in front-door mode with ``scram.workers`` = 1
  and 2: the bench user is only in serve's SQLite store, and serve logs in to
  the broker with the broker's admin (the ``upstream.`` login).

Every process of every mode (broker, serve and its workers, the tools' JVMs)
runs under ``taskset`` on the same CPUs (``--cpus``, by default every CPU this
process may use), so the front door has no core the direct runs lack: its
cost shows as throughput lost. The modes alternate, their order too, over
``--rounds`` rounds; each figure is the median [min-max] over the rounds.

Per mode and round: a producer at full speed (records/s, MB/s), a consumer
reading those records back, a paced producer (``PACED_RATE`` records/s, where
latency is the round trip and not a queue) for the added p50 and p99, and two
producers at once (two connections: the kernel spreads them over the
workers, ``SO_REUSEPORT``). Serve's CPU (parent and workers, utime + stime
from ``/proc``) per MB of record payload forwarded; the broker's beside it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
for folder in (ROOT, BENCH):  # tests/ and tools/ at the root; the bench's helpers here
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import _kafka_perf  # noqa: E402
from _java_style import ALL_CPUS  # noqa: E402
from _java_style import ITERATIONS  # noqa: E402
from _java_style import PASSWORD  # noqa: E402
from _java_style import USER  # noqa: E402
from _java_style import cpu_seconds  # noqa: E402
from _java_style import seed_bench_store  # noqa: E402
from _java_style import serve_port  # noqa: E402
from _java_style import span  # noqa: E402

RECORD_SIZE = 1024
RECORDS = 200_000
# The paced run: slow enough that the producer never queues, so its latency
# is one Produce round trip (plus linger.ms); long enough for a p99.
# 500 records/s is a tenth of what Kafka's producer sends on one core of a
# quiet machine; a busy one needs less (--paced-rate).
PACED_RATE = 500
PACED_S = 10
MECHANISM = "SCRAM-SHA-256"
# Targets printed beside the figures.
TARGET_RATIO = 0.9
TARGET_ADDED_P50_MS = 0.5
TARGET_CPU_MS_PER_MB = 10.0
MB = 1 << 20  # as the tools count MB/sec
MODES = ("direct", "front door, 1 worker", "front door, 2 workers")


@dataclass
class Figures:
    """One mode's figures, a list entry per round."""

    produce: list[_kafka_perf.ProducerRun] = field(default_factory=list)
    consume: list[_kafka_perf.ConsumerRun] = field(default_factory=list)
    paced: list[_kafka_perf.ProducerRun] = field(default_factory=list)
    two_rate: list[float] = field(default_factory=list)  # two producers, records/s summed
    serve_ms_per_mb: list[float] = field(default_factory=list)  # all runs of the round
    broker_ms_per_mb: list[float] = field(default_factory=list)


@dataclass
class Bench:
    """What every run needs: the broker, the tools' classpath and configs, the CPUs."""

    broker_bootstrap: str
    broker_pid: int
    classpath: str
    cpus: str
    direct_config: Path
    edge_config: Path
    records: int
    paced_rate: int
    tmp: Path
    serial: list[int] = field(default_factory=lambda: [0])

    def name(self, prefix: str) -> str:
        self.serial[0] += 1
        return f"{prefix}-{os.getpid()}-{self.serial[0]}"


def process_cpu(pids: list[int]) -> float:
    """utime + stime of ``pids`` so far, in seconds."""
    return sum(map(cpu_seconds, pids))


def children(pid: int) -> list[int]:
    """``pid``'s child processes (serve's workers)."""
    with contextlib.suppress(OSError):
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
        return [int(p) for p in text.split()]
    return []


@contextlib.contextmanager
def started_serve(bench: Bench, workers: int) -> Iterator[tuple[str, list[int]]]:
    """``kafka-scram serve`` in front of the broker: its bootstrap and pids."""
    from tests.support.kafka_broker import ADMIN_PASSWORD
    from tests.support.kafka_broker import ADMIN_USER
    from tests.support.zookeeper_server import free_port
    from tests.support.zookeeper_server import free_port_base

    db = bench.tmp / "edge.db"
    seed_bench_store(db)
    port = free_port()
    jaas = (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{ADMIN_USER}" password="{ADMIN_PASSWORD}";'
    )
    config = bench.tmp / f"serve-{workers}.properties"
    config.write_text(
        f"listeners=SASL_PLAINTEXT://127.0.0.1:{port}\n"
        f"scram.credential.store.path={db}\n"
        f"scram.workers={workers}\n"
        f"upstream.bootstrap.servers={bench.broker_bootstrap}\n"
        "upstream.security.protocol=SASL_PLAINTEXT\n"
        f"upstream.sasl.mechanism={MECHANISM}\n"
        f"upstream.sasl.jaas.config={jaas}\n"
        f"upstream.node.port.base={free_port_base()}\n"
    )
    exe = Path(sys.executable).parent / "kafka-scram"
    with (bench.tmp / f"serve-{workers}.log").open("a") as log:
        proc = subprocess.Popen(
            [_kafka_perf.TASKSET, "-c", bench.cpus, str(exe), "serve", "--config", str(config)],
            stdout=subprocess.PIPE,
            stderr=log,
            stdin=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    try:
        serve_port(proc)
        yield f"127.0.0.1:{port}", [proc.pid, *children(proc.pid)]
    finally:
        proc.terminate()
        proc.wait(30)
        if proc.stdout is not None:
            proc.stdout.close()


def produce(bench: Bench, bootstrap: str, config: Path, topic: str, records: int, rate: int) -> str:
    return _kafka_perf.run_tool(
        _kafka_perf.tool_command(
            bench.classpath,
            bench.cpus,
            _kafka_perf.PRODUCER_CLASS,
            *_kafka_perf.producer_args(bootstrap, topic, records, RECORD_SIZE, rate, config),
        )
    )


def measure_mode(bench: Bench, bootstrap: str, config: Path, pids: list[int], out: Figures) -> None:
    """One round of one mode: full speed, read back, paced, two at once."""
    topic = bench.name("fd-bench")
    cpu_pids = [bench.broker_pid, *pids]
    before = [cpu_seconds(p) for p in cpu_pids]
    out.produce.append(
        _kafka_perf.parse_producer(produce(bench, bootstrap, config, topic, bench.records, -1))
    )
    consumer = _kafka_perf.consumer_args(
        bootstrap, topic, bench.records, bench.name("fd-bench-group"), config
    )
    command = _kafka_perf.tool_command(
        bench.classpath, bench.cpus, _kafka_perf.CONSUMER_CLASS, *consumer
    )
    out.consume.append(_kafka_perf.parse_consumer(_kafka_perf.run_tool(command)))
    after = [cpu_seconds(p) for p in cpu_pids]
    # Produced and fetched: each record's payload crossed twice.
    mb = 2 * bench.records * RECORD_SIZE / MB
    out.broker_ms_per_mb.append((after[0] - before[0]) * 1000 / mb)
    if pids:
        out.serve_ms_per_mb.append(
            sum(a - b for a, b in zip(after[1:], before[1:], strict=True)) * 1000 / mb
        )
    paced_records = bench.paced_rate * PACED_S
    paced = produce(
        bench, bootstrap, config, bench.name("fd-paced"), paced_records, bench.paced_rate
    )
    out.paced.append(_kafka_perf.parse_producer(paced))
    half = bench.records // 2
    with ThreadPoolExecutor(2) as pool:
        runs = list(
            pool.map(
                lambda t: produce(bench, bootstrap, config, t, half, -1),
                [bench.name("fd-two"), bench.name("fd-two")],
            )
        )
    # Each tool's own steady-state rate, summed: both run at once for most of
    # their time (the wall clock would add a JVM start to one of them).
    out.two_rate.append(sum(_kafka_perf.parse_producer(r).rate for r in runs))


def run_round(bench: Bench, order: tuple[str, ...], results: dict[str, Figures]) -> None:
    for mode in order:
        figures = results.setdefault(mode, Figures())
        if mode == "direct":
            measure_mode(bench, bench.broker_bootstrap, bench.direct_config, [], figures)
        else:
            workers = 1 if "1 worker" in mode else 2
            with started_serve(bench, workers) as (bootstrap, pids):
                measure_mode(bench, bootstrap, bench.edge_config, pids, figures)
        print(f"  {mode}: done", flush=True)


def _per_round(a: list[float], b: list[float], op: Callable[[float, float], float]) -> list[float]:
    return [op(x, y) for x, y in zip(a, b, strict=True)]


def mode_lines(mode: str, f: Figures, paced_rate: int) -> list[str]:
    """One mode's own figures."""
    lines = [
        f"{mode}:",
        f"  producer      {span([r.rate for r in f.produce])} records/s, "
        f"{span([r.mb_s for r in f.produce], '.1f')} MB/s, "
        f"p50 {span([r.p50_ms for r in f.produce])} ms, "
        f"p99 {span([r.p99_ms for r in f.produce])} ms (queued: full speed)",
        f"  consumer      {span([r.fetch_rate for r in f.consume])} records/s, "
        f"{span([r.fetch_mb_s for r in f.consume], '.1f')} MB/s (fetching; the group join "
        f"took {span([r.rebalance_ms for r in f.consume])} ms more)",
        f"  paced {paced_rate}/s   p50 {span([r.p50_ms for r in f.paced])} ms, "
        f"p99 {span([r.p99_ms for r in f.paced])} ms, "
        f"avg {span([r.avg_ms for r in f.paced], '.2f')} ms",
        f"  2 producers   {span(f.two_rate)} records/s in all",
        f"  CPU per MB of payload (produced + fetched): broker "
        f"{span(f.broker_ms_per_mb, '.1f')} ms",
    ]
    if f.serve_ms_per_mb:
        lines[-1] += (
            f", serve {span(f.serve_ms_per_mb, '.1f')} ms "
            f"(= {span(f.serve_ms_per_mb, '.1f')} s per GB; target <= "
            f"{TARGET_CPU_MS_PER_MB:.0f} ms per MB)"
        )
    return lines


def ratio_lines(mode: str, f: Figures, d: Figures) -> list[str]:
    """``mode`` against direct, round by round."""
    ratio = lambda a, b: a / b  # noqa: E731
    minus = lambda a, b: a - b  # noqa: E731
    target = f"(target >= {TARGET_RATIO})"
    return [
        f"{mode} / direct:",
        "  producer records/s "
        f"{span(_per_round([r.rate for r in f.produce], [r.rate for r in d.produce], ratio), '.2f')}"
        f", MB/s {span(_per_round([r.mb_s for r in f.produce], [r.mb_s for r in d.produce], ratio), '.2f')} {target}",
        "  consumer records/s "
        f"{span(_per_round([r.fetch_rate for r in f.consume], [r.fetch_rate for r in d.consume], ratio), '.2f')}"
        f", MB/s {span(_per_round([r.fetch_mb_s for r in f.consume], [r.fetch_mb_s for r in d.consume], ratio), '.2f')} {target}",
        f"  2 producers records/s {span(_per_round(f.two_rate, d.two_rate, ratio), '.2f')}",
        f"  added produce latency, paced: p50 "
        f"{span(_per_round([r.p50_ms for r in f.paced], [r.p50_ms for r in d.paced], minus), '+.0f')} ms "
        f"(target <= {TARGET_ADDED_P50_MS} ms), p99 "
        f"{span(_per_round([r.p99_ms for r in f.paced], [r.p99_ms for r in d.paced], minus), '+.0f')} ms, "
        f"avg {span(_per_round([r.avg_ms for r in f.paced], [r.avg_ms for r in d.paced], minus), '+.2f')} ms "
        "(the tool's percentiles are whole ms; its average resolves finer)",
    ]


def scaling_line(one: Figures, two: Figures) -> str:
    ratio = lambda a, b: a / b  # noqa: E731
    return (
        "front door 2 workers / 1 worker: producer records/s "
        f"{span(_per_round([r.rate for r in two.produce], [r.rate for r in one.produce], ratio), '.2f')}, "
        f"consumer {span(_per_round([r.fetch_rate for r in two.consume], [r.fetch_rate for r in one.consume], ratio), '.2f')}, "
        f"2 producers {span(_per_round(two.two_rate, one.two_rate, ratio), '.2f')} "
        "(target: > 1 with 2 producers, given a core to spare)"
    )


def report(results: dict[str, Figures], paced_rate: int) -> None:
    print()
    for mode in MODES:
        print("\n".join(mode_lines(mode, results[mode], paced_rate)))
    for mode in MODES[1:]:
        print("\n".join(ratio_lines(mode, results[mode], results["direct"])))
    print(scaling_line(results[MODES[1]], results[MODES[2]]))


@contextlib.contextmanager
def started_broker(tmp: Path, cpus: set[int]) -> Iterator[tuple[str, int]]:
    """The bench's broker (``_bench_broker``'s JVM flags: full JIT) on ``cpus``,
    with the bench user: its bootstrap and pid."""
    import _bench_broker

    from sasl_scram import SCRAM_SHA_256
    from tests.support.kafka_broker import KafkaBroker

    broker = KafkaBroker("kraft", tmp / "broker", jvm_flags=_bench_broker.JVM_FLAGS)
    own = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, cpus)  # the JVM inherits it, and counts its cores from it
        try:
            broker.start()
        finally:
            os.sched_setaffinity(0, own)
        broker.add_user(USER, PASSWORD, [SCRAM_SHA_256], ITERATIONS)
        assert broker.pid is not None
        yield broker.bootstrap, broker.pid
    except Exception:
        print(f"broker log, last lines:\n{broker.log_tail(30)}", file=sys.stderr)
        raise
    finally:
        broker.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--records", type=int, default=RECORDS, help="per full-speed run")
    parser.add_argument(
        "--paced-rate", type=int, default=PACED_RATE, help="records/s of the latency run"
    )
    parser.add_argument(
        "--cpus",
        default=",".join(map(str, sorted(ALL_CPUS))) or "0",
        help="taskset's CPU list for every process (default: all this process may use)",
    )
    args = parser.parse_args()
    from tools.fetch_kafka_broker import KAFKA_VERSIONS
    from tools.fetch_kafka_broker import is_fetched
    from tools.fetch_kafka_broker import libs_dir

    version = KAFKA_VERSIONS["kraft"]
    if not is_fetched(version):
        sys.exit(
            f"bench_frontdoor.py: error: Kafka {version}'s jars are not cached; run `make brokers`"
        )
    cpu_set = {int(c) for c in args.cpus.split(",")}
    print(
        f"\nThe front door against Kafka {version}'s ProducerPerformance and ConsumerPerformance,"
        f" {RECORD_SIZE} B records, {args.records:,} per full-speed run, paced "
        f"for {PACED_S} s at {args.paced_rate}/s; a tenth of each run is warm-up, left out."
        f"\n  every process (broker, serve and its workers, the tools) on CPUs {args.cpus};"
        f" {args.rounds} rounds, the modes in alternating order; median [min-max].",
        flush=True,
    )
    results: dict[str, Figures] = {}
    with tempfile.TemporaryDirectory(prefix="kafka-scram-fdbench-") as name:
        tmp = Path(name)
        with started_broker(tmp, cpu_set) as (bootstrap, pid):
            bench = Bench(
                broker_bootstrap=bootstrap,
                broker_pid=pid,
                classpath=str(libs_dir(version) / "*"),
                cpus=args.cpus,
                direct_config=_kafka_perf.client_config(
                    tmp / "direct.properties", USER, PASSWORD, MECHANISM
                ),
                edge_config=_kafka_perf.client_config(
                    tmp / "edge.properties", USER, PASSWORD, MECHANISM
                ),
                records=args.records,
                paced_rate=args.paced_rate,
                tmp=tmp,
            )
            for i in range(args.rounds):
                order = MODES if i % 2 == 0 else MODES[::-1]
                run_round(bench, order, results)
    report(results, args.paced_rate)


if __name__ == "__main__":
    main()
