"""The endpoint process for ``bench_endpoint.py``: in-memory stores, optional tokens.

Prints ``<port> <token_id> <hmac_b64> ...`` (a sample of tokens) on one line,
then serves until stdin closes.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import socket
import sys
import threading
import time

from sasl_scram import SCRAM_SHA_256, SCRAM_SHA_512, KafkaPrincipal
from sasl_scram.endpoint import EndpointConfig, ScramEndpoint
from sasl_scram.endpoint._busy_poll import BusyPoller
from sasl_scram.store import InMemoryCredentialStore, ScramUpsertion
from tokenauth import InMemoryTokenStore, RequestContext, TokenCache, TokenConfig, TokenManager
from tokenauth._endpoint import build_extension


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=0)
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--asyncio", action="store_true", help="asyncio's own loop, not uvloop")
    parser.add_argument("--echo", action="store_true", help="a do-nothing echo server instead")
    parser.add_argument("--max-reauth-ms", type=int, default=3_600_000)
    parser.add_argument("--busy-poll-us", type=int, default=0, help="scram.busy.poll.us")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if args.echo:
        serve_echo(args.busy_poll_us)
        return
    store = InMemoryCredentialStore()
    store.alter(
        [],
        [
            ScramUpsertion.from_password("bench", m, "bench-secret")
            for m in (SCRAM_SHA_256, SCRAM_SHA_512)
        ],
    )
    config = TokenConfig.of("bench-token-secret")
    tstore = InMemoryTokenStore()
    cache = TokenCache(tstore, config.secrets)
    manager = TokenManager(config, tstore, cache=cache)
    ctx = RequestContext(KafkaPrincipal.user("bench"), security_protocol="SASL_PLAINTEXT")
    sample = []
    for i in range(args.tokens):
        result = manager.create_token(ctx)
        if i < args.sample:
            sample.append(f"{result.token_id} {result.hmac_base64}")
    cfg = EndpointConfig.from_properties(
        {
            "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
            "scram.credential.store.path": "unused.db",
            # KIP-368: lets the benchmark re-authenticate on open connections.
            "connections.max.reauth.ms": str(args.max_reauth_ms),
            "scram.busy.poll.us": str(args.busy_poll_us),
        }
    )
    endpoint = ScramEndpoint(cfg, store, extensions=[build_extension(manager)])
    # The 're-auth' rows measure the exchange on open connections, many times a
    # second: lift Kafka's one re-authentication start per second (KafkaChannel),
    # which no configuration key offers, for this benchmark only.
    # (A baseline checkout from before the rule has no such field.)
    if any(f.name == "min_reauth_interval_ms" for f in dataclasses.fields(endpoint.settings)):
        endpoint.settings = dataclasses.replace(endpoint.settings, min_reauth_interval_ms=0)
    import uvloop

    loop = asyncio.new_event_loop() if args.asyncio else uvloop.new_event_loop()
    loop.run_until_complete(endpoint.start())
    port = endpoint.bound_address()[1]
    print(port, *sample, flush=True)

    stopped = asyncio.Event()

    def wait_stdin() -> None:
        sys.stdin.read()
        loop.call_soon_threadsafe(stopped.set)

    async def run_until_stopped() -> None:
        await stopped.wait()
        await endpoint.close(grace_seconds=1)

    threading.Thread(target=wait_stdin, daemon=True).start()
    loop.run_until_complete(run_until_stopped())
    loop.close()


class _Echo(asyncio.Protocol):
    def __init__(self, poller: BusyPoller | None) -> None:
        self._poller = poller

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport: asyncio.Transport = transport  # type: ignore[assignment]
        if self._poller is not None:
            self._poller.poke(time.monotonic())

    def data_received(self, data: bytes) -> None:
        if self._poller is not None:
            self._poller.poke(time.monotonic())
        self._transport.write(data)


def serve_echo(busy_poll_us: int) -> None:
    """The benchmark's ceiling: the same loop and sockets (and busy polling), no work at all."""
    import uvloop

    loop = uvloop.new_event_loop()
    poller = BusyPoller(loop, busy_poll_us / 1_000_000) if busy_poll_us else None
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = loop.run_until_complete(loop.create_server(lambda: _Echo(poller), sock=sock))
    print(sock.getsockname()[1], flush=True)
    done = loop.run_in_executor(None, sys.stdin.read)
    loop.run_until_complete(done)
    server.close()
    loop.close()


if __name__ == "__main__":
    main()
