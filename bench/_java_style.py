"""The Java-style load generator (``bench/java_style_client.c``) as the benches run it.

``bench_endpoint.py`` drives ``kafka-scram serve``, the floor server and a
real Apache Kafka broker with it; ``tests/test_bench_broker.py`` checks the
broker path. Every server under test is pinned to one CPU (all its threads)
and the load generator to another, and the server's CPU is the whole
process's user + system time over the load generator's measured window.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from _cbuild import compiled

ROOT = Path(__file__).resolve().parent.parent
CLIENT_SOURCE = ROOT / "bench" / "java_style_client.c"
# The bench user, on every server alike: SCRAM-SHA-256 with Kafka's minimum
# (and kafka-configs' default) of 4096 iterations.
USER = "bench"
PASSWORD = "bench-secret"
ITERATIONS = 4096
# One window's length, in seconds.
DURATION_S = 1.0
# Kafka's broker accepts at most one re-authentication start per second on a
# connection (KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS) and fails an
# earlier one; the paced re-auth row waits this long after each one ends.
REAUTH_INTERVAL_MS = 1100

ALL_CPUS: set[int] = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()


def cpus() -> tuple[int, int]:
    """The server's core and the load generator's core."""
    ordered = sorted(ALL_CPUS) or [0]
    return ordered[0], ordered[-1]


def pin(pid: int, cpu_set: Collection[int]) -> None:
    """Every thread of process ``pid`` onto the CPUs in ``cpu_set``.

    ``sched_setaffinity(pid)`` moves one thread only: a JVM's (and serve's
    helper) threads exist already, and threads created later inherit their
    creator's mask. No-op without affinity support.
    """
    if not ALL_CPUS:
        return
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
            os.sched_setaffinity(int(task), cpu_set)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a whole process so far (Linux; 0 elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def listen_overflows() -> int:
    """The kernel's count of connections dropped by full accept queues (all sockets)."""
    try:
        with open("/proc/net/netstat") as f:
            lines = [line.split() for line in f if line.startswith("TcpExt:")]
        return int(dict(zip(lines[0], lines[1], strict=True))["ListenOverflows"])
    except (OSError, IndexError, KeyError, ValueError):
        return 0


def seed_bench_store(db: Path) -> None:
    """A SQLite credential store at ``db`` holding the bench user (both
    mechanisms), for the rows that run the real ``kafka-scram serve``; kept if
    it exists."""
    from sasl_scram import SCRAM_SHA_256
    from sasl_scram import SCRAM_SHA_512
    from sasl_scram.store import ScramUpsertion
    from sasl_scram.store import SQLiteCredentialStore

    if db.exists():
        return
    db.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    store = SQLiteCredentialStore(db, poll_interval=0)
    try:
        mechanisms = (SCRAM_SHA_256, SCRAM_SHA_512)
        store.alter([], [ScramUpsertion.from_password(USER, m, PASSWORD) for m in mechanisms])
    finally:
        store.close()


def serve_port(proc: subprocess.Popen[str]) -> int:
    """The port in ``serve``'s first line ("kafka-scram endpoint ready: NAME host:port")."""
    assert proc.stdout is not None
    return int(proc.stdout.readline().rsplit(":", 1)[1])


def build_client() -> Path:
    """The C load generator, compiled with the system compiler and libcrypto once per source."""
    return compiled(
        CLIENT_SOURCE,
        ("-O2", "-lcrypto"),
        program="bench_endpoint.py",
        hint="install a C compiler and OpenSSL's headers (apt-get install -y gcc libssl-dev)",
    )


@dataclass(frozen=True)
class Target:
    """A server under test: its process (every thread pinned) and its listeners."""

    name: str
    pid: int
    port: int
    reauth_port: int  # where re-authentication is allowed (the broker: its reauth listener)
    idle_cpu: float | None = None  # CPU seconds per second with no client, where measured


