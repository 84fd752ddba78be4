"""The endpoint process for ``bench_endpoint.py``: in-memory stores, optional tokens.

Prints ``<port> <token_id> <hmac_b64> ...`` (a sample of tokens) on one line,
then serves until stdin closes.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import struct
import sys
import threading
from typing import Any

from _java_style import ITERATIONS
from _java_style import PASSWORD
from _java_style import USER

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SCRAM_SHA_512
from sasl_scram import Grant
from sasl_scram import KafkaPrincipal
from sasl_scram import ScramServer
from sasl_scram.endpoint import EndpointConfig
from sasl_scram.endpoint import ScramEndpoint
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import decode_request
from sasl_scram.kafka import encode_response
from sasl_scram.kafka import encode_sasl_authenticate_response
from sasl_scram.store import InMemoryCredentialStore
from sasl_scram.store import ScramUpsertion
from tokenauth import InMemoryTokenStore
from tokenauth import TokenCache
from tokenauth import TokenConfig
from tokenauth import TokenManager
from tokenauth._endpoint import build_extension

try:
    from tokenauth import TokenRequester
except ImportError:  # a --baseline tree from before the name (same class)
    from tokenauth import RequestContext as TokenRequester  # type: ignore[attr-defined,no-redef]

# The floor server's ApiVersions: what a Java client needs to log in.
FLOOR_APIS = ((ApiKey.SASL_HANDSHAKE, 1), (ApiKey.API_VERSIONS, 3), (ApiKey.SASL_AUTHENTICATE, 2))
# A cached answer's frame size and correlation id.
_CORRELATION = struct.Struct(">ii")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=0)
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--asyncio", action="store_true", help="asyncio's own loop, not uvloop")
    parser.add_argument("--floor", action="store_true", help="the floor server instead")
    parser.add_argument("--max-reauth-ms", type=int, default=3_600_000)
    parser.add_argument("--busy-poll-us", type=int, default=0, help="scram.busy.poll.us")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    store = InMemoryCredentialStore()
    store.alter(
        [],
        [
            ScramUpsertion.from_password(USER, m, PASSWORD, ITERATIONS)
            for m in (SCRAM_SHA_256, SCRAM_SHA_512)
        ],
    )
    if args.floor:
        serve_floor(store)
        return
    config = TokenConfig.of("bench-token-secret")
    tstore = InMemoryTokenStore()
    cache = TokenCache(tstore, config.secrets)
    manager = TokenManager(config, tstore, cache=cache)
    ctx = TokenRequester(KafkaPrincipal.user(USER), security_protocol="SASL_PLAINTEXT")
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


class _Floor(asyncio.Protocol):
    """The floor: one login as Kafka's Java client does it, with the same SCRAM
    core and codec and nothing else. No state machine, limits, deadlines, metrics
    or back-pressure: it trusts its peer, so it is for measuring only. What it
    costs per login is what any Python server on uvloop pays for the sockets,
    the loop and the SCRAM exchange."""

    def __init__(self, lookup: Any, answers: dict[int, bytes]) -> None:
        self._lookup = lookup
        self._answers = answers  # framed ApiVersions and SaslHandshake answers
        self._scram: ScramServer | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport: asyncio.Transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        header, _, body = decode_request(data[4:])
        if header.api_key in self._answers:
            if header.api_key == ApiKey.SASL_HANDSHAKE:
                self._scram = ScramServer(SCRAM_SHA_256)
            answer = self._answers[header.api_key]
            self._transport.write(
                _CORRELATION.pack(len(answer) - 4, header.correlation_id) + answer[8:]
            )
            return
        scram = self._scram
        assert scram is not None
        if scram.expects_client_first:
            request = scram.receive_client_first(body["auth_bytes"])
            token = scram.provide(Grant.of(self._lookup(request.username, request.mechanism)))
        else:
            token = scram.receive_client_final(body["auth_bytes"])
        self._transport.write(
            encode_sasl_authenticate_response(
                header.api_version, header.correlation_id, 0, None, token, 0
            )
        )

    def eof_received(self) -> None:
        self._transport.close()


def serve_floor(store: InMemoryCredentialStore) -> None:
    """Serve :class:`_Floor` on uvloop until stdin closes."""
    import uvloop

    versions = [{"api_key": k, "min_version": 0, "max_version": v} for k, v in FLOOR_APIS]
    answers = {
        ApiKey.API_VERSIONS: encode_response(
            ApiKey.API_VERSIONS, 3, 0, {"error_code": 0, "api_keys": versions}
        ),
        ApiKey.SASL_HANDSHAKE: encode_response(
            ApiKey.SASL_HANDSHAKE, 1, 0, {"error_code": 0, "mechanisms": ["SCRAM-SHA-256"]}
        ),
    }
    loop = uvloop.new_event_loop()
    server = loop.run_until_complete(
        loop.create_server(lambda: _Floor(store.lookup, answers), "127.0.0.1", 0, backlog=512)
    )
    print(server.sockets[0].getsockname()[1], flush=True)
    done = loop.run_in_executor(None, sys.stdin.read)
    loop.run_until_complete(done)
    server.close()
    loop.close()


if __name__ == "__main__":
    main()
