"""``make bench``, part 2: the endpoint and delegation tokens.

* Full SCRAM authentications per second for one server process, driven by our
  own client (with its salted-password cache) from another process, at 1, 10
  and 100 concurrent connections. Target: at least 5,000 per second.
* Token authentications per second with 100,000 live tokens cached.
  Target: the same as user authentication.
* A sweep of 100,000 expired tokens. Target: at most 200 ms.
* Memory per cached token.
"""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from sasl_scram import SCRAM_SHA_256, KafkaPrincipal, SaltedPasswordCache, ScramClient
from sasl_scram.kafka import FrameBuffer, decode_response, encode_request

DURATION_S = 3.0
ROOT = Path(__file__).resolve().parent.parent


class _LoginProtocol(asyncio.Protocol):
    """A lean client connection: one SCRAM login, then close.

    A protocol rather than streams keeps the load generator's own overhead low,
    so the figure reflects the server.
    """

    def __init__(self, user: str, password: str, token: bool, cache: SaltedPasswordCache) -> None:
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._frames = FrameBuffer(1 << 20)
        self._client = ScramClient(SCRAM_SHA_256, user, password, token_auth=token, key_cache=cache)
        self._step = 0
        self._transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]
        transport.write(encode_request(17, 1, 1, "bench", {"mechanism": "SCRAM-SHA-256"}))  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        self._frames.feed(data)
        while (payload := self._frames.next_frame()) is not None:
            self._on_frame(payload)

    def _on_frame(self, payload: bytes) -> None:
        assert self._transport is not None
        self._step += 1
        if self._step == 1:
            self._transport.write(
                encode_request(36, 2, 2, "bench", {"auth_bytes": self._client.client_first()})
            )
            return
        _, body = decode_response(36, 2, payload)
        if body["error_code"]:
            self.done.set_exception(ConnectionError(body["error_message"]))
            self._transport.close()
        elif self._step == 2:
            final = self._client.receive_server_first(body["auth_bytes"])
            self._transport.write(encode_request(36, 2, 3, "bench", {"auth_bytes": final}))
        else:
            self._client.receive_server_final(body["auth_bytes"])
            self._transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            if self._client.complete:
                self.done.set_result(None)
            else:
                self.done.set_exception(exc or ConnectionError("closed before the login completed"))


async def authenticate(
    port: int, user: str, password: str, token: bool, cache: SaltedPasswordCache
) -> None:
    loop = asyncio.get_running_loop()
    _, protocol = await loop.create_connection(
        lambda: _LoginProtocol(user, password, token, cache), "127.0.0.1", port
    )
    await protocol.done


async def rate(port: int, logins: list[tuple[str, str]], token: bool, concurrency: int) -> float:
    cache = SaltedPasswordCache(maxsize=len(logins) + 10)
    # Warm the client cache (and the server's lazily derived token credentials).
    for user, password in logins:
        await authenticate(port, user, password, token, cache)
    done = 0
    deadline = time.perf_counter() + DURATION_S

    async def worker(i: int) -> None:
        nonlocal done
        n = i
        while time.perf_counter() < deadline:
            user, password = logins[n % len(logins)]
            await authenticate(port, user, password, token, cache)
            done += 1
            n += concurrency

    start = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    return done / (time.perf_counter() - start)


def start_server(
    tokens: int, loop: str = "uvloop"
) -> tuple[subprocess.Popen[str], int, list[tuple[str, str]]]:
    flags = ["--asyncio"] if loop == "asyncio" else []
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "_bench_server.py"), "--tokens", str(tokens), *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
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


def token_sweep_and_memory(n: int) -> tuple[float, float]:
    from tokenauth import InMemoryTokenStore, RequestContext, TokenCache, TokenConfig, TokenManager

    clock = [1_000_000]
    config = TokenConfig.of("bench-secret", max_lifetime_ms=1000, expiry_time_ms=1000)
    store = InMemoryTokenStore()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    cache = TokenCache(store, config.secrets)
    manager = TokenManager(config, store, cache=cache, clock_ms=lambda: clock[0])
    ctx = RequestContext(KafkaPrincipal.user("bench"), security_protocol="SASL_PLAINTEXT")
    for _ in range(n):
        manager.create_token(ctx)
    per_token = (tracemalloc.get_traced_memory()[0] - before) / n
    tracemalloc.stop()
    clock[0] += 10_000
    # Start from a settled heap, as an hourly sweep does, not mid-way through
    # the garbage the 100,000 creations above left behind.
    gc.collect()
    start = time.perf_counter()
    removed = manager.sweep()
    elapsed = time.perf_counter() - start
    assert len(removed) == n
    return elapsed, per_token


def run(coro: Coroutine[Any, Any, float], loop: str) -> float:
    if loop == "uvloop":
        import uvloop

        return uvloop.run(coro)
    return asyncio.run(coro)


def main() -> None:
    print("\nkafka-scram endpoint benchmark (server in its own process; our client in this one)")
    user_rates: dict[tuple[str, int], float] = {}
    for loop in ("uvloop", "asyncio"):
        proc, port, _ = start_server(0, loop)
        try:
            for c in (1, 10, 100):
                rate_ = run(rate(port, [("bench", "bench-secret")], False, c), loop)
                user_rates[loop, c] = rate_
                print(
                    f"user authentications/s  {loop:8s} concurrency {c:3d}: {rate_:8.0f}"
                    f"   (target >= 5000)"
                )
        finally:
            stop(proc)
    proc, port, sample = start_server(100_000)
    try:
        token_rate = run(rate(port, sample, True, 10), "uvloop")
    finally:
        stop(proc)
    print(
        f"token authentications/s uvloop   concurrency  10: {token_rate:8.0f}   with 100,000 live "
        f"tokens cached, {len(sample)} in rotation; ratio to users "
        f"{token_rate / user_rates['uvloop', 10]:.2f} (target ~1.0)"
    )
    elapsed, per_token = token_sweep_and_memory(100_000)
    print(f"sweep of 100,000 expired tokens: {elapsed * 1000:8.1f} ms   (target <= 200 ms)")
    print(
        "memory per cached token (info + HMAC; SCRAM credentials derived on first login): "
        f"{per_token:6.0f} bytes"
    )


if __name__ == "__main__":
    main()
