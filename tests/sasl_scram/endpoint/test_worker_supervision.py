"""The workers' parent: restart delays and a clean stop, driven without a serve.

``tests/sasl_scram/endpoint/test_workers.py`` runs the whole ``serve`` with
workers; here the :class:`Supervisor`'s decisions are driven one by one, with an
injected clock and real child processes where a status must come from the kernel.
"""

from __future__ import annotations

import io
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sasl_scram.endpoint import EndpointConfig
from sasl_scram.endpoint.runtime._workers import FIRST_DELAY
from sasl_scram.endpoint.runtime._workers import MAX_DELAY
from sasl_scram.endpoint.runtime._workers import STABLE_AFTER
from sasl_scram.endpoint.runtime._workers import Supervisor
from tests.support.clock import FakeClock

KILLED = signal.SIGKILL  # the status a killed worker leaves: WIFSIGNALED, SIGKILL


@pytest.fixture
def supervisor(tmp_path: Path) -> Iterator[Supervisor]:
    config = EndpointConfig.from_properties(
        {
            "scram.credential.store.path": str(tmp_path / "x.db"),
            "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
        }
    )
    sup = Supervisor(config, io.StringIO(), io.StringIO())
    sup.clock = FakeClock(1000.0)
    # The pipe the workers write "<index>\n" to when they are ready.
    sup._ready_read, sup._ready_write = os.pipe()
    os.set_blocking(sup._ready_read, False)
    yield sup
    os.close(sup._ready_read)
    os.close(sup._ready_write)


def _ready(sup: Supervisor, index: int) -> None:
    """Worker ``index`` says it is ready, through the pipe a worker writes."""
    os.write(sup._ready_write, b"%d\n" % index)
    sup._read_ready(None)
    assert index in sup.ready


def _restart_delay(sup: Supervisor, index: int) -> float:
    clock = sup.clock
    assert isinstance(clock, FakeClock)
    sup._died(index, 4242, KILLED)
    return float(sup.restart_at.pop(index) - clock.now)


def test_a_worker_dying_soon_after_ready_is_restarted_with_growing_delays(
    supervisor: Supervisor,
) -> None:
    # A worker that crashes on its first connection after every start must not
    # be forked again at once, in a loop that floods the log.
    delays = []
    for _ in range(8):
        _ready(supervisor, 0)
        delays.append(_restart_delay(supervisor, 0))
    assert delays == [min(MAX_DELAY, FIRST_DELAY * 2**n) for n in range(8)]


def test_a_worker_that_served_a_while_is_restarted_at_once(supervisor: Supervisor) -> None:
    clock = supervisor.clock
    assert isinstance(clock, FakeClock)
    for _ in range(3):
        _ready(supervisor, 0)
        _restart_delay(supervisor, 0)
    _ready(supervisor, 0)
    clock.now += STABLE_AFTER
    assert _restart_delay(supervisor, 0) == 0.0  # it had served: the count starts again
    _ready(supervisor, 0)
    assert _restart_delay(supervisor, 0) == FIRST_DELAY


def test_a_worker_dying_before_it_ever_was_ready_backs_off(supervisor: Supervisor) -> None:
    supervisor.announced = True  # the others are serving
    assert [_restart_delay(supervisor, 1) for _ in range(3)] == [
        FIRST_DELAY,
        2 * FIRST_DELAY,
        4 * FIRST_DELAY,
    ]


def _child(on_sigterm_exit: int | None) -> int:
    """A child that sleeps; on SIGTERM it exits with ``on_sigterm_exit``, or is
    killed by the signal's default action when ``None`` (a worker that has not
    installed its handlers yet)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        if on_sigterm_exit is not None:
            code = on_sigterm_exit
            signal.signal(signal.SIGTERM, lambda *_: os._exit(code))
        else:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.write(write, b"x")
        time.sleep(60)
        os._exit(0)
    os.close(write)
    assert os.read(read, 1) == b"x"  # its handler is in place
    os.close(read)
    return pid


def test_a_stop_that_finds_a_worker_still_starting_is_clean(supervisor: Supervisor) -> None:
    # The worker was just (re)started and dies by SIGTERM's default action: the
    # parent asked for exactly that, so serve still exits 0.
    supervisor.pids[_child(None)] = 0
    supervisor.pids[_child(0)] = 1
    supervisor._stop_all()
    assert not supervisor.pids and not supervisor.failed


def test_a_worker_failing_its_stop_still_makes_the_stop_fail(supervisor: Supervisor) -> None:
    supervisor.pids[_child(3)] = 0
    supervisor._stop_all()
    assert not supervisor.pids and supervisor.failed


def test_every_line_waiting_in_the_pipe_is_read_at_once(
    supervisor: Supervisor, caplog: pytest.LogCaptureFixture
) -> None:
    # What workers wrote before they died is all read before their deaths are
    # handled, even past one read's worth (each error line may be 3000 bytes).
    supervisor.announced = True
    for index in range(3):
        os.write(supervisor._ready_write, b"!%d %s\n" % (index, b"x" * 2990))
    supervisor._read_ready(None)
    errors = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Worker")]
    assert [e[:9] for e in errors] == ["Worker 0:", "Worker 1:", "Worker 2:"]
