"""The password-guessing rows of ``bench_endpoint.py``: the real ``kafka-scram
serve`` (SQLite store) against ``tests/support/guesser.py`` (its own process,
from 127.0.0.2), one sequential guessing connection and 1,000 concurrent ones,
with the failure budget off (Kafka's per-connection delay alone) and at its
defaults: wrong-password verdicts per second (docs/security.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _java_style import ROOT
from _java_style import USER
from _java_style import seed_bench_store
from _java_style import serve_port

#: (scram.login.failure.budget, guessing connections).
GUESSING_ROWS = ((0, 1), (0, 1000), (20, 1), (20, 1000))
GUESSING_S = 10.0


def _guess(budget: int, connections: int, base: Path) -> dict[str, float]:
    db = base / "credentials.db"
    seed_bench_store(db)
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
        argv = [sys.executable, "-m", "tests.support.guesser", str(port), USER]
        argv += [str(connections), str(GUESSING_S), "127.0.0.2"]
        # Its standard input stays open: it guesses for GUESSING_S, then reports.
        guesser = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        assert guesser.stdout is not None and guesser.stdin is not None
        out = guesser.stdout.read()
        guesser.stdin.close()
        guesser.wait(30)
        figures: dict[str, float] = json.loads(out.splitlines()[-1])
        return figures
    finally:
        serve.terminate()
        serve.wait(30)


def guessing_section() -> None:
    print(
        f"\nPassword guessing against one user, {GUESSING_S:.0f} s per row, the guesser from "
        "127.0.0.2\n  (connection.failed.authentication.delay.ms=100; budget 0 is Kafka's "
        "per-connection delay alone)"
    )
    with tempfile.TemporaryDirectory(prefix="bench-guessing-") as tmp:
        for budget, connections in GUESSING_ROWS:
            f = _guess(budget, connections, Path(tmp))
            print(
                f"guessing  budget={budget:<3d} connections={connections:<5d} "
                f"{f['verdicts'] / f['seconds']:8.1f} verdicts/s "
                f"({f['verdicts']:.0f} of {f['attempts']:.0f} guesses)"
            )
