"""``scram.workers``: real ``kafka-scram serve`` processes, one parent and its workers.

Which worker serves a connection is read from the kernel: the server side of
the connection (``/proc/net/tcp``) is a socket inode, and exactly one
worker's ``/proc/<pid>/fd`` holds it.
"""

from __future__ import annotations

import os
import re
import signal
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from typing import cast

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import RemoteScramAdmin
from sasl_scram.endpoint import EndpointConfig
from sasl_scram.kafka import ErrorCode
from sasl_scram.store import ScramDeletion
from sasl_scram.store import ScramUpsertion
from sasl_scram.store import ZooKeeperCredentialStore
from tests.sasl_scram.endpoint.serve_process import API_VERSIONS
from tests.sasl_scram.endpoint.serve_process import Peer
from tests.sasl_scram.endpoint.serve_process import Serve
from tests.sasl_scram.endpoint.serve_process import seed
from tests.sasl_scram.endpoint.test_metrics import samples_of
from tests.support.cli_process import assert_one_error
from tests.support.cli_process import kafka_scram
from tests.support.endpoint_harness import ADMIN
from tests.support.endpoint_harness import ALICE
from tests.support.endpoint_harness import seed_users
from tests.support.polling import wait_until
from tests.support.proc_tcp import established_to
from tests.support.serve_process import ServeProcess
from tests.support.zookeeper_server import ZooKeeperServer
from tests.support.zookeeper_server import create_chroot
from tests.support.zookeeper_server import free_port

STARTED = re.compile(r"Worker (\d+) started \(pid (\d+)\)")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "state" / "credentials.db"
    seed(path)
    return path


WORKERS = {
    "scram.workers": "2",
    "connection.failed.authentication.delay.ms": "0",
}


def serve_workers(tmp_path: Path, db: Path, **props: str) -> Serve:
    return Serve(tmp_path, db, {**WORKERS, **props})


def workers(serve: ServeProcess) -> dict[int, int]:
    """Worker index -> pid of its latest start, from the parent's log."""
    found: dict[int, int] = {}
    for line in serve.log_lines():
        match = STARTED.search(line)
        if match:
            found[int(match[1])] = int(match[2])
    return found


def serving_pid(serve: ServeProcess, peer: Peer, pids: list[int]) -> int:
    """The worker whose descriptor table holds the server side of ``peer``'s connection."""
    local, remote = f"0100007F:{serve.port:04X}", f"0100007F:{peer.local_port:04X}"
    inode = next(
        fields[9]
        for fields in (line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:])
        if fields[1] == local and fields[2] == remote
    )
    holders = [
        pid
        for pid in pids
        for fd in os.listdir(f"/proc/{pid}/fd")
        if _readlink(f"/proc/{pid}/fd/{fd}") == f"socket:[{inode}]"
    ]
    assert len(holders) == 1, (inode, holders)
    return holders[0]