@dataclass
class Sample:
    """One window of one load generator run against one server."""

    logins: int
    rate: float
    p50_ms: float
    p99_ms: float
    server_us: float  # server CPU per login
    client_us: float  # load generator CPU per login
    # SYNs dropped by a full accept queue meanwhile (machine-wide): each one
    # costs a login a second's retransmit, which shows in p99.
    overflows: int = 0
    # Share of the window the load generator was runnable but had no CPU: when
    # it shares the cores with the server, a high share means it was starved.
    client_wait: float = 0.0


class LoginsFailed(RuntimeError):
    """The load generator saw a login fail, or none succeed: no figure is printed."""


def java_style(
    exe: Path,
    server_pid: int,
    port: int,
    concurrency: int,
    mode: str,
    seconds: float = DURATION_S,
    interval_ms: int = 0,
    user: str = USER,
    password: str = PASSWORD,
    pinned: bool = True,
) -> Sample:
    """One window of ``mode`` (login, reauth or pipelined) at ``concurrency``.

    A login counts only once the server's signature checks (RFC 5802 section
    3, server-final), which only a server that verified the client's proof
    sends. Any failed login raises :class:`LoginsFailed` with the load
    generator's diagnostics, so a figure is never made of refusals.
    ``interval_ms`` paces re-authentication (``REAUTH_INTERVAL_MS``);
    ``pinned=False`` leaves the load generator free to share every core.
    """
    _, client_cpu = cpus()
    command = [
        *(["taskset", "-c", str(client_cpu)] if ALL_CPUS and pinned else []),
        str(exe),
        "127.0.0.1",
        str(port),
        user,
        password,
        str(concurrency),
        str(seconds),
        mode,
        str(interval_ms),
        str(server_pid),
    ]
    overflows = listen_overflows()
    try:
        result = subprocess.run(
            command, capture_output=True, text=True, check=False, timeout=seconds + 120
        )
    except subprocess.TimeoutExpired as exc:
        raise LoginsFailed(
            f"{mode} c={concurrency} on port {port}: no end in {exc.timeout} s"
        ) from None
    fields = dict(item.split("=") for item in result.stdout.split())
    logins = int(fields.get("logins", "0"))
    if result.returncode or not logins:
        raise LoginsFailed(
            f"{mode} c={concurrency} on port {port}: {logins} logins, "
            f"{fields.get('errors', '?')} failed (exit {result.returncode}): "
            f"{result.stderr.strip()}"
        )
    return Sample(
        logins=logins,
        rate=float(fields["rate"]),
        p50_ms=float(fields["p50_us"]) / 1000,
        p99_ms=float(fields["p99_us"]) / 1000,
        server_us=float(fields["server_cpu_us"]) / logins,
        client_us=float(fields["client_cpu_us"]) / logins,
        overflows=listen_overflows() - overflows,
        client_wait=float(fields.get("client_wait_us", "0")) / 1e6 / float(fields["seconds"]),
    )


def span(values: list[float], fmt: str = ",.0f") -> str:
    """The median, then the range: neighbours on a shared VM move single rounds a lot."""
    lo, hi, mid = min(values), max(values), statistics.median(values)
    return f"{mid:{fmt}} [{lo:{fmt}}-{hi:{fmt}}]"


def table_line(label: str, samples: list[Sample], unit: str = "login") -> str:
    """One row's figures over the rounds."""
    overflows = sum(s.overflows for s in samples)
    return (
        f"{label}: {span([s.rate for s in samples])} {unit}s/s, "
        f"p50 {span([s.p50_ms for s in samples], '.2f')} ms, "
        f"p99 {span([s.p99_ms for s in samples], '.2f')} ms, "
        f"server CPU {span([s.server_us for s in samples])} us/{unit}, "
        f"client CPU {span([s.client_us for s in samples])} us/{unit}"
        + (f", {overflows} SYNs dropped by full accept queues" if overflows else "")
    )
