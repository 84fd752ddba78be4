"""Continuous logins through forced session expiries and a ZooKeeper restart
: a resync swaps in a complete snapshot atomically, so a login never
sees an empty or partial cache: zero refusals of a current password.

The session of the ``serve`` process is expired from the server side by cutting
its link through a TCP proxy for longer than the session timeout (ZooKeeper
logs "Expiring session"); on healing, kazoo learns of the expiry, opens a new
session and the store reloads everything.
"""

from __future__ import annotations

import time
from pathlib import Path

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SCRAM_SHA_512
from sasl_scram.store import ScramUpsertion
from sasl_scram.store import ZooKeeperCredentialStore
from tests.faults.harness import LoginLoop
from tests.faults.harness import Results
from tests.faults.harness import alice_serving
from tests.faults.harness import seed_users
from tests.faults.harness import set_password
from tests.faults.harness import until_accepted
from tests.support.polling import wait_until
from tests.support.serve_process import ServeProcess
from tests.support.tcp_proxy import TcpProxy
from tests.support.zookeeper_server import ZooKeeperServer

SESSION_MS = 2000
# More users make a full reload take longer, widening any window without credentials.
EXTRA_USERS = 300


def _seed(hosts: str) -> None:
    store = ZooKeeperCredentialStore(hosts)
    try:
        upserts = [
            ScramUpsertion.from_password(f"user-{i}", mech, f"secret-{i}", iterations=4096)
            for i in range(EXTRA_USERS)
            for mech in (SCRAM_SHA_256, SCRAM_SHA_512)
        ]
        for i in range(0, len(upserts), 100):
            assert all(r.error == 0 for r in store.alter([], upserts[i : i + 100]))
    finally:
        store.close()


def _expirations(zk: ZooKeeperServer) -> int:
    return zk.log_path.read_text(errors="replace").count("Expiring session")


def _resynced(ep: ServeProcess, hosts: str, n: int) -> float | None:
    """Change the probe user's password; how long until the endpoint serves it."""
    assert set_password(hosts, "probe", f"probe-{n}", timeout=20)
    return until_accepted(ep.bootstrap, "probe", f"probe-{n}", 30)


def _expire(zk: ZooKeeperServer, proxy: TcpProxy) -> None:
    before = _expirations(zk)
    proxy.partition("refuse")
    expired = wait_until(lambda: _expirations(zk) > before, 10 * SESSION_MS / 1000, 0.1)
    proxy.heal()
    assert expired is not None, "ZooKeeper did not expire the endpoint's session"


def test_zero_refusals_through_session_expiry_and_restart(
    dedicated_zookeeper: ZooKeeperServer, tmp_path: Path, results: Results
) -> None:
    zk = dedicated_zookeeper
    seed_users(zk.hosts, alice="alice-secret")
    _seed(zk.hosts)
    with TcpProxy("127.0.0.1", zk.port) as proxy:
        session = {"zookeeper.session.timeout.ms": str(SESSION_MS)}
        serve = alice_serving(tmp_path, proxy.address, alice="alice-secret", properties=session)
        with serve as (ep,):
            resync: dict[str, float | None] = {}
            with LoginLoop(ep.bootstrap, "alice", "alice-secret", threads=2) as logins:
                _expire(zk, proxy)
                resync["expiry_1"] = _resynced(ep, zk.hosts, 1)
                zk.stop()
                time.sleep(2.0)  # the outage itself: a duration, not a synchronisation
                zk.start()
                resync["restart"] = _resynced(ep, zk.hosts, 2)
                _expire(zk, proxy)
                resync["expiry_2"] = _resynced(ep, zk.hosts, 3)
            attempts = logins.since(0.0)
    refused = [round(t - attempts[0][0], 3) for t, _, ok in attempts if not ok]
    results.record(
        logins=len(attempts),
        refusals=len(refused),
        resync_s={k: None if v is None else round(v, 2) for k, v in resync.items()},
    )
    assert len(attempts) >= 100, f"only {len(attempts)} logins: too few to prove anything"
    assert not refused, (
        f"expected zero refusals of the current password; {len(refused)} of {len(attempts)} "
        f"logins were refused, at these seconds into the run: {refused[:20]}"
    )
    assert None not in resync.values(), f"a change was not served within 30 s: {resync}"
