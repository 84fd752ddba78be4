"""A thousand concurrent guessing connections against one user, on a real ``serve``.

Measured over real sockets: the guesses per second that reach a verdict, the
login rate of other, honest users meanwhile, and the server's memory. The
guesser runs as its own process from another loopback address (127.0.0.2),
the honest users from 127.0.0.1. Timed bounds are generous; the figures are
in docs/security.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sasl_scram import SaltedPasswordCache
from sasl_scram.store import SQLiteCredentialStore
from tests.sasl_scram.endpoint.serve_process import Peer
from tests.sasl_scram.endpoint.serve_process import Serve
from tests.sasl_scram.endpoint.serve_process import seed
from tests.support.cli_process import child_env
from tests.support.endpoint_harness import ADMIN
from tests.support.endpoint_harness import seed_users

BOB = ("bob", "bob-secret")
GUESSERS = 1000
#: The honest login rate kept under attack that a round must show (see the test).
HONEST_SHARE = 0.75


def _honest_rate(port: int, seconds: float) -> float:
    """Logins per second of admin and bob, one after another, from 127.0.0.1."""
    cache = SaltedPasswordCache()
    done = 0
    began = time.monotonic()
    while time.monotonic() - began < seconds:
        with Peer(port) as peer:
            user = ADMIN if done % 2 else BOB
            assert peer.login(*user, cache=cache)["error_code"] == 0
        done += 1
    return done / (time.monotonic() - began)


def _start_guessing(port: int) -> subprocess.Popen[str]:
    """The guesser, once every connection has sent its first guess."""
    argv = [sys.executable, "-m", "tests.support.guesser", str(port), "alice"]
    argv += [str(GUESSERS), "120", "127.0.0.2"]
    guesser = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=child_env()
    )
    assert guesser.stdout is not None
    assert guesser.stdout.readline().strip() == "ready"
    return guesser


def _round(serve: Serve) -> tuple[float, float, dict[str, float], int]:
    """Honest logins alone, then under a thousand guessing connections: both rates,
    the guesser's figures and the server's RSS growth meanwhile."""
    alone = _honest_rate(serve.port, 2.0)
    rss_before = serve.rss()
    guesser = _start_guessing(serve.port)
    try:
        # The wave of a thousand first guesses costs the server what any
        # thousand logins cost; once it is answered they wait for their turn.
        time.sleep(1.0)
        attacked = _honest_rate(serve.port, 3.0)
        growth = serve.rss() - rss_before
        out, _ = guesser.communicate("", timeout=60)
    finally:
        guesser.kill()
        guesser.wait()
    return alone, attacked, json.loads(out), growth


@pytest.mark.slow
def test_a_thousand_guessers_get_few_verdicts_and_honest_users_keep_their_pace(
    tmp_path: Path,
) -> None:
    db = tmp_path / "store.db"
    seed(db)
    store = SQLiteCredentialStore(db, poll_interval=0)
    try:
        seed_users(store, [BOB])
    finally:
        store.close()
    with Serve(tmp_path, db, {}) as serve:
        _honest_rate(serve.port, 0.5)  # warm up (imports, caches)
        # The machine is shared: its load swings the honest rate by a third from
        # one second to the next, and the guessers' own process takes a share of
        # the same two cores (a remote attacker's would not). The target is 90%
        # (docs/security.md: 267/s against 271/s alone); under the whole suite's
        # load CI measured 85%. A round that keeps 75% passes; an attack that
        # starved honest users (held verdicts blocking the loop) fails every round.
        for _ in range(3):
            alone, attacked, figures, growth = _round(serve)
            verdicts_per_s = figures["verdicts"] / figures["seconds"]
            print(
                f"\nguessing: {figures['attempts']} attempts, {figures['verdicts']} verdicts "
                f"in {figures['seconds']:.1f} s ({verdicts_per_s:.1f}/s); honest logins "
                f"{alone:.0f}/s alone, {attacked:.0f}/s under attack; RSS +{growth >> 10} KiB"
            )
            assert figures["attempts"] >= GUESSERS, figures  # the attack did run
            # The budget (20 failures), then one verdict per second per name and
            # per address: a few dozen verdicts in all, where the KIP-306 delay
            # alone lets a thousand connections through ten times a second each.
            assert figures["verdicts"] < 20 + 2 * figures["seconds"] + 10, figures
            # A thousand held connections and two budget tables of a few entries.
            assert growth < 64 << 20
            if attacked >= HONEST_SHARE * alone:
                break
        assert attacked >= HONEST_SHARE * alone, (alone, attacked)
