"""``kafka-scram serve`` out of file descriptors: it says so, keeps its listener,
and serves again as soon as descriptors free up.

The server runs under ``ulimit -n 256`` and 400 idle connections take every
descriptor; the connections past the limit wait in the kernel's listen queue.
"""

from __future__ import annotations

import resource
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.sasl_scram.endpoint.serve_process import Peer
from tests.sasl_scram.endpoint.serve_process import Serve
from tests.sasl_scram.endpoint.serve_process import seed
from tests.support.cli_process import EXE
from tests.support.endpoint_harness import ALICE

LIMIT = 256
IDLE = 400
SHORTAGE = "Cannot accept connections on"


def _limited_exe(tmp_path: Path) -> str:
    """``kafka-scram`` under ``ulimit -n LIMIT`` (soft and hard)."""
    wrapper = tmp_path / "kafka-scram-limited"
    wrapper.write_text(f'#!/bin/sh\nulimit -n {LIMIT} || exit 3\nexec {EXE} "$@"\n')
    wrapper.chmod(0o700)
    return str(wrapper)


def _login_in_background(port: int) -> tuple[threading.Thread, dict[str, Any]]:
    """alice's login on a thread; the dict gets the last SaslAuthenticate response."""
    result: dict[str, Any] = {}

    def login() -> None:
        with Peer(port, timeout=30) as peer:
            result.update(peer.login(*ALICE))

    waiting = threading.Thread(target=login)
    waiting.start()
    return waiting, result


@pytest.fixture
def room_for_idle_connections() -> None:
    """This test process holds the idle connections: its own limit must allow them."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < IDLE + 200:
        if hard != resource.RLIM_INFINITY and hard < IDLE + 200:
            pytest.skip(f"RLIMIT_NOFILE hard limit {hard} is below {IDLE + 200}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (IDLE + 200, hard))


@pytest.mark.slow
@pytest.mark.parametrize("loop", ["uvloop", "asyncio"])
def test_out_of_descriptors_is_logged_once_and_serving_resumes(
    tmp_path: Path, loop: str, room_for_idle_connections: None
) -> None:
    db = tmp_path / "data" / "creds.db"
    seed(db)
    serve = Serve(tmp_path, db, {"scram.event.loop": loop})
    serve.exe = _limited_exe(tmp_path)
    with serve:
        idle = [socket.create_connection(("127.0.0.1", serve.port)) for _ in range(IDLE)]
        try:
            serve.wait_for_log(SHORTAGE, timeout=30)
            # Queued behind the idle connections while no descriptor is free.
            waiting, result = _login_in_background(serve.port)
        finally:
            for sock in idle:
                sock.close()
        waiting.join(40)
        assert result.get("error_code") == 0, (result, serve.log_text()[-3000:])
        # The listener still serves new connections.
        with Peer(serve.port) as peer:
            assert peer.login(*ALICE)["error_code"] == 0
        lines = [line for line in serve.log_lines() if SHORTAGE in line]
        assert len(lines) == 1, lines
        assert f"may open {LIMIT} files" in lines[0] and "ulimit -n" in lines[0]
        assert "LimitNOFILE" in lines[0] and " ERROR " in lines[0]
        assert "Traceback" not in serve.log_text()


@pytest.mark.slow
def test_max_connections_lets_new_connections_wait_until_one_closes(tmp_path: Path) -> None:
    db = tmp_path / "data" / "creds.db"
    seed(db)
    with Serve(tmp_path, db, {"max.connections": "2"}) as serve:
        idle = [socket.create_connection(("127.0.0.1", serve.port)) for _ in range(2)]
        waiting, result = _login_in_background(serve.port)
        waiting.join(1.0)
        assert waiting.is_alive() and not result, "served past max.connections"
        idle.pop().close()
        waiting.join(30)
        assert result.get("error_code") == 0, serve.log_text()[-3000:]
        for sock in idle:
            sock.close()


@pytest.mark.slow
@pytest.mark.parametrize(("max_connections", "warned"), [("1000", True), ("100", False)])
def test_a_descriptor_limit_below_max_connections_is_a_warning_at_start(
    tmp_path: Path, max_connections: str, warned: bool
) -> None:
    serve = Serve(tmp_path, tmp_path / "data" / "creds.db", {"max.connections": max_connections})
    serve.exe = _limited_exe(tmp_path)
    with serve:
        serve.wait_for_log("Listening on")
    said = [line for line in serve.log_lines() if "RLIMIT_NOFILE" in line]
    if not warned:
        assert not said, said
        return
    assert len(said) == 1, said
    assert f"may open {LIMIT} files" in said[0] and "max.connections=1000" in said[0]
    assert "ulimit -n" in said[0] and " WARNING " in said[0]
