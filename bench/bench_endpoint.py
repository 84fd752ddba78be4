"""``make bench``, part 2: the endpoint and delegation tokens.

* Logins per second for one server process on one core, driven from the other
  core by ``bench/java_style_client.c``, which logs in exactly as Kafka's Java
  client does (ApiVersions v3, SaslHandshake v1, two SaslAuthenticate v2, the
  server signature checked, no pipelining), at 1, 10 and 100 connections:
  logins/s, p50/p99, the server's CPU per login and the client's own CPU.
  Re-authentication's CPU per re-authentication, back to back and paced. The
  pipelined sequence of our own ``KafkaConnection`` as a secondary line.
  Apache Kafka's own broker (``bench/_bench_broker.py``) runs the login rows
  and the paced re-auth row beside ``serve``, and each of those rows prints
  serve / broker (``--no-broker`` leaves it out). ``--baseline DIR`` runs the
  code in another checkout (e.g. ``git worktree add /tmp/old d0cea6f``) in
  the same run, in alternating rounds.
* ``scram.workers`` (``bench/_workers.py``): the real ``kafka-scram serve``
  (SQLite store) with 1 and 2 worker processes at 100 and 1000 connections,
  the load generator unpinned and sharing the cores with the workers.
* Password guessing (``bench/_guessing.py``): wrong-password verdicts per
  second against one user, one and 1,000 guessing connections, the failure
  budget off and at its defaults, and another user's logins per second from
  the guesser's own address, alone and under the attack.
* The cost of the authentication metrics per login, in process.
* Token authentications per second with 100,000 live tokens cached.
  Target: the same as user authentication.
* A sweep of 100,000 expired tokens. Target: at most 200 ms.
* Memory per cached token.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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

import _bench_broker
import _guessing
import _make_run
import _workers
from _java_style import ALL_CPUS
from _java_style import DURATION_S
from _java_style import ITERATIONS
from _java_style import PASSWORD
from _java_style import REAUTH_INTERVAL_MS
from _java_style import ROOT
from _java_style import USER
from _java_style import Sample
from _java_style import Target
from _java_style import build_client
from _java_style import cpus
from _java_style import java_style
from _java_style import pin
from _java_style import span
from _java_style import table_line

from sasl_scram import SCRAM_SHA_256
from sasl_scram import KafkaPrincipal
from sasl_scram import SaltedPasswordCache
from sasl_scram import ScramClient
from sasl_scram import _native
from sasl_scram.kafka import FrameBuffer
from sasl_scram.kafka import decode_response
from sasl_scram.kafka import encode_request

# The token row is the best of WINDOWS measurements of DURATION_S each: this
# VM's neighbours move a single 3 s figure by up to 2x between runs (the same
# rule as timeit's best-of for the SCRAM figures).
WINDOWS = 3
# The Java-style rows and the metrics A/B report the median over ROUNDS
# alternating rounds; at concurrency 1 one round's ratio between two trees
# moves by +-8%, so three rounds left the median to chance.
ROUNDS = 7
# An unrecorded window that warms each fresh server before its round.
WARM_UP_S = 0.3
# The paced re-auth row's window: each connection re-authenticates about every
# REAUTH_INTERVAL_MS, so a 1 s window would hold one turn per connection.
PACED_S = 3.0
# scram.busy.poll.us for the busy-polling rows: longer than one client step.
BUSY_POLL_US = 200


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


def _bench_server_process() -> tuple[subprocess.Popen[str], int]:
    """This tree's bench server, without tokens: its process and port."""
    proc, port, _ = start_server(0)
    return proc, port


