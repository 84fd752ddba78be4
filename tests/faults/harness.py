"""Real ``kafka-scram serve`` processes on a ZooKeeper store, and the probes the
fault tests use: SCRAM logins over real sockets, ``kafka-scram configs
--zookeeper`` writes as subprocesses, and a results file of measured figures."""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from collections.abc import Mapping
from functools import partial
from pathlib import Path

from sasl_scram import SCRAM_SHA_256
from sasl_scram import ScramMechanism
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import KafkaConnectionError
from sasl_scram.admin import RemoteScramAdmin
from sasl_scram.admin import SaslCredentials
from tests.support.cli_process import EXE
from tests.support.cli_process import child_env
from tests.support.polling import wait_until
from tests.support.serve_process import ServeProcess

__all__ = [
    "ADMIN",
    "LoginLoop",
    "Results",
    "alice_serving",
    "configs",
    "describe",
    "login",
    "seed_users",
    "serving",
    "set_password",
    "until_accepted",
]

ADMIN = ("admin", "admin-secret")
# Every write sets both mechanisms; logins use SHA-256 (4096 iterations: cheap).
_BOTH = "SCRAM-SHA-256=[password={pw}],SCRAM-SHA-512=[password={pw}]"


def configs(zookeeper: str, *args: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    """``kafka-scram configs --zookeeper <hosts> <args>`` as a subprocess."""
    return subprocess.run(
        [EXE, "configs", "--zookeeper", zookeeper, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=child_env(),
        stdin=subprocess.DEVNULL,
    )


def set_password(zookeeper: str, user: str, password: str, timeout: float = 30.0) -> bool:
    """Change ``user``'s password through ``configs --zookeeper``; True when acknowledged."""
    proc = configs(
        zookeeper,
        "--alter",
        "--add-config",
        _BOTH.format(pw=password),
        "--entity-type",
        "users",
        "--entity-name",
        user,
        timeout=timeout,
    )
    return proc.returncode == 0


def login(
    bootstrap: str,
    user: str,
    password: str,
    *,
    token: bool = False,
    mechanism: ScramMechanism = SCRAM_SHA_256,
    timeout: float = 5.0,
) -> bool:
    """One SCRAM login over a fresh TCP connection; True when the endpoint accepts it."""
    try:
        with KafkaConnection(
            bootstrap, SaslCredentials(mechanism, user, password, token), timeout=timeout
        ):
            return True
    except (KafkaConnectionError, OSError):
        return False


def describe(bootstrap: str, timeout: float = 10.0) -> dict[str, object]:
    """Every user's mechanisms and iterations, through the KIP-554 describe RPC (as admin)."""
    creds = SaslCredentials(SCRAM_SHA_256, *ADMIN)
    with KafkaConnection(bootstrap, creds, timeout=timeout) as conn:
        result = RemoteScramAdmin(conn).describe()
    return {
        "error": result.error.name,
        "users": {
            u.user: sorted((c.mechanism.name, c.iterations) for c in u.credentials)
            for u in sorted(result.results, key=lambda u: u.user)
        },
    }


def until_accepted(bootstrap: str, user: str, password: str, timeout: float) -> float | None:
    """Log in until the endpoint accepts ``password``: the seconds it took (how long a
    change took to be served), or ``None`` after ``timeout``."""
    return wait_until(partial(login, bootstrap, user, password, timeout=3.0), timeout, 0.05)


@contextlib.contextmanager
def serving(*processes: ServeProcess) -> Iterator[tuple[ServeProcess, ...]]:
    """Start every process; stop all of them on the way out, whatever happened."""
    try:
        for p in processes:
            p.start()
        yield processes
    finally:
        for p in processes:
            p.stop()


def seed_users(zookeeper: str, alice: str = "pw-0") -> None:
    """The admin (the endpoints' super user) and alice, whom every fault test logs in as."""
    assert set_password(zookeeper, ADMIN[0], ADMIN[1])
    assert set_password(zookeeper, "alice", alice)


@contextlib.contextmanager
def alice_serving(
    base_dir: Path,
    connect: str,
    *names: str,
    alice: str = "pw-0",
    properties: Mapping[str, str] | None = None,
) -> Iterator[tuple[ServeProcess, ...]]:
    """``serve`` processes on ``zookeeper.connect=connect`` (admin as super user, plus
    ``properties``), each of which has accepted alice's login; stopped on the way out."""
    props = {"zookeeper.connect": connect, "super.users": f"User:{ADMIN[0]}", **(properties or {})}
    endpoints = tuple(ServeProcess(base_dir, props, name) for name in names or ("serve",))
    with serving(*endpoints):
        for ep in endpoints:
            assert until_accepted(ep.bootstrap, "alice", alice, 10) is not None, ep.name
        yield endpoints


class Results:
    """Measured figures: printed (``pytest -s``) and appended to a JSON-lines file."""

    def __init__(self, path: Path, test: str) -> None:
        self.path = path
        self.test = test

    def record(self, **figures: object) -> None:
        line = json.dumps({"test": self.test, **figures}, sort_keys=True)
        print(f"\nFAULT-RESULT {line}")
        with self.path.open("a") as f:
            f.write(line + "\n")


class LoginLoop:
    """Log in continuously from ``threads`` threads, recording every attempt.

    ``password`` is read before each attempt, so a test can switch what counts
    as current. ``attempts`` holds ``(monotonic time, password, accepted)``.
    """

    def __init__(self, bootstrap: str, user: str, password: str, threads: int = 1) -> None:
        self.bootstrap = bootstrap
        self.user = user
        self.password = password
        self.attempts: list[tuple[float, str, bool]] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._run, daemon=True, name=f"login-{i}")
            for i in range(threads)
        ]

    def _run(self) -> None:
        while not self._stop.is_set():
            password = self.password
            ok = login(self.bootstrap, self.user, password, timeout=3.0)
            with self._lock:
                self.attempts.append((time.monotonic(), password, ok))
            if not ok:
                self._stop.wait(0.02)

    def since(self, t: float) -> list[tuple[float, str, bool]]:
        with self._lock:
            return [a for a in self.attempts if a[0] >= t]

    def first(self, accepted: bool, after: float, password: str | None = None) -> float | None:
        """When the first attempt after ``after`` was accepted (or refused)."""
        for t, pw, ok in self.since(after):
            if ok == accepted and (password is None or pw == password):
                return t
        return None

    def __enter__(self) -> LoginLoop:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(10)
