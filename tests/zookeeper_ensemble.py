"""A throwaway 3-server ZooKeeper ensemble on 127.0.0.1 for fault tests.

Debian's ``zookeeper`` package, run as ``QuorumPeerMain`` JVMs in the
foreground, each with free client, quorum and election ports and its own data
directory (the same jars and JVM flags as :mod:`tests.zookeeper_server`)::

    from tests.zookeeper_ensemble import ZooKeeperEnsemble
    with ZooKeeperEnsemble(tmp_path) as ensemble:
        leader = ensemble.leader()
        ensemble.kill(leader)          # SIGKILL, like a crash
        ensemble.wait_serving()        # the other two elect a new leader
        ensemble.restart(leader)

A server's role is read with the ``srvr`` four-letter word (whitelisted in each
``zoo.cfg``): ``Mode: leader`` / ``Mode: follower`` while it serves, "not
currently serving requests" while it has no quorum.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

import pytest

from tests.zookeeper_server import (
    _CLASSPATH_JARS,
    JAVA_DIR,
    ZOOKEEPER_JAR,
    free_port,
    zookeeper_available,
)

__all__ = ["EnsembleMember", "ZooKeeperEnsemble", "four_letter_word", "zookeeper_ensemble"]


def four_letter_word(port: int, word: str = "srvr", timeout: float = 1.0) -> str:
    """Send a ZooKeeper four-letter word to 127.0.0.1:port; '' if it does not answer."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(word.encode("ascii"))
            data = b""
            while chunk := sock.recv(4096):
                data += chunk
        return data.decode("utf-8", "replace")
    except OSError:
        return ""