def stop(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(10)


def _token_manager(n: int, clock: list[int], trace_memory: bool) -> tuple[Any, float]:
    """A manager with ``n`` live tokens, and the bytes each took if traced."""
    from tokenauth import InMemoryTokenStore
    from tokenauth import TokenCache
    from tokenauth import TokenConfig
    from tokenauth import TokenManager
    from tokenauth import TokenRequester

    config = TokenConfig.of("bench-secret", max_lifetime_ms=1000, expiry_time_ms=1000)
    store = InMemoryTokenStore()
    if trace_memory:
        tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    cache = TokenCache(store, config.secrets)
    manager = TokenManager(config, store, cache=cache, clock_ms=lambda: clock[0])
    ctx = TokenRequester(KafkaPrincipal.user("bench"), security_protocol="SASL_PLAINTEXT")
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


def place(server: subprocess.Popen[str]) -> None:
    """The server on the first CPU, this load generator on the others.

    Without pinning the scheduler sometimes puts both on one vCPU, and the
    figures swing by 2x between runs.
    """
    ordered = sorted(ALL_CPUS)
    if len(ordered) >= 2:
        pin(server.pid, {ordered[0]})
        os.sched_setaffinity(0, set(ordered[1:]))


def unpin(server: subprocess.Popen[str]) -> None:
    if ALL_CPUS:
        os.sched_setaffinity(0, ALL_CPUS)
        pin(server.pid, ALL_CPUS)


# --- the Java-style rows ---------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One line of the table: a mode at a concurrency, and which servers run it."""

    mode: str  # login, reauth or pipelined (java_style_client.c)
    concurrency: int
    interval_ms: int = 0  # re-authentication pacing; 0: back to back
    seconds: float = DURATION_S
    floor: bool = False
    broker: bool = False

    @property
    def label(self) -> str:
        names = {"login": "login", "reauth": "re-auth", "pipelined": "pipelined"}
        paced = f" every {self.interval_ms / 1000:.1f} s" if self.interval_ms else ""
        return f"{names[self.mode] + paced:19s} c={self.concurrency:<4d}"


ROWS = (
    *(Row("login", c, floor=True, broker=True) for c in (1, 10, 100)),
    # The broker cannot run this row: KafkaChannel refuses a second
    # re-authentication start within a second on one connection.
    Row("reauth", 10),
    # So this one, which it can: each of a thousand connections re-authenticates
    # every REAUTH_INTERVAL_MS, on the broker's listener whose
    # connections.max.reauth.ms allows it (KIP-368). Its rate is set by the pacing;
    # the CPU per re-authentication and the latency are the figures.
    Row("reauth", 1000, REAUTH_INTERVAL_MS, PACED_S, broker=True),
    *(Row("pipelined", c) for c in (1, 10, 100)),
)


def _start_servers(
    named_trees: list[tuple[str, Path]], server_cpu: int, exe: Path
) -> dict[str, tuple[subprocess.Popen[str], Target]]:
    """One server per (name, tree), pinned, each warmed by a short unrecorded window."""
    servers: dict[str, tuple[subprocess.Popen[str], Target]] = {}
    try:
        for name, tree in named_trees:
            extra = ("--floor",) if name == "floor" else ()
            proc, port, _ = start_server(0, pythonpath=tree, extra=extra)
            servers[name] = (proc, Target(name, proc.pid, port, port))
            pin(proc.pid, {server_cpu})
            java_style(exe, proc.pid, port, 10, "login", seconds=WARM_UP_S)
    except BaseException:
        for proc, _ in servers.values():
            stop(proc)
        raise
    return servers


def _print_header(rounds: int, broker: bool) -> None:
    server_cpu, client_cpu = cpus()
    print(
        "\nkafka-scram endpoint, Java-style logins: each server process pinned to CPU "
        f"{server_cpu} (all its threads), bench/java_style_client.c pinned to CPU {client_cpu}."
        "\n  login: connect, ApiVersions v3, SaslHandshake v1, SaslAuthenticate v2 twice "
        "(server signature checked), close; one request in flight, as Kafka's Java client."
        "\n  re-auth: SaslHandshake v1 and two SaslAuthenticate v2 on open connections "
        "(KIP-368), back to back, or paced: each connection again "
        f"{REAUTH_INTERVAL_MS} ms after its last one ended."
        "\n  pipelined (secondary): no ApiVersions, SaslHandshake and client-first in one "
        "write, as our KafkaConnection; Java clients never do this."
        f"\n  {rounds} alternating rounds of {DURATION_S:.0f} s windows ({PACED_S:.0f} s paced), "
        "fresh server processes each round."
        "\n  floor: the same SCRAM core and codec in a minimal uvloop protocol with none of the"
        "\n  endpoint's rules (no state machine, limits, deadlines, metrics): what any Python"
        "\n  server on uvloop pays per login for sockets, loop and SCRAM."
        "\n  Server CPU: the whole process's user + system time over the window, per login."
        "\n  Each figure: median [min-max] over the rounds."
        f"\n  This tree's SCRAM core: {_native.status()}."
    )
    if broker:
        print(
            f"  broker: Apache Kafka {_bench_broker.VERSION} (KRaft, broker and controller in "
            "one JVM, full JIT), started once and warmed up, same user and iterations;"
            "\n  not in the back-to-back re-auth row (one re-authentication per second per "
            "connection, KafkaChannel) nor the pipelined rows (no Java client pipelines)."
        )


def _ratios(results: dict[tuple[str, Row], list[Sample]], row: Row, new: str, old: Target) -> str:
    """``new`` / ``old`` within each round: logins/s and CPU per login."""
    pairs = list(zip(results[new, row], results[old.name, row], strict=True))
    line = f"{row.label} {new} / {old.name}: logins/s "
    # A paced row's rate is the pacing's, whoever serves it.
    line += (
        "(set by the pacing)"
        if row.interval_ms
        else span([a.rate / b.rate for a, b in pairs], ".2f")
    )
    line += f", server CPU per login {span([a.server_us / b.server_us for a, b in pairs], '.2f')}"
    if old.idle_cpu is not None:
        # A JVM works when idle too (its controller, timers, compiler, GC); at a
        # low rate that is a visible share of its CPU per login. Shown, not
        # taken off: sampled once, under a busy neighbour it can exceed the lot.
        idle_us = old.idle_cpu * 1e6 / statistics.median(b.rate for _, b in pairs)
        line += f"; {old.name}'s idle CPU is {idle_us:,.0f} us of its CPU per login here"
    return line


def java_style_section(baseline: Path | None, rounds: int, broker_warm_up_s: float | None) -> None:
    """Every row in alternating rounds: this tree's server, the baseline's, the floor
    and the broker (``broker_warm_up_s`` None: no broker)."""
    exe = build_client()
    trees = [("this tree", ROOT)] + ([("baseline", baseline)] if baseline else [])
    server_cpu, _ = cpus()
    _print_header(rounds, broker_warm_up_s is not None)
    results: dict[tuple[str, Row], list[Sample]] = {}
    with contextlib.ExitStack() as stack:
        kafka: Target | None = None
        if broker_warm_up_s is not None:
            kafka = stack.enter_context(_bench_broker.started(exe, server_cpu, broker_warm_up_s))
        for i in range(rounds):
            # Fresh server processes every round: one process's memory layout can
            # move its concurrency-1 rate by a few percent for its whole life, and
            # the rounds should average that out, not repeat it.
            servers = _start_servers([*trees, ("floor", ROOT)], server_cpu, exe)
            try:
                for row in ROWS:
                    targets = [servers[name][1] for name, _ in trees]
                    targets += [servers["floor"][1]] if row.floor else []
                    targets += [kafka] if row.broker and kafka else []
                    # Which server goes first alternates too: no order bias.
                    for target in targets[:: 1 if i % 2 == 0 else -1]:
                        port = target.reauth_port if row.mode == "reauth" else target.port
                        sample = java_style(
                            exe, target.pid, port, row.concurrency, row.mode, row.seconds,
                            row.interval_ms,
                        )  # fmt: skip
                        results.setdefault((target.name, row), []).append(sample)
            finally:
                for proc, _ in servers.values():
                    stop(proc)
    for row in ROWS:
        unit = "re-auth" if row.mode == "reauth" else "login"
        for (name, of_row), samples in results.items():
            if of_row == row:
                print(table_line(f"{row.label} {name:9s}", samples, unit))
    for row in ROWS:
        if baseline:
            print(_ratios(results, row, "this tree", Target("baseline", 0, 0, 0)))
        if row.broker and kafka is not None:
            print(_ratios(results, row, "this tree", kafka))


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
    from sasl_scram.endpoint import EndpointConfig
    from sasl_scram.endpoint import ScramEndpoint
    from sasl_scram.endpoint._metrics import AuthMetrics
    from sasl_scram.store import InMemoryCredentialStore
    from sasl_scram.store import ScramUpsertion

    store = InMemoryCredentialStore()
    store.alter([], [ScramUpsertion.from_password(USER, SCRAM_SHA_256, PASSWORD, ITERATIONS)])
    config = EndpointConfig.from_properties(
        {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "scram.credential.store.path": "unused.db"}
    )
    endpoint = ScramEndpoint(config, store)
    loop = uvloop.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(endpoint.start(), loop).result()
    counting = AuthMetrics("127.0.0.1", 0, lambda: endpoint.connections)
    server_cpu, _ = cpus()
    pin(os.getpid(), {server_cpu})  # the loop's thread too
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
        pin(os.getpid(), ALL_CPUS)
    ratios = [a.rate / b.rate for a, b in zip(results[True], results[False], strict=True)]
    print(
        "metrics A/B in process (Java-style logins, concurrency 10, metrics on / off in "
        f"alternating windows): logins/s ratio {span(ratios, '.3f')}; server CPU "
        f"{span([s.server_us for s in results[True]])} us/login on, "
        f"{span([s.server_us for s in results[False]])} us/login off"
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
        "--no-broker", action="store_true", help="without the Apache Kafka broker's rows"
    )
    parser.add_argument(
        "--broker-warm-up",
        type=float,
        default=_bench_broker.WARM_UP_S,
        metavar="SECONDS",
        help="the broker's unrecorded warm-up (default: %(default)s, long enough for C2)",
    )
    parser.add_argument(
        "--only-workers", action="store_true", help="the scram.workers rows only (a quick look)"
    )
    parser.add_argument(
        "--only-make-run", action="store_true", help="the make run rows only (a quick look)"
    )
    parser.add_argument(
        "--only-guessing", action="store_true", help="the password-guessing rows only"
    )
    parser.add_argument(
        "--only-logins",
        action="store_true",
        help="the login rows only (with --baseline: this tree against another, one run)",
    )
    args = parser.parse_args()
    if args.only_workers:
        _workers.workers_section(args.rounds)
        return
    if args.only_make_run:
        _make_run.make_run_section(args.rounds, _bench_server_process)
        return
    if args.only_guessing:
        _guessing.guessing_section()
        return
    warm_up = None if args.no_broker else args.broker_warm_up
    if args.only_logins:
        java_style_section(args.baseline, args.rounds, warm_up)
        return
    java_style_section(args.baseline, args.rounds, warm_up)
    _make_run.make_run_section(args.rounds, _bench_server_process)
    _workers.workers_section(args.rounds)
    _guessing.guessing_section()
    metrics_cost(args.rounds)
    if args.skip_tokens:
        return
    # Users and tokens against the same server, in alternating windows: the
    # ratio then compares like with like whatever the VM's neighbours do.
    logins = [(USER, PASSWORD)]
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
