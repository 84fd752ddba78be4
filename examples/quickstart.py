"""Quickstart: a full SCRAM-SHA-512 exchange in memory, as Kafka speaks it.

Creates a credential the way a broker stores it, runs our client against our
server, and prints every message with the proof and signature masked.
Run with ``make run``.
"""

from __future__ import annotations

import argparse
import re

from _example import OneLineParser

from sasl_scram import SCRAM_SHA_512
from sasl_scram import Grant
from sasl_scram import ScramClient
from sasl_scram import ScramCredential
from sasl_scram import ScramServer

USER = "alice"
PASSWORD = "alice-secret"  # demo only; never print real passwords


def mask(message: bytes) -> str:
    """Hide the proof (p=) and server signature (v=): they are derived from secrets."""
    return re.sub(r"\b([pv])=[^,]+", r"\1=<masked>", message.decode("ascii"))


def main() -> None:
    credential = ScramCredential.from_password(SCRAM_SHA_512, PASSWORD, iterations=4096)
    print(f"1. stored credential for {USER!r}: {credential!r}")
    print("   (kafka-scram credential prints the full Kafka string; keys stay hidden here)")

    def lookup(request: object) -> Grant | None:
        return Grant.of(credential) if getattr(request, "username", None) == USER else None

    server = ScramServer(SCRAM_SHA_512, lookup=lookup)
    client = ScramClient(SCRAM_SHA_512, USER, PASSWORD)

    client_first = client.client_first()
    print(f"2. client -> server  client-first : {mask(client_first)}")
    server_first = server.step(client_first)
    print(f"3. server -> client  server-first : {mask(server_first)}")
    client_final = client.receive_server_first(server_first)
    print(f"4. client -> server  client-final : {mask(client_final)}")
    server_final = server.step(client_final)
    print(f"5. server -> client  server-final : {mask(server_final)}")
    client.receive_server_final(server_final)
    session = server.session
    print(
        f"6. authenticated: principal User:{session.authorization_id}, "
        f"mechanism {session.mechanism}, token={session.token_authenticated}, "
        f"client verified server: {client.complete}"
    )


if __name__ == "__main__":
    # It takes no arguments; parsing them still gives --help and refuses a typo.
    OneLineParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    ).parse_args()
    main()
