"""Concurrent password guessing against a Kafka-protocol endpoint, as its own process.

``python -m tests.support.guesser PORT USER CONNECTIONS SECONDS [BIND_ADDRESS]``
keeps CONNECTIONS connections guessing USER's password (always wrong), each
connection one login after another, for SECONDS or until its standard input
closes. It prints ``ready`` once every connection has sent its first guess,
then, at the end, one JSON line: attempts made, verdicts received (a
SaslAuthenticate response to the final message), the seconds taken and its
own CPU seconds. A process of its own, so that the guessing costs the
measuring test's interpreter nothing; BIND_ADDRESS (a loopback address such
as 127.0.0.2) makes it a source address apart from the test's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import struct
import sys
import threading
import time
from typing import Any

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SaltedPasswordCache
from sasl_scram import ScramClient
from sasl_scram.kafka import decode_response
from sasl_scram.kafka import encode_request

__all__ = ["guess"]

SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36


async def _call(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    key: int,
    body: dict[str, Any],
    corr: int,
) -> dict[str, Any]:
    version = 1 if key == SASL_HANDSHAKE else 2
    writer.write(encode_request(key, version, corr, "guesser", body))
    (size,) = struct.unpack(">i", await reader.readexactly(4))
    _, answer = decode_response(key, version, await reader.readexactly(size))
    return answer


class _Guesser:
    def __init__(self, port: int, user: str, connections: int, bind: str) -> None:
        self.port, self.user, self.connections, self.bind = port, user, connections, bind
        self.attempts = self.verdicts = 0
        # One salted password for all: the guesser's own PBKDF2 must not be what limits it.
        self.cache = SaltedPasswordCache()

    async def connection(self) -> None:
        while True:
            try:
                reader, writer = await asyncio.open_connection(
                    "127.0.0.1", self.port, local_addr=(self.bind, 0)
                )
            except OSError:
                await asyncio.sleep(0.05)
                continue
            try:
                await self.attempt(reader, writer)
            except (OSError, asyncio.IncompleteReadError):
                pass  # closed by the login deadline: no verdict
            finally:
                writer.close()

    async def attempt(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        client = ScramClient(SCRAM_SHA_256, self.user, "not-the-password", key_cache=self.cache)
        await _call(reader, writer, SASL_HANDSHAKE, {"mechanism": "SCRAM-SHA-256"}, 1)
        first = await _call(
            reader, writer, SASL_AUTHENTICATE, {"auth_bytes": client.client_first()}, 2
        )
        final = client.receive_server_first(bytes(first["auth_bytes"]))
        self.attempts += 1
        if self.attempts == self.connections:
            print("ready", flush=True)
        answer = await _call(reader, writer, SASL_AUTHENTICATE, {"auth_bytes": final}, 3)
        if answer["error_code"] == 58:
            self.verdicts += 1


async def guess(
    port: int, user: str, connections: int, seconds: float, bind: str
) -> dict[str, Any]:
    """Guess for ``seconds`` (or until standard input closes); the counts."""
    guesser = _Guesser(port, user, connections, bind)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    threading.Thread(
        target=lambda: (sys.stdin.read(), loop.call_soon_threadsafe(stop.set)), daemon=True
    ).start()
    began = time.monotonic()
    tasks = [asyncio.create_task(guesser.connection()) for _ in range(connections)]
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
    elapsed = time.monotonic() - began
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return {
        "attempts": guesser.attempts,
        "verdicts": guesser.verdicts,
        "seconds": elapsed,
        "cpu_s": time.process_time(),
    }


def main(argv: list[str]) -> None:
    port, user, connections, seconds = int(argv[0]), argv[1], int(argv[2]), float(argv[3])
    bind = argv[4] if len(argv) > 4 else "127.0.0.1"
    print(json.dumps(asyncio.run(guess(port, user, connections, seconds, bind))), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
