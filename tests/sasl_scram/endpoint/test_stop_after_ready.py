"""A stop that comes right after ``serve`` says it is ready is a clean stop.

``serve`` used to say "ready" (and a worker to tell its parent) before it
handled SIGTERM and SIGINT: a supervisor that stopped it at once killed it
by the signal's default action, with no graceful close, and a parent that
stopped its workers then saw one die by the signal and exited 1 (the
intermittent failure of ``test_workers.py``'s Ctrl-C test). Here the signal
is sent from inside the ready announcement itself, so the race is hit every
time.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli_process import child_env
from tests.support.zookeeper_server import free_port

#: ``serve`` with the ready announcement followed at once by SIGTERM to itself.
SCRIPT = """
import os, signal, sys
from sasl_scram.endpoint.runtime import _process

announce = _process.announce_ready

def announce_then_stop(*args, **kwargs):
    announce(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGTERM)

_process.announce_ready = announce_then_stop
from sasl_scram.cli._main import main
sys.exit(main(["serve", "--config", sys.argv[1]]))
"""


@pytest.mark.slow
def test_sigterm_right_after_ready_stops_cleanly(tmp_path: Path) -> None:
    config = tmp_path / "server.properties"
    config.write_text(
        f"listeners=SASL_PLAINTEXT://127.0.0.1:{free_port()}\n"
        f"scram.credential.store.path={tmp_path / 'credentials.db'}\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(config)],
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert done.returncode != -signal.SIGTERM, "killed by SIGTERM: no handler yet"
    assert done.returncode == 0, done.stderr[-2000:]
    assert "kafka-scram endpoint ready" in done.stdout
    assert "Endpoint stopped" in done.stderr, done.stderr[-2000:]