class EnsembleMember:
    """One ``QuorumPeerMain`` JVM of an ensemble (``myid`` 1..n)."""

    def __init__(self, base_dir: Path, myid: int, tick_time_ms: int) -> None:
        self.myid = myid
        self.base_dir = base_dir
        self.port = free_port()
        self.quorum_port = free_port()
        self.election_port = free_port()
        self.tick_time_ms = tick_time_ms
        self.config_path = base_dir / "zoo.cfg"
        self.log_path = base_dir / "zookeeper.log"
        self._proc: subprocess.Popen[bytes] | None = None
        (base_dir / "data").mkdir(parents=True, exist_ok=True)
        (base_dir / "data" / "myid").write_text(f"{myid}\n")

    @property
    def hosts(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def write_config(self, peers: list[EnsembleMember]) -> None:
        servers = "".join(
            f"server.{p.myid}=127.0.0.1:{p.quorum_port}:{p.election_port}\n" for p in peers
        )
        self.config_path.write_text(
            f"tickTime={self.tick_time_ms}\n"
            # Followers connect and sync within initLimit ticks, stay within syncLimit.
            "initLimit=20\n"
            "syncLimit=10\n"
            f"dataDir={self.base_dir / 'data'}\n"
            f"clientPort={self.port}\n"
            "clientPortAddress=127.0.0.1\n"
            "admin.enableServer=false\n"
            "maxClientCnxns=0\n"
            "4lw.commands.whitelist=srvr,stat,ruok,cons,mntr\n"
            "minSessionTimeout=400\n"
            "maxSessionTimeout=30000\n"
            # A killed peer's election port refuses at once on loopback; a short
            # connect timeout only matters for a peer that hangs.
            "cnxTimeout=1000\n" + servers
        )

    def start(self) -> None:
        """Start the JVM without waiting (a lone member cannot serve until a quorum forms)."""
        if self.running:
            return
        jars = [str(JAVA_DIR / j) for j in _CLASSPATH_JARS if (JAVA_DIR / j).exists()]
        log = self.log_path.open("ab")
        self._proc = subprocess.Popen(
            [
                "java",
                "-Xshare:auto",
                "-Xmx128m",
                "-XX:TieredStopAtLevel=1",
                "-Dzookeeper.admin.enableServer=false",
                "-cp",
                os.pathsep.join(jars),
                "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                str(self.config_path),
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()

    def mode(self) -> str | None:
        """``leader``, ``follower``, ``observer``; ``None`` while not serving."""
        for line in four_letter_word(self.port).splitlines():
            if line.startswith("Mode: "):
                return line[len("Mode: ") :].strip()
        return None

    def kill(self) -> None:
        """SIGKILL (``kill -9``): no goodbye to clients or peers."""
        if self._proc is None:
            return
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait(timeout=15)
        self._proc = None

    def stop(self, timeout: float = 15.0) -> None:
        if self._proc is None:
            return
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=timeout)
        self._proc = None


class ZooKeeperEnsemble:
    """``size`` ZooKeeper servers forming one ensemble on loopback.

    Args:
        base_dir: A directory the ensemble owns (one sub-directory per server).
        size: Number of servers (3 tolerates one failure).
        tick_time_ms: ZooKeeper's tickTime; short ticks make elections fast.
    """

    def __init__(self, base_dir: Path, size: int = 3, tick_time_ms: int = 200) -> None:
        self.members = [
            EnsembleMember(Path(base_dir) / f"zk{i}", i, tick_time_ms) for i in range(1, size + 1)
        ]
        for member in self.members:
            member.write_config(self.members)

    @property
    def hosts(self) -> str:
        """The connect string naming every server, ``127.0.0.1:a,127.0.0.1:b,...``."""
        return ",".join(m.hosts for m in self.members)

    def member(self, myid: int) -> EnsembleMember:
        return self.members[myid - 1]

    def start(self, timeout: float = 60.0) -> None:
        """Start every server and wait until all of them serve with one leader."""
        if not zookeeper_available():
            raise RuntimeError(f"{ZOOKEEPER_JAR} or java not found; install Debian's zookeeper")
        for m in self.members:
            m.start()
        self.wait_serving(timeout, every=True)

    def wait_serving(self, timeout: float = 30.0, every: bool = False) -> float:
        """Wait until the running servers (``every``: all servers) serve with a leader.

        Returns:
            The seconds waited.
        """
        started = time.monotonic()
        deadline = started + timeout
        while time.monotonic() < deadline:
            for m in self.members:
                if m._proc is not None and m._proc.poll() is not None:
                    raise RuntimeError(f"ZooKeeper {m.myid} exited; see {m.log_path}")
            wanted = self.members if every else [m for m in self.members if m.running]
            modes = [m.mode() for m in wanted]
            if wanted and None not in modes and modes.count("leader") == 1:
                return time.monotonic() - started
            time.sleep(0.05)
        states = {m.myid: (m.running, m.mode()) for m in self.members}
        raise RuntimeError(f"the ensemble did not serve within {timeout} s: {states}")

    def leader(self) -> EnsembleMember:
        """The member that answers ``Mode: leader``."""
        for m in self.members:
            if m.running and m.mode() == "leader":
                return m
        raise RuntimeError("no ZooKeeper in the ensemble is the leader")

    def kill(self, member: EnsembleMember) -> None:
        member.kill()

    def restart(self, member: EnsembleMember, timeout: float = 30.0) -> None:
        """Start a stopped or killed member again (same ports, same data) and wait."""
        member.kill()
        member.start()
        deadline = time.monotonic() + timeout
        while member.mode() is None:
            if time.monotonic() > deadline:
                raise RuntimeError(f"ZooKeeper {member.myid} did not rejoin within {timeout} s")
            time.sleep(0.05)

    def stop(self) -> None:
        for m in self.members:
            m.stop()

    def __enter__(self) -> ZooKeeperEnsemble:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


@pytest.fixture
def zookeeper_ensemble(tmp_path: Path) -> Iterator[ZooKeeperEnsemble]:
    """A 3-server ensemble of this test's own, free to kill and restart members."""
    if not zookeeper_available():
        pytest.fail(f"{ZOOKEEPER_JAR} not found: install Debian's zookeeper (make system)")
    with ZooKeeperEnsemble(tmp_path / "ensemble") as ensemble:
        yield ensemble
