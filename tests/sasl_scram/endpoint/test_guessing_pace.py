"""Concurrent guessing connections against one user, on a real ``serve``.

Measured over real sockets: the guesses per second that reach a verdict, the
login rate of honest users meanwhile, and the server's memory. The guesser
runs as its own process, from another loopback address (127.0.0.2) than the
honest users (127.0.0.1), or from theirs: the failure budget paces the
(name, address) pair, so 200 connections guessing alice's password from
127.0.0.1 must slow neither bob's logins from that address nor alice's own
from 127.0.0.2. Timed bounds are generous; the figures are in
docs/security.md. One module, so that one xdist worker runs both attacks,
one after the other.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sasl_scram import SaltedPasswordCache
from sasl_scram.store import SQLiteCredentialStore
from tests.sasl_scram.endpoint.serve_process import Peer
from tests.sasl_scram.endpoint.serve_process import Serve
from tests.sasl_scram.endpoint.serve_process import seed
from tests.support.cli_process import child_env
from tests.support.endpoint_harness import ADMIN
from tests.support.endpoint_harness import ALICE
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


#: The guessing connections at alice from the honest users' own address.
PAIR_GUESSERS = 200
#: connection.failed.authentication.delay.ms at its default (KIP-306).
KAFKA_DELAY_S = 0.1
#: What Kafka's delay alone lets the guessers reach: one verdict per delay each.
KAFKA_ALLOWS = PAIR_GUESSERS / KAFKA_DELAY_S
#: The budget's defaults: failures of one pair before pacing, then one per second.
PAIR_BUDGET, INTERVAL_S = 20, 1.0
#: The share of their unattacked rate that the honest logins must keep.
PAIR_HONEST_SHARE = 0.8


def _rate_from(port: int, user: tuple[str, str], source: str, seconds: float) -> float:
    """Logins per second of ``user``, one after another, from ``source``."""
    cache = SaltedPasswordCache()
    done = 0
    began = time.monotonic()
    while time.monotonic() - began < seconds:
        with Peer(port, timeout=seconds, source=source) as peer:
            try:
                assert peer.login(*user, cache=cache)["error_code"] == 0
            except TimeoutError:
                break  # held behind the guesses: locked out for the rest of the span
        done += 1
    return done / max(time.monotonic() - began, seconds)


def _start_pair_guessing(port: int) -> subprocess.Popen[str]:
    """The guesser at alice from 127.0.0.1, once every connection has guessed once."""
    argv = [sys.executable, "-m", "tests.support.guesser", str(port), ALICE[0]]
    argv += [str(PAIR_GUESSERS), "120", "127.0.0.1"]
    guesser = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=child_env()
    )
    assert guesser.stdout is not None
    assert guesser.stdout.readline().strip() == "ready"
    return guesser


def _pair_honest(port: int) -> dict[str, Callable[[float], float]]:
    return {
        "bob from the guesser's address": lambda s: _rate_from(port, BOB, "127.0.0.1", s),
        "alice from another address": lambda s: _rate_from(port, ALICE, "127.0.0.2", s),
    }


def _pair_round(serve: Serve) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """The honest rates without the attack, under it, and the guesser's figures.

    Without the attack is the mean of before it and after it: the machine's
    load drifts over the round, and the two bracket the attack. After it, a
    budget that still paced the honest logins would show as well.
    """
    honest = _pair_honest(serve.port)
    for rate in honest.values():
        rate(0.5)  # warm up (imports, caches)
    before = {name: rate(2.0) for name, rate in honest.items()}
    guesser = _start_pair_guessing(serve.port)
    try:
        # The wave of first guesses costs what any 200 logins cost; then they wait.
        time.sleep(1.0)
        attacked = {name: rate(3.0) for name, rate in honest.items()}
        out, _ = guesser.communicate("", timeout=60)
    finally:
        guesser.kill()
        guesser.wait()
    after = {name: rate(2.0) for name, rate in honest.items()}
    alone = {name: (before[name] + after[name]) / 2 for name in honest}
    return alone, attacked, json.loads(out)


@pytest.mark.slow
def test_guessing_from_one_address_slows_only_the_pair_it_guesses(tmp_path: Path) -> None:
    db = tmp_path / "store.db"
    seed(db)
    store = SQLiteCredentialStore(db, poll_interval=0)
    try:
        seed_users(store, [BOB])
    finally:
        store.close()
    # The machine is shared (2 cores, the guesser's process among them, and
    # the suite's other worker): its load swings a rate by half from one
    # second to the next (docs/security.md). A round that keeps both rates
    # passes; a lockout (honest logins held behind the guesses) fails every
    # round. Each round has a fresh serve, so that its rates without the
    # attack are measured before any failure counts.
    for attempt in range(5):
        with Serve(tmp_path / f"round-{attempt}", db, {}) as serve:
            alone, attacked, figures = _pair_round(serve)
        verdicts_per_s = figures["verdicts"] / figures["seconds"]
        print(
            f"\nguessing: {figures['attempts']} attempts, {figures['verdicts']} verdicts "
            f"in {figures['seconds']:.1f} s ({verdicts_per_s:.1f}/s, Kafka's delay alone "
            f"allows {KAFKA_ALLOWS:.0f}/s); honest logins/s alone -> under attack: "
            + ", ".join(f"{name} {alone[name]:.0f} -> {attacked[name]:.0f}" for name in alone)
        )
        assert figures["attempts"] >= PAIR_GUESSERS, figures  # the attack did run
        assert min(alone.values()) >= 20, alone  # a baseline worth comparing with
        assert verdicts_per_s <= 0.25 * KAFKA_ALLOWS, figures
        # The pair's budget, then one verdict per interval.
        assert figures["verdicts"] <= PAIR_BUDGET + figures["seconds"] / INTERVAL_S + 5, figures
        if all(attacked[name] >= PAIR_HONEST_SHARE * alone[name] for name in alone):
            break
    for name in alone:
        assert attacked[name] >= PAIR_HONEST_SHARE * alone[name], (name, alone, attacked)
