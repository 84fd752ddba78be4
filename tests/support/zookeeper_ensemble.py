"""A throwaway 3-server ZooKeeper ensemble on 127.0.0.1 for fault tests.

Debian's ``zookeeper`` package, run as ``QuorumPeerMain`` JVMs in the
foreground, each with free client, quorum and election ports and its own data
directory (each member is a :class:`tests.support.zookeeper_server.ZooKeeperServer`:
the same jars, JVM flags and ``zoo.cfg``, plus the quorum's lines)::

    from tests.support.zookeeper_ensemble import ZooKeeperEnsemble
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

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.zookeeper_server import ZOOKEEPER_JAR
from tests.support.zookeeper_server import ZooKeeperServer
from tests.support.zookeeper_server import free_port
from tests.support.zookeeper_server import zookeeper_available

__all__ = ["EnsembleMember", "ZooKeeperEnsemble", "zookeeper_ensemble"]


class EnsembleMember(ZooKeeperServer):
    """One ``QuorumPeerMain`` JVM of an ensemble (``myid`` 1..n), ready as leader or follower."""

    main_class = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
    ready_modes = (b"Mode: leader", b"Mode: follower", b"Mode: observer")
    max_heap = "-Xmx128m"

    def __init__(self, base_dir: Path, myid: int, tick_time_ms: int) -> None:
        super().__init__(base_dir, tick_time_ms=tick_time_ms)
        self.myid = myid
        self.quorum_port = free_port()
        self.election_port = free_port()
        (self.base_dir / "data" / "myid").write_text(f"{myid}\n")

    def write_config(self, peers: list[EnsembleMember]) -> None:
        """Add the quorum's lines to ``zoo.cfg`` (once, when every peer has its ports)."""
        servers = "".join(
            f"server.{p.myid}=127.0.0.1:{p.quorum_port}:{p.election_port}\n" for p in peers
        )
        with self.config_path.open("a") as cfg:
            cfg.write(
                # Followers connect and sync within initLimit ticks, stay within syncLimit.
                "initLimit=20\n"
                "syncLimit=10\n"
                # A killed peer's election port refuses at once on loopback; a short
                # connect timeout only matters for a peer that hangs.
                "cnxTimeout=1000\n" + servers
            )

    def mode(self) -> str | None:
        """``leader``, ``follower``, ``observer``; ``None`` while not serving."""
        for line in self.srvr().decode("utf-8", "replace").splitlines():
            if line.startswith("Mode: "):
                return line[len("Mode: ") :].strip()
        return None


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
            m.launch()  # a lone member cannot serve until a quorum forms
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
        member.start(timeout)

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

    def __exit__(self, *_: object) -> None:
        self.stop()


@pytest.fixture
def zookeeper_ensemble(tmp_path: Path) -> Iterator[ZooKeeperEnsemble]:
    """A 3-server ensemble of this test's own, free to kill and restart members."""
    if not zookeeper_available():
        pytest.fail(f"{ZOOKEEPER_JAR} not found: install Debian's zookeeper (make system)")
    with ZooKeeperEnsemble(tmp_path / "ensemble") as ensemble:
        yield ensemble
