"""What ``serve`` says during one ZooKeeper outage: state changes logged
once each by the project's own loggers, naming the ZooKeeper hosts (a WARNING
when lost, an ERROR when failing closed, an INFO when resynced with how long it
was out), fewer than 20 lines in all (besides Kafka's one INFO per refused
login, which the client decides), and no traceback for refused token logins."""

from __future__ import annotations

import re
import time
from pathlib import Path

from sasl_scram.config import ClientConfig
from tests.faults.harness import ADMIN
from tests.faults.harness import Results
from tests.faults.harness import alice_serving
from tests.faults.harness import login
from tests.faults.harness import seed_users
from tests.faults.harness import set_password
from tests.support.polling import wait_until
from tests.support.zookeeper_server import ZooKeeperServer
from tokenauth import DelegationTokenClient

STALENESS_MS = 2000
LINE = re.compile(r"^\S+ \S+ (DEBUG|INFO|WARNING|ERROR|CRITICAL) (\S+) (.*)$")
DURATION = re.compile(r"\d+(\.\d+)?\s*(ms|s|seconds?)\b")
OURS = ("sasl_scram", "tokenauth")
# Kafka logs every failed login at INFO, one line per refused connection; the
# test decides how many it makes, so they are counted apart from the budget.
FAILED_LOGIN = re.compile(r" INFO sasl_scram\.endpoint \[[^\]]+\] closing: .*authentication failed")


class Refusals:
    """Counts the logins this test saw refused."""

    def __init__(self) -> None:
        self.count = 0

    def login(self, bootstrap: str, user: str, password: str, token: bool = False) -> bool:
        ok = login(bootstrap, user, password, token=token)
        self.count += not ok
        return ok


def _create_token(bootstrap: str) -> tuple[str, str]:
    config = ClientConfig.from_properties(
        {
            "bootstrap.servers": bootstrap,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.jaas.config": (
                "org.apache.kafka.common.security.scram.ScramLoginModule required "
                f'username="{ADMIN[0]}" password="{ADMIN[1]}";'
            ),
        }
    )
    with DelegationTokenClient.connect(config) as client:
        token = client.create_token()
    return token.token_id, token.hmac_base64


def _ours(lines: list[str], level: str, hosts: str) -> list[str]:
    """The messages our own loggers logged at ``level`` naming ``hosts``."""
    out = []
    for line in lines:
        m = LINE.match(line)
        if m and m[1] == level and m[2].startswith(OURS) and hosts in m[3]:
            out.append(m[3])
    return out


def test_one_outage_is_a_few_lines_naming_the_hosts(
    dedicated_zookeeper: ZooKeeperServer, tmp_path: Path, results: Results
) -> None:
    zk = dedicated_zookeeper
    seed_users(zk.hosts)
    props = {
        "scram.store.max.staleness.ms": str(STALENESS_MS),
        "delegation.token.secret.key": "fault-test-token-key",
    }
    with alice_serving(tmp_path, zk.hosts, properties=props) as (ep,):
        token_id, hmac = _create_token(ep.bootstrap)
        assert wait_until(lambda: login(ep.bootstrap, token_id, hmac, token=True), 10) is not None
        before = len(ep.log_lines())
        refusals = Refusals()
        zk.kill()
        lost_at = time.monotonic()
        closed = wait_until(lambda: not refusals.login(ep.bootstrap, "alice", "pw-0"), 10, 0.1)
        token_refusals = sum(
            not refusals.login(ep.bootstrap, token_id, hmac, token=True) for _ in range(5)
        )
        # Logins are refused now: the ERROR saying so may trail the first refusal a
        # little (a store may notice on its own once-a-second check), not the outage.
        wait_until(lambda: bool(_ours(ep.log_lines()[before:], "ERROR", zk.hosts)), 1.5, 0.1)
        zk.start()
        assert set_password(zk.hosts, "alice", "pw-1", timeout=20)
        resynced = wait_until(lambda: refusals.login(ep.bootstrap, "alice", "pw-1"), 30, 0.2)
        # The INFO is written when the resync completes; give the line a moment to land.
        wait_until(lambda: bool(_ours(ep.log_lines()[before:], "INFO", zk.hosts)), 3, 0.1)
        logged = ep.log_lines()[before:]
        out_for = time.monotonic() - lost_at
    failed_logins = [line for line in logged if FAILED_LOGIN.search(line)]
    # The audit trail's line per login is a stream of its own (routed apart by
    # --log-config), not the outage's.
    outage = [
        line
        for line in logged
        if not FAILED_LOGIN.search(line) and " kafka_scram.audit " not in line
    ]
    warnings, errors = _ours(outage, "WARNING", zk.hosts), _ours(outage, "ERROR", zk.hosts)
    infos = _ours(outage, "INFO", zk.hosts)
    results.record(
        log_lines=len(outage),
        failed_login_lines=len(failed_logins),
        refused_logins=refusals.count,
        fail_closed_after_s=None if closed is None else round(closed, 2),
        token_refusals=token_refusals,
        resync_s=None if resynced is None else round(resynced, 2),
        outage_s=round(out_for, 1),
    )
    shown = "\n".join(outage[:25])
    problems = []
    if "Traceback" in "\n".join(outage):
        problems.append("a traceback was logged")
    if len(outage) >= 20:
        problems.append(
            f"expected fewer than 20 lines for one outage (besides one INFO per refused "
            f"login), got {len(outage)}"
        )
    if len(failed_logins) > refusals.count:
        problems.append(
            f"{len(failed_logins)} failed-login lines for {refusals.count} refused logins"
        )
    if not warnings:
        problems.append(f"no WARNING from our loggers naming {zk.hosts} when the link was lost")
    if not errors:
        problems.append(f"no ERROR from our loggers naming {zk.hosts} when failing closed")
    if not any(DURATION.search(line) for line in infos):
        problems.append(f"no INFO from our loggers naming {zk.hosts} and how long it was out")
    order = [
        next(i for i, line in enumerate(outage) if m[0] in line) for m in (warnings, errors) if m
    ]
    if len(order) == 2 and order[0] > order[1]:
        problems.append("the ERROR (failing closed) came before the WARNING (lost)")
    if closed is None:
        problems.append(f"logins still accepted 10 s into the outage (staleness {STALENESS_MS} ms)")
    if token_refusals != 5:
        problems.append(f"{token_refusals} of 5 token logins refused while failing closed")
    if resynced is None:
        problems.append("the change made after the restart was not served within 30 s")
    assert not problems, "; ".join(problems) + f"\nthe outage's log:\n{shown}"
