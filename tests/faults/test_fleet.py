"""The fleet test: a 3-server ZooKeeper ensemble, two ``kafka-scram
serve`` processes, a writer changing a password every 0.5 s through ``configs
--zookeeper``, and the ensemble's leader killed with SIGKILL.

Targets: both endpoints accept the newest acknowledged password within 5 s of
its acknowledgement, no acknowledged write is lost, and the final state is the
same on both endpoints. Under a minute.
"""

from __future__ import annotations

import threading
import time
from functools import partial
from operator import contains
from pathlib import Path

from tests.faults.harness import Results
from tests.faults.harness import alice_serving
from tests.faults.harness import describe
from tests.faults.harness import login
from tests.faults.harness import seed_users
from tests.faults.harness import set_password
from tests.support.polling import wait_until
from tests.support.serve_process import ServeProcess
from tests.support.zookeeper_ensemble import ZooKeeperEnsemble

WRITE_EVERY = 0.5
BEFORE_KILL = 3.0
AFTER_KILL = 8.0
TARGET_LAG = 5.0
# Writes keep flowing across the failover: at least this many acknowledged
# after the kill. Counted, not timed: under load each `configs` process takes
# seconds (2.5-2.8 s at a load of 10 on 2 cores), so a fixed window held too few.
MIN_AFTER_KILL = 3
MAX_RUNTIME = 60.0


def _acked_after(writer: Writer, moment: float, count: int) -> bool:
    return sum(t > moment for _, t in writer.acked) >= count


class Writer(threading.Thread):
    """Changes alice's password to ``pw-<n>`` every 0.5 s; records acknowledgements."""

    def __init__(self, hosts: str) -> None:
        super().__init__(daemon=True, name="writer")
        self.hosts = hosts
        self.acked: list[tuple[int, float]] = [(0, time.monotonic())]
        self.failed: list[int] = []
        self.stop = threading.Event()

    def latest(self) -> tuple[int, float]:
        return self.acked[-1]

    def run(self) -> None:
        n = 0
        hard_stop: float | None = None
        while True:
            if self.stop.is_set():
                hard_stop = hard_stop or time.monotonic() + 15.0
                # Finish on an acknowledged write, so the final state is known.
                if n == self.acked[-1][0] or time.monotonic() > hard_stop:
                    return
            n += 1
            started = time.monotonic()
            if set_password(self.hosts, "alice", f"pw-{n}", timeout=20):
                self.acked.append((n, time.monotonic()))
            else:
                self.failed.append(n)
            self.stop.wait(max(0.0, WRITE_EVERY - (time.monotonic() - started)))


class Prober(threading.Thread):
    """Logs in to one endpoint with the newest acknowledged password until it works.

    When the newest is refused it asks which password the endpoint holds, from
    the write not yet acknowledged down to the last one it accepted. A round in
    which the endpoint refuses all of them, twice in a row, is a blackout: the
    endpoint had no recent credential for the user (or went back in time).
    """

    def __init__(self, endpoint: ServeProcess, writer: Writer) -> None:
        super().__init__(daemon=True, name=f"probe-{endpoint.name}")
        self.endpoint = endpoint
        self.writer = writer
        self.seen: dict[int, float] = {}
        self.blackouts: list[tuple[float, int, int]] = []
        self.logins = 0
        self.stop = threading.Event()
        self._best = -1

    def _try(self, n: int) -> bool:
        self.logins += 1
        if not login(self.endpoint.bootstrap, "alice", f"pw-{n}", timeout=3.0):
            return False
        if n > self._best:
            self._best = n
            self.seen[n] = time.monotonic()
        return True

    def _holds_any(self, newest: int) -> bool:
        return any(self._try(m) for m in range(newest + 1, max(self._best, 0) - 1, -1))

    def run(self) -> None:
        while not self.stop.is_set():
            n, _ = self.writer.latest()
            if n <= self._best:
                self.stop.wait(0.02)
                continue
            if self._try(n) or self._holds_any(n) or self._holds_any(self.writer.latest()[0]):
                continue
            self.blackouts.append((time.monotonic(), self._best, n))

    def lag(self, n: int, acked_at: float, now: float) -> float:
        """Seconds from acknowledging ``pw-n`` to this endpoint serving it or a newer one."""
        later = [t for m, t in self.seen.items() if m >= n]
        return (min(later) if later else now) - acked_at


def _znodes(ensemble: ZooKeeperEnsemble) -> dict[int, bytes]:
    """alice's znode as each server (the restarted one included) holds it."""
    from kazoo.client import KazooClient

    out = {}
    for member in ensemble.members:
        client = KazooClient(hosts=member.hosts)
        client.start(timeout=10)
        try:
            client.sync("/config/users/alice")  # catch up with the leader first
            out[member.myid] = client.get("/config/users/alice")[0]
        finally:
            client.stop()
            client.close()
    return out


