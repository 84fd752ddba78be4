"""Soak ``kafka-scram serve`` under churn and watch its resources (``make soak``).

    python bench/soak.py --minutes 30      # SOAK_MINUTES in make soak

One real ``serve`` process (SQLite store, metrics on) takes, for the whole
run, in one-minute rounds:

- logins at ``--concurrency`` (1000) from the Java-style load generator
  (``bench/java_style_client.c``), as a stable user;
- KIP-368 re-authentications on open connections (10 connections);
- wrong passwords (5 connections) at another user, from the same address
  (127.0.0.1) as the honest logins, each a failed login: the failure budget
  (its defaults) paces the guessed (name, address) pair, and must neither let
  more than its pace through nor slow anyone else (docs/security.md);
- peers that vanish mid-exchange: connect, send part of a login, reset;
- a credential change every ``--churn-seconds`` (3) through the store: a
  second user's password is replaced, and a login with the new one must work
  at once, one with the old one must fail.

Every minute it samples the server's RSS, open descriptors, asyncio tasks
and connections (``/proc`` and ``/metrics``). It passes when, after the
warm-up (the first quarter of the samples, at least two), no series grows
(its fitted slope, projected over the measured span, stays within noise: 10%
of its mean, or 2 descriptors/tasks), no login that should succeed failed,
each minute's wrong passwords were refused at the budget's pace (some held,
none beyond it), and no traceback reached the server's log. It writes ``soak.md`` (the
samples and the verdict) and ``soak.png`` (matplotlib) to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sasl_scram import SCRAM_SHA_256  # noqa: E402
from sasl_scram.admin import KafkaConnection  # noqa: E402
from sasl_scram.admin import KafkaConnectionError  # noqa: E402
from sasl_scram.admin import SaslCredentials  # noqa: E402
from sasl_scram.kafka import encode_request  # noqa: E402
from sasl_scram.store import ScramUpsertion  # noqa: E402
from sasl_scram.store import open_store  # noqa: E402
from tests.support.polling import wait_until  # noqa: E402
from tests.support.zookeeper_server import free_port  # noqa: E402

STABLE = ("soak", "soak-password")
CHURN_USER = "churn"
#: The user the wrong passwords are tried at, and one of them.
GUESSED = ("guessed", "guessed-password")
WRONG = "not-the-password"
#: The failure budget's defaults (scram.login.failure.budget, .interval.ms):
#: the guessed pair's 20 failures, then one verdict a second.
BUDGET, INTERVAL_S = 20, 1.0
SERIES = ("rss_mb", "fds", "tasks", "connections")
#: How soon a credential change made through the store must be served.
FOLLOW_S = 5.0
#: The wrong-password load never stops reconnecting (the generator's MAX_ERRORS).
ENDLESS = str(10**12)


def _within(seconds: float, condition: Callable[[], bool]) -> bool:
    return wait_until(condition, seconds, 0.05) is not None


@dataclass
class Sample:
    minute: float
    rss_mb: float
    fds: int
    tasks: int
    connections: int
    logins: int
    login_errors: int
    reauths: int
    reauth_errors: int
    refused: int
    slowed: int
    seconds: float


@dataclass
class Soak:
    directory: Path
    port: int = field(default_factory=free_port)
    metrics_port: int = field(default_factory=free_port)
    failures: list[str] = field(default_factory=list)
    churned: int = 0

    @property
    def store_path(self) -> Path:
        return self.directory / "credentials.db"

    def start_server(self) -> subprocess.Popen[bytes]:
        config = self.directory / "server.properties"
        config.write_text(
            f"listeners=SASL_PLAINTEXT://127.0.0.1:{self.port}\n"
            "sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512\n"
            "super.users=User:admin\n"
            f"scram.credential.store.path={self.store_path}\n"
            f"scram.metrics.listener=127.0.0.1:{self.metrics_port}\n"
            "connections.max.reauth.ms=3600000\n"
            "connection.failed.authentication.delay.ms=0\n"
            # socket.listen.backlog.size keeps its default (4096): the soak is
            # what showed that 1000 reconnecting clients overflow 512.
        )
        store = open_store(f"sqlite:{self.store_path}")
        try:
            upserts = [ScramUpsertion.from_password(STABLE[0], SCRAM_SHA_256, STABLE[1])]
            upserts.append(ScramUpsertion.from_password(CHURN_USER, SCRAM_SHA_256, "churn-0"))
            upserts.append(ScramUpsertion.from_password(GUESSED[0], SCRAM_SHA_256, GUESSED[1]))
            store.alter([], upserts)
        finally:
            store.close()
        log = (self.directory / "serve.log").open("wb")
        server = subprocess.Popen(
            [str(Path(sys.executable).parent / "kafka-scram"), "serve", "--config", str(config)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        deadline = time.monotonic() + 30
        while not self._answers():
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"soak: error: serve did not start; see {log.name}")
            time.sleep(0.2)
        return server

    def _answers(self) -> bool:
        try:
            self.metrics()
        except OSError:
            return False
        return True

    def metrics(self) -> dict[str, float]:
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as r:
            text = r.read().decode()
        out: dict[str, float] = {}
        for match in re.finditer(r"^(kafka_scram_[a-z_]+)(?:\{[^}]*\})? (\S+)$", text, re.M):
            out[match[1]] = out.get(match[1], 0.0) + float(match[2])
        return out

    # -- the churn ------------------------------------------------------------

    def churn(self, stop: threading.Event, every: float) -> None:
        """Replace a user's password through the store (another process, as an
        operator's command is); within ``FOLLOW_S`` the new one logs in and the
        old one is refused (serve polls the SQLite change log every 0.2 s)."""
        store = open_store(f"sqlite:{self.store_path}")
        try:
            old = "churn-0"
            while not stop.wait(every):
                self.churned += 1
                new = f"churn-{self.churned}"
                store.alter([], [ScramUpsertion.from_password(CHURN_USER, SCRAM_SHA_256, new)])
                if not _within(FOLLOW_S, lambda p=new: self._logs_in(p)):  # type: ignore[misc]
                    self.failures.append(f"changed password {self.churned} did not log in")
                if not _within(FOLLOW_S, lambda p=old: not self._logs_in(p)):  # type: ignore[misc]
                    self.failures.append(f"replaced password {self.churned - 1} still logs in")
                old = new
        finally:
            store.close()

    def _logs_in(self, password: str) -> bool:
        credentials = SaslCredentials(SCRAM_SHA_256, CHURN_USER, password)
        try:
            with KafkaConnection(f"127.0.0.1:{self.port}", credentials, timeout=30):
                return True
        except KafkaConnectionError:
            return False

    def vanish(self, stop: threading.Event) -> None:
        """Peers that reset the connection at a random point of a login."""
        rng = random.Random(28)
        versions = encode_request(18, 3, 1, "vanishing", {"client_software_name": "v"})
        handshake = encode_request(17, 1, 2, "vanishing", {"mechanism": "SCRAM-SHA-256"})
        first = encode_request(36, 2, 3, "vanishing", {"auth_bytes": b"n,,n=soak,r=abcdefgh"})
        login = versions + handshake + first
        while not stop.is_set():
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
                    sock.sendall(login[: rng.randrange(1, len(login))])
                    # SO_LINGER 0: close sends a reset, as a peer that vanishes does.
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
            except OSError:
                pass
            stop.wait(0.02)


def _load(
    client: Path, port: int, user: tuple[str, str], n: int, secs: int, *mode: str
) -> subprocess.Popen[str]:
    args = [str(client), "127.0.0.1", str(port), *user, str(n), str(secs), *mode]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _result(proc: subprocess.Popen[str]) -> dict[str, float]:
    out, err = proc.communicate(timeout=120)
    fields = dict(item.split("=", 1) for item in out.split() if "=" in item)
    if not fields:
        raise SystemExit(f"soak: error: the load generator failed: {err.strip()[-300:]}")
    return {k: float(v) for k, v in fields.items() if re.fullmatch(r"[-0-9.e]+", v)}


def _proc_sample(pid: int) -> tuple[float, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    rss_kb = int(re.search(r"^VmRSS:\s+(\d+)", status, re.M)[1])  # type: ignore[index]
    return rss_kb / 1024, len(os.listdir(f"/proc/{pid}/fd"))


def _minute(
    soak: Soak, client: Path, concurrency: int, seconds: int
) -> tuple[dict[str, float], ...]:
    """One round of the three loads, run side by side."""
    loads = [
        _load(client, soak.port, STABLE, concurrency, seconds, "login"),
        # Kafka refuses a second re-authentication within a second: pace them.
        _load(client, soak.port, STABLE, 10, seconds, "reauth", "1100"),
        # Another name than the honest loads', from their address: the budget
        # paces this pair alone (wrong passwords at STABLE would pace STABLE's
        # own logins from 127.0.0.1, as a guesser sharing a user's NAT does).
        _load(
            client,
            soak.port,
            (GUESSED[0], WRONG),
            5,
            seconds,
            "login",
            "0",
            "0",
            ENDLESS,
        ),
    ]
    return tuple(_result(p) for p in loads)


def slope_verdict(name: str, values: list[float], minutes: list[float]) -> tuple[float, bool]:
    """The fitted growth over the measured span, and whether it is within noise."""
    if len(values) < 2 or minutes[-1] == minutes[0]:
        return 0.0, True
    slope = statistics.linear_regression(minutes, values).slope
    growth = slope * (minutes[-1] - minutes[0])
    allowed = max(0.10 * statistics.fmean(values), 2.0 if name != "rss_mb" else 5.0)
    return growth, growth <= allowed


def run(minutes: int, concurrency: int, churn_every: float, out: Path) -> int:
    sys.path.insert(0, str(ROOT / "bench"))
    from _java_style import build_client  # type: ignore[import-not-found]

    client = build_client()
    directory = Path(tempfile.mkdtemp(prefix="kafka-scram-soak-"))
    soak = Soak(directory)
    server = soak.start_server()
    stop = threading.Event()
    helpers = [
        threading.Thread(target=soak.churn, args=(stop, churn_every), daemon=True),
        threading.Thread(target=soak.vanish, args=(stop,), daemon=True),
    ]
    for t in helpers:
        t.start()
    samples: list[Sample] = []
    started = time.monotonic()
    slowed = 0.0
    try:
        for _ in range(minutes):
            login, reauth, wrong = _minute(soak, client, concurrency, 60)
            rss, fds = _proc_sample(server.pid)
            m = soak.metrics()
            slowed, slowed_before = m.get("kafka_scram_slowed_authentication_total", 0.0), slowed
            samples.append(
                Sample(
                    round((time.monotonic() - started) / 60, 2),
                    round(rss, 1),
                    fds,
                    int(m.get("kafka_scram_event_loop_tasks", -1)),
                    int(m.get("kafka_scram_connections", 0)),
                    int(login.get("logins", 0)),
                    int(login.get("errors", 0)),
                    int(reauth.get("logins", 0)),
                    int(reauth.get("errors", 0)),
                    int(wrong.get("errors", 0)),
                    int(slowed - slowed_before),
                    round(wrong.get("seconds", 60.0), 1),
                )
            )
            print(json.dumps(samples[-1].__dict__), flush=True)
    finally:
        stop.set()
        for t in helpers:
            t.join(60)
        server.send_signal(signal.SIGTERM)
        server.wait(30)
    log_text = (directory / "serve.log").read_text(errors="replace")
    return report(samples, soak, log_text, out)


def budget_failures(s: Sample) -> list[str]:
    """What a minute's wrong passwords say of the failure budget: the guessed pair
    was paced (some verdicts held), at its pace: within a window, its budget at
    once, then one per interval. A minute (a little more, with the logins in
    flight at its end) may see two windows start, and each of the 5
    connections may have a verdict queued from the window before."""
    most = 2 * BUDGET + s.seconds / INTERVAL_S + 10
    failures = []
    if s.refused < s.seconds / INTERVAL_S / 2:
        failures.append(f"minute {s.minute}: only {s.refused} wrong passwords refused")
    if s.refused > most:
        failures.append(
            f"minute {s.minute}: {s.refused} wrong passwords refused, past the budget's "
            f"pace ({most:.0f})"
        )
    if s.slowed == 0:
        failures.append(f"minute {s.minute}: no verdict held past the failure budget")
    return failures


def report(samples: list[Sample], soak: Soak, log_text: str, out: Path) -> int:
    warm = max(2, len(samples) // 4)
    measured = samples[warm:] if len(samples) > warm else samples[-1:]
    failures = list(soak.failures)
    for s in samples:
        if s.login_errors or s.reauth_errors:
            failures.append(f"minute {s.minute}: {s.login_errors + s.reauth_errors} logins failed")
        failures.extend(budget_failures(s))
    if "Traceback" in log_text:
        failures.append("a traceback reached the server's log")
    rows = []
    minutes = [s.minute for s in measured]
    for name in SERIES:
        values = [float(getattr(s, name)) for s in measured]
        growth, ok = slope_verdict(name, values, minutes)
        rows.append(
            f"| {name} | {values[0]:g} | {values[-1]:g} | {growth:+.2f} | {'ok' if ok else 'GROWS'} |"
        )
        if not ok:
            failures.append(f"{name} grows by {growth:+.2f} over the measured span")
    out.mkdir(parents=True, exist_ok=True)
    _plot(samples, warm, out / "soak.png")
    verdict = "PASS" if not failures else "FAIL: " + "; ".join(failures)
    table = "\n".join(
        [
            f"Soak of {len(samples)} minutes, {sum(s.logins for s in samples):,} logins, "
            f"{sum(s.reauths for s in samples):,} re-authentications, "
            f"{sum(s.refused for s in samples):,} wrong passwords refused "
            f"({min(s.refused for s in samples)}-{max(s.refused for s in samples)} a minute, "
            f"the failure budget's pace; {sum(s.slowed for s in samples):,} verdicts held), "
            f"{soak.churned} credential changes. Warm-up: {warm} samples.",
            "",
            "| series | first measured | last | fitted growth | verdict |",
            "|---|---|---|---|---|",
            *rows,
            "",
            f"Verdict: {verdict}",
        ]
    )
    (out / "soak.md").write_text(table + "\n")
    print(table)
    return 0 if not failures else 1


def _plot(samples: list[Sample], warm: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(SERIES), 1, figsize=(7, 8), sharex=True)
    minutes = [s.minute for s in samples]
    for ax, name in zip(axes, SERIES, strict=True):
        ax.plot(minutes, [getattr(s, name) for s in samples], marker="o")
        ax.set_ylabel(name)
        if warm < len(samples):
            ax.axvspan(minutes[0], minutes[warm], color="0.9", label="warm-up")
    axes[-1].set_xlabel("minutes")
    fig.suptitle("kafka-scram serve under churn")
    fig.tight_layout()
    fig.savefig(path, dpi=80)


def main() -> int:
    parser = argparse.ArgumentParser(prog="bench/soak.py", description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, default=int(os.environ.get("SOAK_MINUTES") or 30))
    parser.add_argument("--concurrency", type=int, default=1000)
    parser.add_argument("--churn-seconds", type=float, default=3.0)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "soak")
    options = parser.parse_args()
    if options.minutes < 1:
        parser.error("--minutes must be at least 1")
    return run(options.minutes, options.concurrency, options.churn_seconds, options.out)


if __name__ == "__main__":
    raise SystemExit(main())
