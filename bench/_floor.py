"""The C byte relay (``bench/floor_relay.c``) as ``bench_frontdoor.py``'s side-by-side row runs it.

The relay is the row's floor: what a proxy that makes the same system calls
as serve and Kroxylicious (one read and one write per chunk each way, an
epoll wait between) costs per MB with (almost) no user-space work. It
forwards bytes and parses nothing, so it cannot rewrite the broker
addresses in Metadata: the bench's broker has one more listener,
``RELAY`` (``KafkaBroker(relay_port=...)``), bound on a port of its own and
advertised at the relay's port, so that a client bootstrapping at the relay
is told the broker is there and every connection goes through it.

The C relay is compiled once per source with the system compiler into the
bench cache (``_cbuild.py``), as the login benches' load generator is; the
Python relay runs on the interpreter that runs the bench (and serve).
"""

from __future__ import annotations

import contextlib
import select
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

# As ``bench._cbuild``: the tests import this module as ``bench._floor``, and
# bench_frontdoor.py puts the repository's root on the path.
from bench._cbuild import compiled

SOURCE = Path(__file__).resolve().with_name("floor_relay.c")
# The Python floor: the same relay on uvloop, run by this interpreter (serve's).
PYTHON_RELAY = SOURCE.with_name("floor_relay.py")
#: The relays by the name the bench gives them: C, or Python on uvloop.
C, PYTHON = "C relay", "Python relay"
# The warnings are errors: the relay is a bench tool, but its figures are
# only worth something if it is correct.
CFLAGS = ("-O2", "-Wall", "-Wextra", "-Werror")
START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 10.0
MB = 1 << 20


def build() -> Path:
    """The relay's executable, compiled with ``$CC`` (``cc``) once per source."""
    return compiled(
        SOURCE, CFLAGS, program="bench_frontdoor.py", hint="install one (apt-get install -y gcc)"
    )


def parse_ready(line: str) -> int | None:
    """The port in the relay's first line (``ready PORT``), None for any other line."""
    words = line.split()
    if len(words) == 2 and words[0] == "ready" and words[1].isdigit():
        return int(words[1])
    return None


def parse_counters(line: str) -> dict[str, int]:
    """The relay's last line (``pairs=N to_upstream=BYTES ...``) as a dict; {} if
    it printed none (it was killed)."""
    pairs = [word.partition("=") for word in line.split()]
    if not pairs or any(not sep or not value.isdigit() for _, sep, value in pairs):
        return {}
    return {key: int(value) for key, _, value in pairs}


def counters_line(kind: str, counters: dict[str, int]) -> str:
    """What the ``kind`` relay forwarded over its whole run, warm-up included."""
    if not counters:
        return f"  {kind}: no counters (it did not stop cleanly)"
    return (
        f"  {kind}: {counters['pairs']} connections relayed, "
        f"{counters['to_upstream'] / MB:,.0f} MB to the broker and "
        f"{counters['to_client'] / MB:,.0f} MB back, {counters['partial_writes']} partial"
        f" writes, {counters['refused']} connections refused (whole run, warm-up included)"
    )


@dataclass
class Relay:
    """A running relay: where clients connect, its pid; its counters once stopped."""

    bootstrap: str
    pid: int
    counters: dict[str, int] = field(default_factory=dict)


def _wait_ready(proc: subprocess.Popen[str], log: Path, kind: str) -> int:
    """The port the relay printed; RuntimeError with its log if it exits or is late."""
    assert proc.stdout is not None
    readable, _, _ = select.select([proc.stdout], [], [], START_TIMEOUT_S)
    port = parse_ready(proc.stdout.readline()) if readable else None
    if port is not None:
        return port
    proc.kill()
    proc.wait()
    raise RuntimeError(f"the {kind} did not start: {log.read_text(errors='replace')[-2000:]}")


def _stop(proc: subprocess.Popen[str]) -> dict[str, int]:
    """SIGTERM (the relay prints its counters and exits), SIGKILL if it hangs."""
    assert proc.stdout is not None
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    lines = proc.stdout.read().splitlines()
    proc.stdout.close()
    return parse_counters(lines[-1]) if lines else {}


@contextlib.contextmanager
def started(
    listen_port: int, upstream: str, cpus: str, tmp: Path, kind: str = C
) -> Iterator[Relay]:
    """The ``kind`` relay (:data:`C` or :data:`PYTHON`) on
    ``127.0.0.1:listen_port`` in front of ``upstream`` (``host:port``, IPv4)
    under ``taskset -c cpus``; stopped after, when its ``counters`` are filled in."""
    relay = [str(build())] if kind == C else [sys.executable, str(PYTHON_RELAY)]
    host, port = upstream.rsplit(":", 1)
    log = tmp / f"floor-{kind.split()[0].lower()}-relay.log"
    command = [shutil.which("taskset") or "taskset", "-c", cpus, *relay]
    with log.open("a") as stderr:
        proc = subprocess.Popen(
            [*command, str(listen_port), host, port],
            stdout=subprocess.PIPE,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
            text=True,
        )
    try:
        running = Relay(f"127.0.0.1:{_wait_ready(proc, log, kind)}", proc.pid)
    except BaseException:
        _stop(proc)
        raise
    try:
        yield running
    finally:
        running.counters = _stop(proc)