def test_leader_kill_loses_nothing_and_both_endpoints_converge(
    zookeeper_ensemble: ZooKeeperEnsemble, tmp_path: Path, results: Results
) -> None:
    started = time.monotonic()
    hosts = zookeeper_ensemble.hosts
    seed_users(hosts)
    # Refusals answer at once, so a probe round is short (KIP-306's delay is 100 ms).
    # Kafka's 18 s session: a member still joining the new leader may leave a
    # handshake unanswered, which kazoo alone waits out for session timeout /
    # hosts (6 s); the store gives such an attempt about a second.
    props = {
        "connection.failed.authentication.delay.ms": "0",
        # The probers guess: while an endpoint is without ZooKeeper (about 1 s
        # after the kill) each round refuses pw-n and the passwords below it,
        # dozens in all; past the failure budget (20 per name and address pair)
        # every verdict, a success too, waits 1 s, and a prober chasing a
        # write every 0.5 s fell 5-7 s behind an endpoint that had them all.
        "scram.login.failure.budget": "0",
    }
    with alice_serving(tmp_path, hosts, "serve-a", "serve-b", properties=props) as endpoints:
        writer = Writer(hosts)
        probers = [Prober(ep, writer) for ep in endpoints]
        for thread in (writer, *probers):
            thread.start()
        try:
            time.sleep(BEFORE_KILL)  # writes flowing before the fault (a duration, not a sync)
            leader = zookeeper_ensemble.leader()
            killed_at = time.monotonic()
            zookeeper_ensemble.kill(leader)
            election = zookeeper_ensemble.wait_serving(timeout=30)
            time.sleep(max(0.0, AFTER_KILL - (time.monotonic() - killed_at)))
            wait_until(partial(_acked_after, writer, killed_at, MIN_AFTER_KILL), 20.0, 0.1)
            writer.stop.set()
            writer.join(30)
            final, _ = writer.latest()
            for p in probers:
                wait_until(partial(contains, p.seen, final), TARGET_LAG + 1.0, 0.05)
        finally:
            writer.stop.set()
            writer.join(30)  # its configs process ends before the ensemble is stopped
            for p in probers:
                p.stop.set()
                p.join(10)
        now = time.monotonic()
        lags = {
            p.endpoint.name: {n: round(p.lag(n, t, now), 2) for n, t in writer.acked[1:]}
            for p in probers
        }
        after_kill = [n for n, t in writer.acked if t > killed_at]
        write_gap = min((t for _, t in writer.acked if t > killed_at), default=now) - killed_at
        states = [describe(ep.bootstrap) for ep in endpoints]
        zookeeper_ensemble.restart(leader)
        znodes = _znodes(zookeeper_ensemble)
        old_ok = [login(ep.bootstrap, "alice", f"pw-{final - 1}") for ep in endpoints]
        new_ok = [login(ep.bootstrap, "alice", f"pw-{final}") for ep in endpoints]
    results.record(
        leader_killed=leader.myid,
        election_s=round(election, 2),
        writes_acked=len(writer.acked) - 1,
        write_interval_s=round(
            (writer.acked[-1][1] - writer.acked[1][1]) / max(1, len(writer.acked) - 2), 2
        ),
        writes_failed=len(writer.failed),
        write_unavailable_after_kill_s=round(write_gap, 2),
        max_lag_s={name: max(v.values(), default=0.0) for name, v in lags.items()},
        probe_logins={p.endpoint.name: p.logins for p in probers},
        blackouts={p.endpoint.name: len(p.blackouts) for p in probers},
        runtime_s=round(time.monotonic() - started, 1),
    )
    assert len(after_kill) >= MIN_AFTER_KILL, (
        f"only {len(after_kill)} writes were acknowledged after the leader kill"
    )
    for name, per_write in lags.items():
        late = {n: lag for n, lag in per_write.items() if lag > TARGET_LAG}
        assert not late, (
            f"{name}: expected every acknowledged password served within {TARGET_LAG:g} s, "
            f"but these writes (n: seconds) took longer: {late}"
        )
    for p in probers:
        when = [(round(t - killed_at, 2), best, n) for t, best, n in p.blackouts]
        assert not when, (
            f"{p.endpoint.name} refused every recent password of alice (from the last one it "
            f"accepted to the newest acknowledged + 1), twice in a row, at (s after the kill, "
            f"last accepted, newest): {when}"
        )
    assert new_ok == [True, True], (
        f"the last acknowledged password pw-{final} is refused ({new_ok}): a lost write"
    )
    assert old_ok == [False, False], f"pw-{final - 1} is still accepted: {old_ok}"
    assert states[0] == states[1], f"the endpoints describe different states: {states}"
    assert len(set(znodes.values())) == 1, (
        f"the servers hold different versions of alice's znode after the old leader "
        f"{leader.myid} rejoined: {sorted(znodes)}"
    )
    assert "alice" in states[0]["users"], states[0]  # type: ignore[operator]
    assert len(writer.acked) > 1 and writer.acked[1][1] < killed_at, (
        "no write was acknowledged before the leader kill"
    )
    runtime = time.monotonic() - started
    assert runtime < MAX_RUNTIME, f"the fleet test took {runtime:.0f} s"
