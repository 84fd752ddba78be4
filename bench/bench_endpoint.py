"""``make bench``, part 2: the endpoint and delegation tokens.

* Logins per second for one server process on one core, driven from the other
  core by ``bench/java_style_client.c``, which logs in exactly as Kafka's Java
  client does (ApiVersions v3, SaslHandshake v1, two SaslAuthenticate v2, the
  server signature checked, no pipelining), at 1, 10 and 100 connections:
  logins/s, p50/p99, the server's CPU per login and the client's own CPU.
  Re-authentication's CPU per re-authentication. The pipelined sequence of our
  own ``KafkaConnection`` as a secondary line. ``--baseline DIR`` runs the
  code in another checkout (e.g. ``git worktree add /tmp/old d0cea6f``) in
  the same run, in alternating rounds.
* ``scram.workers``: the real ``kafka-scram serve`` (SQLite store) with 1 and
  2 worker processes at 100 and 1000 connections, the load generator
  unpinned and sharing the cores with the workers.
* The cost of the authentication metrics per login, in process.
* Token authentications per second with 100,000 live tokens cached.
  Target: the same as user authentication.
* A sweep of 100,000 expired tokens. Target: at most 200 ms.
* Memory per cached token.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sasl_scram import SCRAM_SHA_256, KafkaPrincipal, SaltedPasswordCache, ScramClient, _native
from sasl_scram.kafka import FrameBuffer, decode_response, encode_request

# The token row is the best of WINDOWS measurements of DURATION_S each: this
# VM's neighbours move a single 3 s figure by up to 2x between runs (the same
# rule as timeit's best-of for the SCRAM figures).
DURATION_S = 1.0
WINDOWS = 3
# The Java-style rows and the metrics A/B report the median over ROUNDS
# alternating rounds; at concurrency 1 one round's ratio between two trees
# moves by +-8%, so three rounds left the median to chance.
ROUNDS = 7
# An unrecorded window that warms each fresh server before its round.
WARM_UP_S = 0.3
# scram.busy.poll.us for the busy-polling rows: longer than one client step.
BUSY_POLL_US = 200
ROOT = Path(__file__).resolve().parent.parent


class _ClientConnection(asyncio.Protocol):
    """A lean client connection that logs in, and on request logs in again.

    The second and later logins on one connection are KIP-368
    re-authentications: the same full exchange (SaslHandshake, client-first,
    client-final, server-final verified) on an already open socket. A protocol
    rather than streams keeps the load generator's own overhead low, so the
    figure reflects the server.
    """

    def __init__(self, token: bool, cache: SaltedPasswordCache) -> None:
        self._loop = asyncio.get_running_loop()
        self._frames = FrameBuffer(1 << 20)
        self._token = token
        self._cache = cache
        self._client: ScramClient | None = None
        self._done: asyncio.Future[None] | None = None
        self._step = 0
        self._correlation = 0
        self._transport: asyncio.Transport | None = None
        self.opened: asyncio.Future[None] = self._loop.create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]
        self.opened.set_result(None)

    def login(self, user: str, password: str) -> asyncio.Future[None]:
        assert self._transport is not None
        self._client = ScramClient(
            SCRAM_SHA_256, user, password, token_auth=self._token, key_cache=self._cache
        )
        self._done = self._loop.create_future()
        self._step = 0
        # As KafkaConnection does: SaslHandshake and client-first in one write.
        self._send(
            (17, 1, {"mechanism": "SCRAM-SHA-256"}),
            (36, 2, {"auth_bytes": self._client.client_first()}),
        )
        return self._done

    def close(self) -> None:
        assert self._transport is not None
        self._transport.close()

    def _send(self, *requests: tuple[int, int, dict[str, Any]]) -> None:
        assert self._transport is not None
        data = []
        for api_key, version, body in requests:
            self._correlation += 1
            data.append(encode_request(api_key, version, self._correlation, "bench", body))
        self._transport.write(b"".join(data))

    def data_received(self, data: bytes) -> None:
        self._frames.feed(data)
        while (payload := self._frames.next_frame()) is not None:
            self._on_frame(payload)

    def _on_frame(self, payload: bytes) -> None:
        assert self._client is not None and self._done is not None
        self._step += 1
        if self._step == 1:  # the SaslHandshake answer; a refusal closes the connection
            return
        _, body = decode_response(36, 2, payload)
        if body["error_code"]:
            self._done.set_exception(ConnectionError(body["error_message"]))
        elif self._step == 2:
            final = self._client.receive_server_first(body["auth_bytes"])
            self._send((36, 2, {"auth_bytes": final}))
        else:
            self._client.receive_server_final(body["auth_bytes"])
            self._done.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        for future in (self.opened, self._done):
            if future is not None and not future.done():
                future.set_exception(exc or ConnectionError("closed before the login completed"))


async def connect(port: int, token: bool, cache: SaltedPasswordCache) -> _ClientConnection:
    loop = asyncio.get_running_loop()
    _, protocol = await loop.create_connection(
        lambda: _ClientConnection(token, cache), "127.0.0.1", port
    )
    await protocol.opened
    return protocol


async def rate(
    port: int, logins: list[tuple[str, str]], token: bool, concurrency: int, reconnect: bool
) -> float:
    """Logins per second over ``concurrency`` connections.

    ``reconnect``: a new TCP connection for every login (closed after it);
    otherwise each connection stays open and re-authenticates (KIP-368).
    """
    cache = SaltedPasswordCache(maxsize=len(logins) + 10)
    # Warm the client cache (and the server's lazily derived token credentials).
    for user, password in logins:
        conn = await connect(port, token, cache)
        await conn.login(user, password)
        conn.close()
    done = 0
    deadline = time.perf_counter() + DURATION_S

    async def worker(i: int) -> None:
        nonlocal done
        n = i
        conn = await connect(port, token, cache)
        while time.perf_counter() < deadline:
            user, password = logins[n % len(logins)]
            await conn.login(user, password)
            done += 1
            n += concurrency
            if reconnect:
                conn.close()
                conn = await connect(port, token, cache)
        conn.close()

    start = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    return done / (time.perf_counter() - start)


def start_server(
    tokens: int, *, pythonpath: Path = ROOT, extra: tuple[str, ...] = ()
) -> tuple[subprocess.Popen[str], int, list[tuple[str, str]]]:
    """A bench server process running the code under ``pythonpath`` (this tree by default)."""
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "_bench_server.py"), "--tokens", str(tokens), *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(pythonpath)},
    )
    assert proc.stdout is not None
    fields = proc.stdout.readline().split()
    port = int(fields[0])
    sample = list(zip(fields[1::2], fields[2::2], strict=True))
    return proc, port, sample


def stop(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(10)


def _token_manager(n: int, clock: list[int], trace_memory: bool) -> tuple[Any, float]:
    """A manager with ``n`` live tokens, and the bytes each took if traced."""
    from tokenauth import InMemoryTokenStore, RequestContext, TokenCache, TokenConfig, TokenManager

    config = TokenConfig.of("bench-secret", max_lifetime_ms=1000, expiry_time_ms=1000)
    store = InMemoryTokenStore()
    if trace_memory:
        tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    cache = TokenCache(store, config.secrets)
    manager = TokenManager(config, store, cache=cache, clock_ms=lambda: clock[0])
    ctx = RequestContext(KafkaPrincipal.user("bench"), security_protocol="SASL_PLAINTEXT")
    for _ in range(n):
        manager.create_token(ctx)
    per_token = (tracemalloc.get_traced_memory()[0] - before) / n
    if trace_memory:
        tracemalloc.stop()
    return manager, per_token


def token_sweep_and_memory(n: int) -> tuple[float, float]:
    """The sweep time and the memory per token, from two separate populations:
    tracing allocations scatters the objects and would slow the timed sweep 2x."""
    clock = [1_000_000]
    manager, _ = _token_manager(n, clock, trace_memory=False)
    clock[0] += 10_000
    # Start from a settled heap, as an hourly sweep does, not mid-way through
    # the garbage the creations above left behind.
    gc.collect()
    start = time.perf_counter()
    removed = manager.sweep()
    elapsed = time.perf_counter() - start
    assert len(removed) == n
    del manager, removed
    gc.collect()
    _, per_token = _token_manager(n, [1_000_000], trace_memory=True)
    return elapsed, per_token


def run(coro: Coroutine[Any, Any, float]) -> float:
    """The load generator always runs on uvloop, so the server's loop is what differs."""
    import uvloop

    return uvloop.run(coro)


