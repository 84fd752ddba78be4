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

Then the side-by-side row (``--only-kroxylicious`` runs it alone): direct,
serve with 1 worker, Kroxylicious (``_kroxylicious.py``: its runtime from
Maven Central, a pass-through with a port-per-broker gateway and no filters)
and two floors, byte relays (``_floor.py``) that make the same reads and
writes per request and parse nothing: one in C (``floor_relay.c``, no
user-space work to speak of), one in Python on uvloop (``floor_relay.py``,
the interpreter's and uvloop's share); the broker advertises each on a
listener of its own; all in front of the same broker; the proxies are
started once, and ``--kroxylicious-warm-up`` rounds of every mode, then
rounds of Kroxylicious alone until its JIT compiler threads are quiet, are
discarded. Per mode and round: the producer, the consumer and the paced
producer as above, and each proxy's CPU per MB over the producer run and
over the consumer run apart (produce and fetch), with serve / Kroxylicious,
and each floor / Kroxylicious and serve / floor, round by round.

Then the scaling row (``--only-scaling`` runs it alone): there the perf
tools' JVMs and the broker leave serve a small share of the CPU, so here
``_fetch_load.py`` (Python, raw sockets, in processes of its own) fetches
records written before, over ``--scaling-connections`` connections, with 1
and 2 workers, every process on all CPUs and then serve alone on one CPU
(the same CPU for both: per-core efficiency); MB/s, and the CPU of serve
(with each worker's share: how ``SO_REUSEPORT`` spread the connections), the
broker and the load generators.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
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

import _fetch_load  # noqa: E402
import _floor  # noqa: E402
import _kafka_perf  # noqa: E402
import _kroxylicious  # noqa: E402
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
MODES = (
    "direct",
    "front door, 1 worker",
    "front door, 2 workers",
    "front door, 1 worker, edge ACLs",
)
#: The mode whose front door authorizes (``authorizer.class.name``, 100 ACLs).
ACL_MODE = MODES[3]
#: With ``--baseline DIR``: the front door of another checkout, one worker.
BASELINE_MODE = "front door, 1 worker (baseline)"


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
    scaling_bytes: int = _fetch_load.PARTITION_MAX_BYTES
    scaling_connections: int = 8
    #: ``--baseline``: another checkout whose front door runs beside this one.
    baseline: Path | None = None
    #: The side-by-side row's floors: the ports the relays listen on (the
    #: broker advertises each on a ``RELAY<n>`` listener) and those listeners'.
    relay_ports: tuple[int, ...] = ()
    relay_upstreams: tuple[str, ...] = ()
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


def seed_edge_acls(db: Path) -> str:
    """100 ACLs in the store at ``db``, 10 of them PREFIXED: the bench user's
    on the bench's topics and groups (``fd-``), the rest other users'; the
    keys that turn edge authorization on."""
    from sasl_scram.authz import AccessControlEntry
    from sasl_scram.authz import AclBinding
    from sasl_scram.authz import AclOperation
    from sasl_scram.authz import AclPermissionType
    from sasl_scram.authz import PatternType
    from sasl_scram.authz import ResourcePattern
    from sasl_scram.authz import ResourceType
    from sasl_scram.store import open_acl_store

    def acl(
        kind: ResourceType, name: str, pattern: PatternType, user: str, op: AclOperation
    ) -> AclBinding:
        entry = AccessControlEntry(f"User:{user}", "*", op, AclPermissionType.ALLOW)
        return AclBinding(ResourcePattern(kind, name, pattern), entry)

    prefixed, literal = PatternType.PREFIXED, PatternType.LITERAL
    bindings = [
        acl(ResourceType.TOPIC, "fd-", prefixed, USER, AclOperation.ALL),
        acl(ResourceType.GROUP, "fd-", prefixed, USER, AclOperation.READ),
        *(acl(ResourceType.TOPIC, f"team-{i}.", prefixed, f"user-{i}", AclOperation.ALL)
          for i in range(8)),
        *(acl((ResourceType.TOPIC, ResourceType.GROUP)[i % 2], f"name-{i}", literal,
              f"user-{i % 10}", AclOperation.READ) for i in range(90)),
    ]  # fmt: skip
    store = open_acl_store(f"sqlite:{db}")
    try:
        store.create_acls(bindings)
    finally:
        store.close()
    return "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\n"


@contextlib.contextmanager
def started_serve(
    bench: Bench, workers: int, cpus: str | None = None, root: Path = ROOT, acls: bool = False
) -> Iterator[tuple[str, list[int]]]:
    """``kafka-scram serve`` in front of the broker: its bootstrap and pids
    (``root``: the checkout whose code runs, this one or a baseline's;
    ``acls``: with edge authorization and 100 ACLs)."""
    from tests.support.kafka_broker import ADMIN_PASSWORD
    from tests.support.kafka_broker import ADMIN_USER
    from tests.support.zookeeper_server import free_port
    from tests.support.zookeeper_server import free_port_base

    db = bench.tmp / ("edge-acls.db" if acls else "edge.db")
    seed_bench_store(db)
    authorizer = seed_edge_acls(db) if acls else ""
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
        # The bench's broker's super user: a cluster administrator, which serve
        # refuses as its upstream login unless told (docs/front-door.md).
        "upstream.allow.cluster.admin=true\n"
        f"{authorizer}"
    )
    exe = Path(sys.executable).parent / "kafka-scram"
    with (bench.tmp / f"serve-{workers}.log").open("a") as log:
        proc = subprocess.Popen(
            [
                _kafka_perf.TASKSET,
                "-c",
                cpus or bench.cpus,
                str(exe),
                "serve",
                "--config",
                str(config),
            ],
            stdout=subprocess.PIPE,
            stderr=log,
            stdin=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONPATH": str(root)},
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


def build_baseline(root: Path) -> None:
    """The baseline's compiled core, as ``make native`` builds this tree's: a
    baseline running pure Python would flatter this tree."""
    subprocess.run(
        [sys.executable, str(root / "tools" / "build_native.py"), "--require"], cwd=root, check=True
    )


def run_round(bench: Bench, order: tuple[str, ...], results: dict[str, Figures]) -> None:
    for mode in order:
        figures = results.setdefault(mode, Figures())
        if mode == "direct":
            measure_mode(bench, bench.broker_bootstrap, bench.direct_config, [], figures)
        else:
            workers = 1 if "1 worker" in mode else 2
            root = bench.baseline if mode == BASELINE_MODE and bench.baseline else ROOT
            acls = mode == ACL_MODE
            with started_serve(bench, workers, root=root, acls=acls) as (bootstrap, pids):
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


def baseline_lines(
    new: Figures, old: Figures, title: str = "this tree / baseline (front door, 1 worker):"
) -> list[str]:
    """This tree's front door against the baseline's (or, with ``title``, another
    pair of modes), round by round (one worker)."""
    ratio = lambda a, b: a / b  # noqa: E731
    produce = _per_round([r.rate for r in new.produce], [r.rate for r in old.produce], ratio)
    consume = _per_round(
        [r.fetch_rate for r in new.consume], [r.fetch_rate for r in old.consume], ratio
    )
    cpu = _per_round(new.serve_ms_per_mb, old.serve_ms_per_mb, ratio)
    return [
        title,
        f"  producer records/s {span(produce, '.2f')}, consumer records/s "
        f"{span(consume, '.2f')} (target >= 0.95)",
        f"  serve CPU per MB {span(cpu, '.2f')} (target <= 1.05)",
    ]


def report(results: dict[str, Figures], paced_rate: int) -> None:
    print()
    modes = [mode for mode in (*MODES, BASELINE_MODE) if mode in results]
    for mode in modes:
        print("\n".join(mode_lines(mode, results[mode], paced_rate)))
    for mode in modes[1:]:
        print("\n".join(ratio_lines(mode, results[mode], results["direct"])))
    print(scaling_line(results[MODES[1]], results[MODES[2]]))
    if BASELINE_MODE in results:
        print("\n".join(baseline_lines(results[MODES[1]], results[BASELINE_MODE])))
    title = "edge ACLs on / off (front door, 1 worker; 100 ACLs, 10 prefixed):"
    print("\n".join(baseline_lines(results[ACL_MODE], results[MODES[1]], title)))


# The side-by-side row (``--only-kroxylicious`` runs it alone): serve and
# Kroxylicious, each in front of the same broker, long-lived, in alternating
# rounds with direct; ``--kroxylicious-warm-up`` rounds of every mode, then
# Kroxylicious's until its JIT is quiet, are discarded, so that both JVMs
# (the broker's and Kroxylicious's) have compiled their hot paths before
# anything is measured. Each proxy's CPU is taken over the producer run
# and over the consumer run apart: per direction, per MB of record payload.
C_FLOOR, PYTHON_FLOOR = "C relay (floor)", "Python relay (floor)"
SIDE_MODES = ("direct", "serve, 1 worker", "Kroxylicious", C_FLOOR, PYTHON_FLOOR)
#: Each floor's relay (``_floor.py``), in the order of the broker's relay listeners.
FLOORS = {C_FLOOR: _floor.C, PYTHON_FLOOR: _floor.PYTHON}
SIDE_WARM_UP_ROUNDS = 1
# Then the JVM proxy alone, until its JIT compiler threads take under this
# share of its CPU over a round, for at most this many more rounds: C2 is
# still compiling Kroxylicious's hot paths after one round of 30,000 records
# on a busy machine (58 % of its CPU in the next round).
JIT_QUIET_SHARE = 0.05
SIDE_WARM_UP_MAX_EXTRA = 4
# The tests' KRaft broker is node 1 (tests/support/kafka_broker.py): the
# one node Kroxylicious's gateway needs a port for.
BROKER_NODE_ID = 1
# Long enough for a few clock ticks (10 ms each) of an idle process's CPU.
IDLE_S = 4.0


@dataclass(frozen=True)
class SideTarget:
    """Where one mode's clients connect, as whom, and whose CPU counts."""

    bootstrap: str
    config: Path
    pids: list[int]
    jvm_pid: int | None = None


def measure_directions(bench: Bench, target: SideTarget, out: _kroxylicious.SideFigures) -> None:
    """One round of one mode: full-speed producer, consumer, paced producer; the
    proxy's and the broker's CPU per MB over each of the first two."""
    from _bench_broker import compiler_cpu_seconds

    topic = bench.name("fd-side")
    mb = bench.records * RECORD_SIZE / MB
    pids = [bench.broker_pid, *target.pids]
    jit = compiler_cpu_seconds(target.jvm_pid) if target.jvm_pid else 0.0
    start = [cpu_seconds(p) for p in pids]
    run = produce(bench, target.bootstrap, target.config, topic, bench.records, -1)
    out.add_producer(_kafka_perf.parse_producer(run))
    produced = [cpu_seconds(p) for p in pids]
    consumer = _kafka_perf.consumer_args(
        target.bootstrap, topic, bench.records, bench.name("fd-side-group"), target.config
    )
    command = _kafka_perf.tool_command(
        bench.classpath, bench.cpus, _kafka_perf.CONSUMER_CLASS, *consumer
    )
    consumed = _kafka_perf.parse_consumer(_kafka_perf.run_tool(command))
    out.consumer_rate.append(consumed.fetch_rate)
    out.consumer_mb_s.append(consumed.fetch_mb_s)
    fetched = [cpu_seconds(p) for p in pids]
    out.broker_produce_ms_per_mb.append((produced[0] - start[0]) * 1000 / mb)
    out.broker_fetch_ms_per_mb.append((fetched[0] - produced[0]) * 1000 / mb)
    if target.pids:
        out.produce_ms_per_mb.append((sum(produced[1:]) - sum(start[1:])) * 1000 / mb)
        out.fetch_ms_per_mb.append((sum(fetched[1:]) - sum(produced[1:])) * 1000 / mb)
    if target.jvm_pid:
        used = sum(fetched[1:]) - sum(start[1:])
        out.jit_share.append((compiler_cpu_seconds(target.jvm_pid) - jit) / (used or 1.0))
    paced = bench.paced_rate * PACED_S
    run = produce(
        bench, target.bootstrap, target.config, bench.name("fd-side-paced"), paced, bench.paced_rate
    )
    out.add_paced(_kafka_perf.parse_producer(run))


def idle_ms_per_s(pids: list[int]) -> float:
    """CPU (ms) per second of ``pids`` with no client connected."""
    before = sum(map(cpu_seconds, pids))
    time.sleep(IDLE_S)
    return (sum(map(cpu_seconds, pids)) - before) * 1000 / IDLE_S


def side_warm_up(bench: Bench, targets: dict[str, SideTarget], rounds: int) -> None:
    """``rounds`` discarded rounds of every mode, then rounds of the JVM proxy
    alone until its JIT compiler threads use under ``JIT_QUIET_SHARE`` of its
    CPU in one (at most ``SIDE_WARM_UP_MAX_EXTRA``); each round's share printed."""
    jvm = next(mode for mode, target in targets.items() if target.jvm_pid)
    shares: list[float] = []
    for i in range(rounds):
        for mode in SIDE_MODES if i % 2 == 0 else SIDE_MODES[::-1]:
            out = _kroxylicious.SideFigures()
            measure_directions(bench, targets[mode], out)
            shares += out.jit_share
    extra = 0
    while extra < SIDE_WARM_UP_MAX_EXTRA and (not shares or shares[-1] >= JIT_QUIET_SHARE):
        out = _kroxylicious.SideFigures()
        measure_directions(bench, targets[jvm], out)
        shares += out.jit_share
        extra += 1
    quiet = bool(shares) and shares[-1] < JIT_QUIET_SHARE
    print(
        f"  warm-up: {rounds} round(s) of every mode, then {extra} of {jvm} alone; its JIT"
        f" compilers' share of its CPU per round: {', '.join(f'{s:.0%}' for s in shares)}"
        + ("" if quiet else f" (still compiling after {extra} extra rounds)")
        + f"; load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )


def side_rounds(
    bench: Bench, targets: dict[str, SideTarget], rounds: int, warm_up: int
) -> dict[str, _kroxylicious.SideFigures]:
    """The warm-up (discarded), each proxy's idle CPU, then ``rounds`` measured,
    the order alternating."""
    side_warm_up(bench, targets, warm_up)
    results = {mode: _kroxylicious.SideFigures() for mode in SIDE_MODES}
    for mode, target in targets.items():
        if target.pids:
            results[mode].idle_ms_per_s = idle_ms_per_s(target.pids)
    for i in range(rounds):
        order = SIDE_MODES if i % 2 == 0 else SIDE_MODES[::-1]
        for mode in order:
            measure_directions(bench, targets[mode], results[mode])
        print(
            f"  round {i + 1} ({', '.join(order)}): done, load average {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    return results


def kroxylicious_section(bench: Bench, rounds: int, warm_up: int) -> None:
    """serve and Kroxylicious side by side, in front of the same broker."""
    from tests.support.zookeeper_server import free_port_base
    from tools.fetch_kroxylicious import KROXYLICIOUS_VERSION
    from tools.fetch_kroxylicious import libs_dir

    print(
        f"\nSide by side: serve (1 worker), Kroxylicious {KROXYLICIOUS_VERSION} (pass-through,"
        f" port per broker, no filters) and two floors, byte relays in C and in Python"
        " (bench/floor_relay.c, .py),"
        f"\n  in front of the same broker, {bench.records:,} records of"
        f" {RECORD_SIZE} B per full-speed run, paced for {PACED_S} s at {bench.paced_rate}/s;"
        f"\n  the proxies started once; warm-up rounds discarded, then {rounds}, the"
        f" modes in alternating order; median [min-max]; load average"
        f" {os.getloadavg()[0]:.1f} at the start.",
        flush=True,
    )
    base = free_port_base(2)
    krox = _kroxylicious.started(
        libs_dir(), bench.tmp, bench.broker_bootstrap, [BROKER_NODE_ID], bench.cpus, base + 1
    )
    with contextlib.ExitStack() as stack:
        serve_bootstrap, serve_pids = stack.enter_context(started_serve(bench, 1))
        krox_bootstrap, pid = stack.enter_context(krox)
        relays = {
            mode: stack.enter_context(_floor.started(port, upstream, bench.cpus, bench.tmp, kind))
            for (mode, kind), port, upstream in zip(
                FLOORS.items(), bench.relay_ports, bench.relay_upstreams, strict=True
            )
        }
        targets = {
            "direct": SideTarget(bench.broker_bootstrap, bench.direct_config, []),
            "serve, 1 worker": SideTarget(serve_bootstrap, bench.edge_config, serve_pids),
            # The broker's own user: Kroxylicious and the relays pass the login through.
            "Kroxylicious": SideTarget(krox_bootstrap, bench.direct_config, [pid], pid),
            **{
                mode: SideTarget(relay.bootstrap, bench.direct_config, [relay.pid])
                for mode, relay in relays.items()
            },
        }
        results = side_rounds(bench, targets, rounds, warm_up)
    print("\n".join(_kroxylicious.report_lines(results, SIDE_MODES, bench.paced_rate)))
    for mode, relay in relays.items():
        print(_floor.counters_line(FLOORS[mode], relay.counters))
    print(f"  load average {os.getloadavg()[0]:.1f} at the end.")


# The scaling row: as much of the work on the front door as a real broker
# allows. Kafka's perf tools above leave serve a small share of the CPU (the
# broker and the JVMs take most), so 2 workers there measure the machine, not
# the front door. Here a light load generator (``_fetch_load.py``, Python
# threads, recv_into one buffer) fetches records written before, from offset
# 0, again and again: the broker sends them from the page cache with
# sendfile, and what is left is copying, which serve does twice per byte (in
# and out), the broker and the load generator once each.
SCALING_RECORDS = 20_000  # 20 MB: every Fetch gets a full 8 MiB partition share
SCALING_CONNECTIONS = 8  # over 2 workers by SO_REUSEPORT's hash: rarely all on one
SCALING_PROCESSES = 2
SCALING_WARM_S = 2.0
SCALING_S = 6.0


@dataclass
class ScalingRun:
    """One window of Fetch load through one serve."""

    mb_s: float  # Fetch responses received by the load generators
    serve_ms_per_mb: float
    serve_cores: float  # serve's CPU seconds per second, parent and workers
    broker_cores: float
    load_cores: float  # the load generators'
    worker_shares: list[float]  # each worker's share of the workers' CPU


def fetch_loads(bench: Bench, bootstrap: str, topic: str, cpus: str) -> list[subprocess.Popen[str]]:
    """The load generators, logged in and ready (their connections open)."""
    host, port = bootstrap.rsplit(":", 1)
    loads = []
    for _ in range(SCALING_PROCESSES):
        argv = [_kafka_perf.TASKSET, "-c", cpus, sys.executable, str(BENCH / "_fetch_load.py")]
        argv += [
            host,
            port,
            USER,
            PASSWORD,
            topic,
            str(bench.scaling_connections // SCALING_PROCESSES),
        ]
        argv.append(str(bench.scaling_bytes))
        loads.append(
            subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
        )
    for load in loads:
        assert load.stdout is not None
        line = load.stdout.readline().strip()
        if line != "ready":
            raise RuntimeError(f"_fetch_load.py did not start: {line!r}")
    return loads


def measure_scaling(
    bench: Bench, topic: str, workers: int, serve_cpus: str, load_cpus: str
) -> ScalingRun:
    """Fresh serve and load generators; one window after a warm-up."""
    with started_serve(bench, workers, serve_cpus) as (bootstrap, pids):
        loads = fetch_loads(bench, bootstrap, topic, load_cpus)
        try:
            start = time.monotonic() + SCALING_WARM_S
            end = start + SCALING_S
            for load in loads:
                assert load.stdin is not None
                load.stdin.write(f"{start} {end}\n")
                load.stdin.flush()
            time.sleep(max(0.0, start - time.monotonic()))
            before = [cpu_seconds(p) for p in [bench.broker_pid, *pids]]
            time.sleep(max(0.0, end - time.monotonic()))
            after = [cpu_seconds(p) for p in [bench.broker_pid, *pids]]
            results = [
                json.loads(load.communicate(timeout=60)[0].splitlines()[-1]) for load in loads
            ]
        finally:
            for load in loads:
                if load.poll() is None:
                    load.kill()
                    load.wait()
    broker, *used = [a - b for a, b in zip(after, before, strict=True)]
    mb = sum(r["bytes"] for r in results) / MB
    workers_cpu = used[1:] if len(used) > 1 else used
    return ScalingRun(
        mb_s=mb / SCALING_S,
        serve_ms_per_mb=sum(used) * 1000 / mb,
        serve_cores=sum(used) / SCALING_S,
        broker_cores=broker / SCALING_S,
        # Their whole lives' CPU over warm-up and window: the logins before are little.
        load_cores=sum(r["cpu_s"] for r in results) / (SCALING_S + SCALING_WARM_S),
        worker_shares=[u / (sum(workers_cpu) or 1) for u in workers_cpu],
    )


def scaling_modes(cpus: str) -> list[tuple[str, int, str, str]]:
    """(label, workers, serve's CPUs, the load generators' CPUs): every process on
    every CPU; then serve on one CPU with the rest for the load (the same total
    CPU for 1 and 2 workers: the per-core view)."""
    every = sorted(int(c) for c in cpus.split(","))
    modes = [(f"{w} worker{'s' * (w > 1)}, all on CPUs {cpus}", w, cpus, cpus) for w in (1, 2)]
    if len(every) > 1:
        rest = ",".join(map(str, every[:-1]))
        modes += [
            (
                f"{w} worker{'s' * (w > 1)}, serve on CPU {every[-1]}, load on {rest}",
                w,
                str(every[-1]),
                rest,
            )
            for w in (1, 2)
        ]
    return modes


def scaling_section(bench: Bench, rounds: int) -> None:
    """The scaling row: 1 and 2 workers under Fetch load, alternating, fresh processes."""
    topic = bench.name("fd-scaling")
    produce(bench, bench.broker_bootstrap, bench.direct_config, topic, SCALING_RECORDS, -1)
    modes = scaling_modes(bench.cpus)
    print(
        f"\nScaling: {bench.scaling_connections} connections from {SCALING_PROCESSES} load generator"
        f" processes fetching {SCALING_RECORDS:,} records of {RECORD_SIZE} B from offset 0"
        f"\n  (Fetch v15, up to {bench.scaling_bytes:,} B each, one in flight per connection), {SCALING_S:.0f} s windows after "
        f"{SCALING_WARM_S:.0f} s of warm-up; {rounds} rounds, fresh processes, alternating order;"
        f" load average {os.getloadavg()[0]:.1f} at the start.",
        flush=True,
    )
    runs: dict[str, list[ScalingRun]] = {label: [] for label, *_ in modes}
    for i in range(rounds):
        for label, workers, serve_cpus, load_cpus in modes if i % 2 == 0 else modes[::-1]:
            runs[label].append(measure_scaling(bench, topic, workers, serve_cpus, load_cpus))
    print("\n".join(scaling_lines(modes, runs)))
    print(f"  load average {os.getloadavg()[0]:.1f} at the end.")


def scaling_lines(
    modes: list[tuple[str, int, str, str]], runs: dict[str, list[ScalingRun]]
) -> list[str]:
    lines = []
    for label, *_ in modes:
        r = runs[label]
        lines.append(
            f"{label}:\n  {span([x.mb_s for x in r], '.0f')} MB/s; serve "
            f"{span([x.serve_ms_per_mb for x in r], '.2f')} ms CPU per MB, "
            f"{span([x.serve_cores for x in r], '.2f')} cores; broker "
            f"{span([x.broker_cores for x in r], '.2f')} cores; load generators "
            f"{span([x.load_cores for x in r], '.2f')} cores; workers' shares of serve's CPU "
            + ", ".join("/".join(f"{s:.0%}" for s in x.worker_shares) for x in r)
        )
    ratio = lambda a, b: a / b  # noqa: E731
    for one, two in zip(modes[0::2], modes[1::2], strict=True):
        a, b = runs[one[0]], runs[two[0]]
        lines.append(
            f"2 workers / 1 worker ({one[0].split(', ', 1)[1]}): MB/s "
            f"{span(_per_round([x.mb_s for x in b], [x.mb_s for x in a], ratio), '.2f')}, "
            f"serve's CPU per MB "
            f"{span(_per_round([x.serve_ms_per_mb for x in b], [x.serve_ms_per_mb for x in a], ratio), '.2f')}"
        )
    return lines


@contextlib.contextmanager
def started_broker(
    tmp: Path, cpus: set[int], relay_ports: tuple[int, ...] = ()
) -> Iterator[tuple[str, int, tuple[str, ...]]]:
    """The bench's broker (``_bench_broker``'s JVM flags: full JIT) on ``cpus``,
    with the bench user: its bootstrap, pid and where its ``RELAY<n>`` listeners
    (one advertised at each of ``relay_ports``) are bound."""
    import _bench_broker

    from sasl_scram import SCRAM_SHA_256
    from tests.support.kafka_broker import KafkaBroker

    flags = _bench_broker.JVM_FLAGS
    broker = KafkaBroker("kraft", tmp / "broker", jvm_flags=flags, relay_ports=relay_ports)
    own = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, cpus)  # the JVM inherits it, and counts its cores from it
        try:
            broker.start()
        finally:
            os.sched_setaffinity(0, own)
        broker.add_user(USER, PASSWORD, [SCRAM_SHA_256], ITERATIONS)
        assert broker.pid is not None
        yield broker.bootstrap, broker.pid, tuple(broker.relay_upstreams)
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
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another checkout (git worktree add DIR COMMIT) whose front door, 1 worker, "
        "runs in the same rounds; its compiled core is built first",
    )
    parser.add_argument(
        "--only-scaling",
        action="store_true",
        help="run the scaling row alone (1 and 2 workers under Fetch load)",
    )
    parser.add_argument(
        "--only-kroxylicious",
        action="store_true",
        help="run the side-by-side row alone (direct, serve and Kroxylicious)",
    )
    parser.add_argument(
        "--only-modes",
        action="store_true",
        help="run the modes' table alone (direct, the front door, edge ACLs; --baseline's)",
    )
    parser.add_argument(
        "--kroxylicious-warm-up",
        type=int,
        default=SIDE_WARM_UP_ROUNDS,
        help="the side-by-side row's discarded warm-up rounds of every mode (then"
        " Kroxylicious alone until its JIT is quiet)",
    )
    parser.add_argument(
        "--scaling-fetch-bytes",
        type=int,
        default=_fetch_load.PARTITION_MAX_BYTES,
        help="the scaling row's Fetch size",
    )
    parser.add_argument(
        "--scaling-connections",
        type=int,
        default=SCALING_CONNECTIONS,
        help="the scaling row's connections, over its load generators",
    )
    args = parser.parse_args()
    from tests.support.zookeeper_server import free_port
    from tools.fetch_kafka_broker import KAFKA_VERSIONS
    from tools.fetch_kafka_broker import is_fetched
    from tools.fetch_kafka_broker import libs_dir

    version = KAFKA_VERSIONS["kraft"]
    if not is_fetched(version):
        sys.exit(
            f"bench_frontdoor.py: error: Kafka {version}'s jars are not cached; run `make brokers`"
        )
    if not (args.only_scaling or args.only_modes):
        from tools import fetch_kroxylicious

        if not fetch_kroxylicious.is_fetched():
            sys.exit(
                f"bench_frontdoor.py: error: Kroxylicious {fetch_kroxylicious.KROXYLICIOUS_VERSION}'s"
                " jars are not cached; run `make kroxylicious`"
            )
    cpu_set = {int(c) for c in args.cpus.split(",")}
    if args.baseline:
        build_baseline(args.baseline)
    only = args.only_scaling or args.only_kroxylicious
    if not only:
        print(
            f"\nThe front door against Kafka {version}'s ProducerPerformance and ConsumerPerformance,"
            f" {RECORD_SIZE} B records, {args.records:,} per full-speed run, paced "
            f"for {PACED_S} s at {args.paced_rate}/s; a tenth of each run is warm-up, left out."
            f"\n  every process (broker, serve and its workers, the tools) on CPUs {args.cpus};"
            f" {args.rounds} rounds, the modes in alternating order; median [min-max].",
            flush=True,
        )
    results: dict[str, Figures] = {}
    # The side-by-side row's relays listen here, and the broker advertises them.
    side = not (args.only_scaling or args.only_modes)
    relay_ports = tuple(free_port() for _ in FLOORS) if side else ()
    with tempfile.TemporaryDirectory(prefix="kafka-scram-fdbench-") as name:
        tmp = Path(name)
        with started_broker(tmp, cpu_set, relay_ports) as (bootstrap, pid, relay_upstreams):
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
                scaling_bytes=args.scaling_fetch_bytes,
                scaling_connections=args.scaling_connections,
                baseline=args.baseline,
                relay_ports=relay_ports,
                relay_upstreams=relay_upstreams,
            )
            if not only:
                modes = (*MODES, BASELINE_MODE) if args.baseline else MODES
                for i in range(args.rounds):
                    order = modes if i % 2 == 0 else modes[::-1]
                    run_round(bench, order, results)
                report(results, args.paced_rate)
            if args.only_modes:
                return
            if not args.only_scaling:
                kroxylicious_section(bench, args.rounds, args.kroxylicious_warm_up)
            if not args.only_kroxylicious:
                scaling_section(bench, args.rounds)


if __name__ == "__main__":
    main()
