"""The password-guessing rows of ``bench_endpoint.py``: the real ``kafka-scram
serve`` (SQLite store) against ``tests/support/guesser.py`` (its own process,
from 127.0.0.2), one sequential guessing connection and 1,000 concurrent ones,
with the failure budget off (Kafka's per-connection delay alone) and at its
defaults: wrong-password verdicts per second, and the sequential logins per
second of another, honest user from the guesser's own address (127.0.0.2),
without the attack (before and after it) and under it: the budget paces the
(name, address) pair, so it must not slow that user (docs/security.md)."""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _java_style import ROOT
from _java_style import USER
from _java_style import seed_bench_store
from _java_style import serve_port

#: (scram.login.failure.budget, guessing connections).
GUESSING_ROWS = ((0, 1), (0, 1000), (20, 1), (20, 1000))
GUESSING_S = 10.0
#: The honest user, who logs in from the guesser's address.
HONEST = ("bench-honest", "bench-honest-secret")
GUESSER_ADDRESS = "127.0.0.2"
#: How long the honest user's rate is measured, alone and under the attack.
HONEST_S = 3.0
SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36


def _seed_honest(db: Path) -> None:
    from sasl_scram import SCRAM_SHA_256
    from sasl_scram.store import ScramUpsertion
    from sasl_scram.store import SQLiteCredentialStore

    store = SQLiteCredentialStore(db, poll_interval=0)
    try:
        store.alter([], [ScramUpsertion.from_password(HONEST[0], SCRAM_SHA_256, HONEST[1])])
    finally:
        store.close()


def _call(sock: socket.socket, key: int, corr: int, body: dict[str, Any]) -> dict[str, Any]:
    from sasl_scram.kafka import decode_response
    from sasl_scram.kafka import encode_request

    version = 1 if key == SASL_HANDSHAKE else 2
    sock.sendall(encode_request(key, version, corr, "honest", body))
    header = sock.recv(4, socket.MSG_WAITALL)
    if len(header) < 4:
        raise ConnectionError("closed by the server")
    (size,) = struct.unpack(">i", header)
    _, answer = decode_response(key, version, sock.recv(size, socket.MSG_WAITALL))
    return answer


def _honest_rate(port: int, seconds: float) -> float:
    """The honest user's logins per second, one after another, from the guesser's
    address; a login held past the span ends it (its rate counts what was done)."""
    from sasl_scram import SCRAM_SHA_256
    from sasl_scram import SaltedPasswordCache
    from sasl_scram import ScramClient

    cache = SaltedPasswordCache()
    done = 0
    began = time.monotonic()
    while time.monotonic() - began < seconds:
        address = ("127.0.0.1", port)
        with socket.create_connection(address, seconds, (GUESSER_ADDRESS, 0)) as sock:
            client = ScramClient(SCRAM_SHA_256, *HONEST, key_cache=cache)
            try:
                _call(sock, SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-256"})
                first = _call(sock, SASL_AUTHENTICATE, 2, {"auth_bytes": client.client_first()})
                final = client.receive_server_first(bytes(first["auth_bytes"]))
                answer = _call(sock, SASL_AUTHENTICATE, 3, {"auth_bytes": final})
            except TimeoutError:
                break
        done += answer["error_code"] == 0
    return done / max(time.monotonic() - began, seconds)


def _guess(budget: int, connections: int, base: Path) -> dict[str, float]:
    db = base / "credentials.db"
    seed_bench_store(db)
    _seed_honest(db)
    config = base / f"guessing-{budget}.properties"
    config.write_text(
        "listeners=SASL_PLAINTEXT://127.0.0.1:0\n"
        f"scram.credential.store.path={db}\nscram.login.failure.budget={budget}\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    serve = subprocess.Popen(
        [str(Path(sys.executable).parent / "kafka-scram"), "serve", "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        port = serve_port(serve)
        _honest_rate(port, 0.5)  # warm up (imports, caches)
        alone = _honest_rate(port, HONEST_S)
        argv = [sys.executable, "-m", "tests.support.guesser", str(port), USER]
        argv += [str(connections), str(GUESSING_S), GUESSER_ADDRESS]
        # Its standard input stays open: it guesses for GUESSING_S, then reports.
        guesser = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        assert guesser.stdout is not None and guesser.stdin is not None
        assert guesser.stdout.readline().strip() == "ready"
        time.sleep(1.0)  # the wave of first guesses answered
        attacked = _honest_rate(port, HONEST_S)
        out = guesser.stdout.read()
        guesser.stdin.close()
        guesser.wait(30)
        figures: dict[str, float] = json.loads(out.splitlines()[-1])
        # Alone: the mean of before and after the attack, which bracket it
        # while the machine's load drifts.
        alone = (alone + _honest_rate(port, HONEST_S)) / 2
        return {**figures, "honest_alone": alone, "honest_attacked": attacked}
    finally:
        serve.terminate()
        serve.wait(30)


def guessing_section() -> None:
    print(
        f"\nPassword guessing against one user, {GUESSING_S:.0f} s per row, the guesser from "
        f"{GUESSER_ADDRESS}\n  (connection.failed.authentication.delay.ms=100; budget 0 is "
        "Kafka's per-connection delay alone); another user's sequential logins/s from the "
        "same address,\n  alone and under the attack"
    )
    with tempfile.TemporaryDirectory(prefix="bench-guessing-") as tmp:
        for budget, connections in GUESSING_ROWS:
            f = _guess(budget, connections, Path(tmp))
            print(
                f"guessing  budget={budget:<3d} connections={connections:<5d} "
                f"{f['verdicts'] / f['seconds']:8.1f} verdicts/s "
                f"({f['verdicts']:.0f} of {f['attempts']:.0f} guesses)   same-address user "
                f"{f['honest_alone']:6.0f} -> {f['honest_attacked']:6.0f} logins/s "
                f"({f['honest_attacked'] / f['honest_alone']:.0%})"
            )