_ALL_CPUS: set[int] = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux; 0 elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def place(server: subprocess.Popen[str]) -> None:
    """The server on the first CPU, this load generator on the others.

    Without pinning the scheduler sometimes puts both on one vCPU, and the
    figures swing by 2x between runs.
    """
    cpus = sorted(_ALL_CPUS)
    if len(cpus) >= 2:
        os.sched_setaffinity(server.pid, {cpus[0]})
        os.sched_setaffinity(0, set(cpus[1:]))


def unpin(server: subprocess.Popen[str]) -> None:
    if _ALL_CPUS:
        os.sched_setaffinity(0, _ALL_CPUS)
        os.sched_setaffinity(server.pid, _ALL_CPUS)


# --- the Java-style load generator ----------------------------------------------

CLIENT_SOURCE = ROOT / "bench" / "java_style_client.c"
CONCURRENCIES = (1, 10, 100)


def build_client() -> Path:
    """Compile the C load generator with the system compiler and libcrypto (cached)."""
    cache = Path(os.environ.get("KAFKA_SCRAM_CACHE", Path.home() / ".cache" / "kafka-scram"))
    exe = cache / "bench" / "java_style_client"
    if exe.exists() and exe.stat().st_mtime >= CLIENT_SOURCE.stat().st_mtime:
        return exe
    exe.parent.mkdir(parents=True, exist_ok=True)
    compiler = os.environ.get("CC", "cc")
    result = subprocess.run(
        [compiler, "-O2", "-o", str(exe), str(CLIENT_SOURCE), "-lcrypto"],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode:
        sys.exit(
            "bench_endpoint.py: error: cannot build the load generator "
            f"({result.stderr.strip().splitlines()[-1:]}); "
            "install a C compiler and OpenSSL's headers (apt-get install -y gcc libssl-dev)"
        )
    return exe


def _cpus() -> tuple[int, int]:
    """The server's core and the client's core."""
    cpus = sorted(_ALL_CPUS) or [0]
    return cpus[0], cpus[-1]


@dataclass
class Sample:
    """One window of one load generator run against one server."""

    rate: float
    p50_ms: float
    p99_ms: float
    server_us: float  # server CPU per login
    client_us: float  # load generator CPU per login


def java_style(
    exe: Path,
    server_pid: int | list[int],
    port: int,
    concurrency: int,
    mode: str,
    seconds: float = DURATION_S,
    pinned: bool = True,
) -> Sample:
    """One window of ``mode`` (login, reauth or pipelined) at ``concurrency``.

    ``server_pid``: the server's processes (a parent and its workers), whose
    CPU is counted; ``pinned``: the load generator on its own CPU.
    """
    _, client_cpu = _cpus()
    pids = server_pid if isinstance(server_pid, list) else [server_pid]
    before = sum(map(cpu_seconds, pids))
    result = subprocess.run(
        [
            *(["taskset", "-c", str(client_cpu)] if _ALL_CPUS and pinned else []),
            str(exe),
            "127.0.0.1",
            str(port),
            "bench",
            "bench-secret",
            str(concurrency),
            str(seconds),
            mode,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    server_s = sum(map(cpu_seconds, pids)) - before
    if result.returncode:
        raise RuntimeError(f"load generator failed: {result.stdout}{result.stderr}")
    fields = dict(item.split("=") for item in result.stdout.split())
    logins = int(fields["logins"])
    return Sample(
        rate=float(fields["rate"]),
        p50_ms=float(fields["p50_us"]) / 1000,
        p99_ms=float(fields["p99_us"]) / 1000,
        server_us=server_s * 1e6 / logins,
        client_us=float(fields["client_cpu_us"]) / logins,
    )


def _span(values: list[float], fmt: str = ",.0f") -> str:
    """The median, then the range: neighbours on a shared VM move single rounds a lot."""
    lo, hi, mid = min(values), max(values), statistics.median(values)
    return f"{mid:{fmt}} [{lo:{fmt}}-{hi:{fmt}}]"


def _row(label: str, samples: list[Sample], unit: str = "login") -> str:
    return (
        f"{label}: {_span([s.rate for s in samples])} {unit}s/s, "
        f"p50 {_span([s.p50_ms for s in samples], '.2f')} ms, "
        f"p99 {_span([s.p99_ms for s in samples], '.2f')} ms, "
        f"server CPU {_span([s.server_us for s in samples])} us/{unit}, "
        f"client CPU {_span([s.client_us for s in samples])} us/{unit}"
    )


def _start_servers(
    named_trees: list[tuple[str, Path]], server_cpu: int, exe: Path
) -> dict[str, tuple[subprocess.Popen[str], int]]:
    """One server per (name, tree), pinned, each warmed by a short unrecorded window."""
    servers: dict[str, tuple[subprocess.Popen[str], int]] = {}
    try:
        for name, tree in named_trees:
            extra = ("--floor",) if name == "floor" else ()
            proc, port, _ = start_server(0, pythonpath=tree, extra=extra)
            servers[name] = (proc, port)
            if _ALL_CPUS:
                os.sched_setaffinity(proc.pid, {server_cpu})
            java_style(exe, proc.pid, port, 10, "login", seconds=WARM_UP_S)
    except BaseException:
        for proc, _ in servers.values():
            stop(proc)
        raise
    return servers


def java_style_section(baseline: Path | None, rounds: int) -> None:
    """Every row in alternating rounds, this tree's server and the baseline's."""
    exe = build_client()
    trees = [("this tree", ROOT)] + ([("baseline", baseline)] if baseline else [])
    # The floor server (bench/_bench_server.py --floor) runs the login rows only.
    servers_of_row = {
        mode: trees + ([("floor", ROOT)] if mode == "login" else [])
        for mode in ("login", "reauth", "pipelined")
    }
    server_cpu, client_cpu = _cpus()
    print(
        "\nkafka-scram endpoint, Java-style logins: one server process pinned to CPU "
        f"{server_cpu}, bench/java_style_client.c pinned to CPU {client_cpu}."
        "\n  login: connect, ApiVersions v3, SaslHandshake v1, SaslAuthenticate v2 twice "
        "(server signature checked), close; one request in flight, as Kafka's Java client."
        "\n  re-auth: SaslHandshake v1 and two SaslAuthenticate v2 on open connections (KIP-368)."
        "\n  pipelined (secondary): no ApiVersions, SaslHandshake and client-first in one "
        "write, as our KafkaConnection; Java clients never do this."
        f"\n  {rounds} alternating rounds of {DURATION_S:.0f} s windows, fresh server processes each round."
        "\n  No Kafka broker here: compare with the baseline."
        "\n  floor: the same SCRAM core and codec in a minimal uvloop protocol with none of the"
        "\n  endpoint's rules (no state machine, limits, deadlines, metrics): what any Python"
        "\n  server on uvloop pays per login for sockets, loop and SCRAM."
        "\n  Each figure: median [min-max] over the rounds."
        f"\n  This tree's SCRAM core: {_native.status()}."
    )
    rows = [("login", c) for c in CONCURRENCIES] + [("reauth", 10)]
    rows += [("pipelined", c) for c in CONCURRENCIES]
    results: dict[tuple[str, str, int], list[Sample]] = {}
    for i in range(rounds):
        # Fresh server processes every round: one process's memory layout can
        # move its concurrency-1 rate by a few percent for its whole life, and
        # the rounds should average that out, not repeat it.
        servers = _start_servers(servers_of_row["login"], server_cpu, exe)
        try:
            for mode, c in rows:
                # Which server goes first alternates too: no order bias.
                for name, _tree in servers_of_row[mode][:: 1 if i % 2 == 0 else -1]:
                    proc, port = servers[name]
                    sample = java_style(exe, proc.pid, port, c, mode)
                    results.setdefault((name, mode, c), []).append(sample)
        finally:
            for proc, _ in servers.values():
                stop(proc)
    labels = {"login": "login    ", "reauth": "re-auth  ", "pipelined": "pipelined"}
    for mode, c in rows:
        for name, _tree in servers_of_row[mode]:
            label = f"{labels[mode]} c={c:<3d} {name:9s}"
            unit = "re-auth" if mode == "reauth" else "login"
            print(_row(label, results[name, mode, c], unit))
    if baseline:
        for mode, c in rows:
            ratios = [
                new.rate / old.rate
                for new, old in zip(
                    results["this tree", mode, c], results["baseline", mode, c], strict=True
                )
            ]
            print(f"{labels[mode]} c={c:<3d} this tree / baseline logins/s: {_span(ratios, '.2f')}")


# scram.workers rows: (workers, concurrency).
WORKER_ROWS = ((1, 100), (2, 100), (1, 1000), (2, 1000))


def start_serve(workers: int, base: Path) -> tuple[subprocess.Popen[str], int, list[int]]:
    """This tree's ``kafka-scram serve`` with ``workers`` processes on a SQLite store
    holding the bench user: the process, its port, and its pids (parent and workers)."""
    from sasl_scram import SCRAM_SHA_512
    from sasl_scram.store import ScramUpsertion, SQLiteCredentialStore

    db = base / "credentials.db"
    if not db.exists():
        store = SQLiteCredentialStore(db, poll_interval=0)
        store.alter(
            [],
            [
                ScramUpsertion.from_password("bench", m, "bench-secret")
                for m in (SCRAM_SHA_256, SCRAM_SHA_512)
            ],
        )
        store.close()
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
    assert proc.stdout is not None
    port = int(proc.stdout.readline().rsplit(":", 1)[1])
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
    return proc, port, [proc.pid, *map(int, children)]


def workers_section(rounds: int) -> None:
    """1 and 2 workers of the real ``kafka-scram serve`` in alternating rounds, unpinned."""
    import tempfile

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
            order = (1, 2) if i % 2 == 0 else (2, 1)
            for workers in order:
                proc, port, pids = start_serve(workers, Path(tmp))
                try:
                    java_style(exe, pids, port, 10, "login", seconds=WARM_UP_S, pinned=False)
                    for w, c in WORKER_ROWS:
                        if w == workers:
                            sample = java_style(exe, pids, port, c, "login", pinned=False)
                            results.setdefault((w, c), []).append(sample)
                finally:
                    proc.terminate()
                    proc.wait(30)
    for w, c in WORKER_ROWS:
        print(_row(f"login     c={c:<4d} workers={w}", results[w, c]))
    for c in sorted({c for _, c in WORKER_ROWS}):
        ratios = [
            two.rate / one.rate for two, one in zip(results[2, c], results[1, c], strict=True)
        ]
        print(f"login     c={c:<4d} 2 workers / 1 worker logins/s: {_span(ratios, '.2f')}")


def metrics_cost(rounds: int) -> None:
    """The authentication metrics' cost: an A/B in this process, and the counting alone.

    A real endpoint runs on a uvloop loop in a thread of this process, pinned
    to the server's core; between windows its metrics are switched on and off
    (alternating, which goes first alternates too) while the Java-style client
    logs in at concurrency 10. Then the counting call alone is timed.
    """
    import threading

    import uvloop

    from sasl_scram import SCRAM_SHA_256
    from sasl_scram.endpoint import EndpointConfig, ScramEndpoint
    from sasl_scram.endpoint._metrics import AuthMetrics
    from sasl_scram.store import InMemoryCredentialStore, ScramUpsertion

    store = InMemoryCredentialStore()
    store.alter([], [ScramUpsertion.from_password("bench", SCRAM_SHA_256, "bench-secret")])
    config = EndpointConfig.from_properties(
        {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "scram.credential.store.path": "unused.db"}
    )
    endpoint = ScramEndpoint(config, store)
    loop = uvloop.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(endpoint.start(), loop).result()
    counting = AuthMetrics("127.0.0.1", 0, lambda: endpoint.connections)
    server_cpu, _ = _cpus()
    if _ALL_CPUS:
        os.sched_setaffinity(0, {server_cpu})
    exe = build_client()
    port = endpoint.bound_address()[1]
    results: dict[bool, list[Sample]] = {True: [], False: []}
    try:
        for i in range(rounds):
            for on in (True, False) if i % 2 == 0 else (False, True):
                endpoint.metrics = counting if on else None
                results[on].append(java_style(exe, os.getpid(), port, 10, "login"))
    finally:
        asyncio.run_coroutine_threadsafe(endpoint.close(grace_seconds=1), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        if _ALL_CPUS:
            os.sched_setaffinity(0, _ALL_CPUS)
    ratios = [a.rate / b.rate for a, b in zip(results[True], results[False], strict=True)]
    print(
        "metrics A/B in process (Java-style logins, concurrency 10, metrics on / off in "
        f"alternating windows): logins/s ratio {_span(ratios, '.3f')}; server CPU "
        f"{_span([s.server_us for s in results[True]])} us/login on, "
        f"{_span([s.server_us for s in results[False]])} us/login off"
    )
    calls = 200_000
    start = time.perf_counter()
    for _ in range(calls):
        counting.succeeded("SASL_PLAINTEXT", "SCRAM-SHA-256", False, True, 0.0012)
    per_call = (time.perf_counter() - start) / calls * 1e6
    print(
        f"metrics: {per_call:.2f} us of counting per login, in process "
        "(compare with the server CPU per login above; target < 2%)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--baseline", type=Path, help="another checkout to compare, same run")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--skip-tokens", action="store_true", help="the endpoint figures only")
    parser.add_argument(
        "--only-workers", action="store_true", help="the scram.workers rows only (a quick look)"
    )
    args = parser.parse_args()
    if args.only_workers:
        workers_section(args.rounds)
        return
    java_style_section(args.baseline, args.rounds)
    workers_section(args.rounds)
    metrics_cost(args.rounds)
    if args.skip_tokens:
        return
    # Users and tokens against the same server, in alternating windows: the
    # ratio then compares like with like whatever the VM's neighbours do.
    logins = [("bench", "bench-secret")]
    proc, port, sample = start_server(100_000)
    user_rate = token_rate = 0.0
    try:
        place(proc)
        for _ in range(WINDOWS):
            user_rate = max(user_rate, run(rate(port, logins, False, 10, reconnect=True)))
            token_rate = max(token_rate, run(rate(port, sample, True, 10, reconnect=True)))
    finally:
        unpin(proc)
        stop(proc)
    print(
        f"token logins/s  (our pipelined client) new connection concurrency 10: {token_rate:8.0f}"
        f"   with 100,000 live tokens cached, {len(sample)} in rotation; users on the same "
        f"server {user_rate:.0f}/s; ratio {token_rate / user_rate:.2f} (target ~1.0)"
    )
    elapsed, per_token = token_sweep_and_memory(100_000)
    print(f"sweep of 100,000 expired tokens: {elapsed * 1000:8.1f} ms   (target <= 200 ms)")
    print(
        "memory per cached token (info + HMAC; SCRAM credentials derived on first login): "
        f"{per_token:6.0f} bytes"
    )


if __name__ == "__main__":
    main()