def _readlink(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:  # a descriptor closed while listed
        return ""


def login(serve: ServeProcess, user: tuple[str, str]) -> tuple[Peer, int, bool]:
    """A new connection: the pid of the worker that serves it, and whether ``user`` logged in."""
    peer = Peer(serve.port)
    # Answered, so accepted: the server side now has its descriptor (a failed login closes it).
    assert peer.call(API_VERSIONS, 0, {})["error_code"] == 0
    pid = serving_pid(serve, peer, list(workers(serve).values()))
    return peer, pid, peer.login(*user)["error_code"] == 0


@pytest.fixture
def peers() -> Iterator[list[Peer]]:
    opened: list[Peer] = []
    yield opened
    for peer in opened:
        peer.close()


def peer_on(serve: ServeProcess, pid: int, user: tuple[str, str], peers: list[Peer]) -> Peer:
    """A connection logged in as ``user`` that worker ``pid`` serves."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        peer, served_by, ok = login(serve, user)
        peers.append(peer)
        assert ok, user[0]
        if served_by == pid:
            return peer
    raise AssertionError(f"no connection reached worker pid {pid}")


def test_auto_is_one_worker_per_core_this_process_may_use() -> None:
    config = EndpointConfig.from_properties({"scram.credential.store.path": "x.db"})
    assert config.workers == 1  # the default: one process, as before
    config = EndpointConfig.from_properties(
        {"scram.credential.store.path": "x.db", "scram.workers": "auto"}
    )
    assert config.workers == len(os.sched_getaffinity(0))


@pytest.mark.slow
def test_logins_spread_over_both_workers_and_sigterm_stops_all(
    tmp_path: Path, db: Path, peers: list[Peer]
) -> None:
    serve = serve_workers(tmp_path, db)
    with serve:
        pids = workers(serve)
        assert sorted(pids) == [0, 1]
        served: list[int] = []
        for _ in range(16):
            peer, pid, ok = login(serve, ALICE)
            peers.append(peer)
            assert ok
            served.append(pid)
        # The kernel hashes each connection to a worker: 16 on one has odds 2**-15.
        assert set(served) == set(pids.values()), served
        proc = serve.proc
        assert proc is not None
    assert proc.returncode == 0, serve.log_text()[-2000:]
    assert serve.log_text().count("Endpoint stopped") == 2
    for pid in pids.values():
        assert not Path(f"/proc/{pid}").exists()


@pytest.mark.slow
def test_a_killed_worker_is_restarted_and_logins_go_on(
    tmp_path: Path, db: Path, peers: list[Peer]
) -> None:
    with serve_workers(tmp_path, db) as serve:
        old = workers(serve)[0]
        os.kill(old, signal.SIGKILL)
        serve.wait_for_log(f"Worker 0 (pid {old}) was killed by signal 9 (SIGKILL); restarting")
        assert wait_until(lambda: workers(serve)[0] != old, 10, 0.05) is not None
        for _ in range(8):  # the other worker serves meanwhile
            peer, _, ok = login(serve, ALICE)
            peers.append(peer)
            assert ok
        new = workers(serve)[0]
        peer_on(serve, new, ALICE, peers)  # the new worker listens and logs users in
        assert serve.proc is not None and serve.proc.poll() is None


@pytest.mark.slow
def test_workers_stop_when_the_parent_is_killed(tmp_path: Path, db: Path) -> None:
    with serve_workers(tmp_path, db) as serve:
        pids = list(workers(serve).values())
        assert serve.proc is not None
        serve.proc.kill()  # no SIGTERM to pass on: the kernel's parent-death signal
        serve.proc.wait(10)
        try:
            assert wait_until(lambda: not any(_alive(pid) for pid in pids), 10, 0.05) is not None
        finally:  # never leave an orphan serving
            for pid in filter(_alive, pids):
                os.kill(pid, signal.SIGKILL)
        assert "Endpoint stopped" in serve.log_text()


def _alive(pid: int) -> bool:
    """Running (a zombie of an init that has not reaped it yet counts as gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class _OnPeer:
    """``KafkaConnection.request`` over a ``Peer``, whose worker the test chose."""

    def __init__(self, peer: Peer) -> None:
        self.peer = peer

    def request(self, api_key: int, body: dict[str, Any]) -> dict[str, Any]:
        return self.peer.call(api_key, 0, body)


def _alter(peer: Peer, user: str, password: str | None) -> None:
    """Create (a password) or delete (None) ``user``'s SCRAM-SHA-256 credential."""
    admin = RemoteScramAdmin(cast(KafkaConnection, _OnPeer(peer)))
    if password is None:
        results = admin.alter([ScramDeletion(user, SCRAM_SHA_256.type_byte)], [])
    else:
        results = admin.alter([], [ScramUpsertion.from_password(user, SCRAM_SHA_256, password)])
    assert [r.error for r in results] == [ErrorCode.NONE], results


def _user_changed_through_one_worker_is_honoured_by_the_other(
    serve: ServeProcess, peers: list[Peer]
) -> None:
    bob = ("bob", "bob-secret")
    first, second = workers(serve)[0], workers(serve)[1]
    _alter(peer_on(serve, first, ADMIN, peers), bob[0], bob[1])

    def bob_logs_in_on(pid: int) -> bool:
        peer, served_by, ok = login(serve, bob)
        peers.append(peer)
        return ok and served_by == pid

    assert wait_until(lambda: bob_logs_in_on(second), 10, 0.05) is not None
    _alter(peer_on(serve, second, ADMIN, peers), bob[0], None)

    def bob_refused_on(pid: int) -> bool:
        peer, served_by, ok = login(serve, bob)
        peers.append(peer)
        return not ok and served_by == pid

    assert wait_until(lambda: bob_refused_on(first), 10, 0.05) is not None


@pytest.mark.slow
def test_a_user_changed_through_one_worker_is_honoured_by_the_other(
    tmp_path: Path, db: Path, peers: list[Peer]
) -> None:
    # SQLite: each worker's own connection follows the change log.
    with serve_workers(tmp_path, db) as serve:
        _user_changed_through_one_worker_is_honoured_by_the_other(serve, peers)


def test_on_zookeeper_each_worker_has_its_own_session(
    tmp_path: Path, zookeeper_hosts: str, zookeeper_server: ZooKeeperServer, peers: list[Peer]
) -> None:
    store = ZooKeeperCredentialStore(create_chroot(zookeeper_hosts))
    try:
        seed_users(store)
    finally:
        store.close()
    props = {**WORKERS, "zookeeper.connect": zookeeper_hosts, "super.users": "User:admin"}
    with ServeProcess(tmp_path, props) as serve:
        pids = list(workers(serve).values())
        zk_port = int(zookeeper_server.hosts.rsplit(":", 1)[1])
        for pid in pids:  # one ZooKeeper connection each: its own session and watches
            assert len(_connections_to(pid, zk_port)) == 1, pid
        _user_changed_through_one_worker_is_honoured_by_the_other(serve, peers)


def _connections_to(pid: int, port: int) -> list[str]:
    """The socket inodes of ``pid``'s TCP connections to 127.0.0.1:``port``."""
    return list(established_to(port, pid))


@pytest.mark.slow
def test_metrics_are_the_exact_sum_over_the_workers(
    tmp_path: Path, db: Path, peers: list[Peer]
) -> None:
    metrics_port = free_port()
    serve = serve_workers(tmp_path, db, **{"scram.metrics.listener": f"127.0.0.1:{metrics_port}"})
    url = f"http://127.0.0.1:{metrics_port}/metrics"

    def scrape() -> dict[str, float]:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return samples_of(answer.read().decode())

    def total(samples: dict[str, float], name: str) -> float:
        return sum(v for k, v in samples.items() if k.split("{")[0] == f"kafka_scram_{name}")

    with serve:
        pids = list(workers(serve).values())
        served = set()
        for _ in range(12):
            peer, pid, ok = login(serve, ALICE)
            peers.append(peer)
            assert ok
            served.add(pid)
        for _ in range(5):
            peer, _, ok = login(serve, (ALICE[0], "wrong"))
            peers.append(peer)
            assert not ok
        assert served == set(pids)
        samples = scrape()
        assert total(samples, "successful_authentication_total") == 12
        assert total(samples, "failed_authentication_total") == 5
        assert total(samples, "authentication_latency_ms_count") == 12
        # The gauges: the 12 logged-in connections are still open.
        assert (
            wait_until(lambda: total(scrape(), "authenticated_connections") == 12, 10, 0.05)
            is not None
        )
        for peer in peers:
            peer.close()
        assert wait_until(lambda: total(scrape(), "connections") == 0, 10, 0.05) is not None
        # A dead worker's counts stay in the totals.
        os.kill(pids[0], signal.SIGKILL)
        serve.wait_for_log("restarting it")
        samples = scrape()
        assert total(samples, "successful_authentication_total") == 12
        assert total(samples, "failed_authentication_total") == 5


@pytest.mark.slow
def test_a_worker_that_cannot_start_is_one_error_and_the_parent_exits_1(tmp_path: Path) -> None:
    # Each worker loads the keystore as it starts listening: both fail alike.
    config = tmp_path / "server.properties"
    config.write_text(
        "listeners=SASL_SSL://127.0.0.1:0\n"
        f"scram.credential.store.path={tmp_path}/creds.db\n"
        f"ssl.keystore.location={tmp_path}/missing.pem\n"
        "scram.workers=2\n"
    )
    result = kafka_scram("serve", "--config", str(config))
    error = assert_one_error(result, "serve")
    assert "ssl.keystore.location: cannot load the TLS key and certificate from " in error
    assert "missing.pem: No such file or directory" in error
    assert "before it was ready; stopping" in result.stderr


@pytest.mark.slow
def test_ctrl_c_to_the_parent_stops_every_worker(tmp_path: Path, db: Path) -> None:
    with serve_workers(tmp_path, db) as serve:
        pids = list(workers(serve).values())
        assert serve.proc is not None
        serve.proc.send_signal(signal.SIGINT)  # the parent alone (its own session)
        assert serve.proc.wait(30) == 0
        assert serve.log_text().count("Endpoint stopped") == 2
        assert not any(_alive(pid) for pid in pids)
