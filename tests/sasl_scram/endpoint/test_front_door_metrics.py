"""A front door's metrics split what the edge decided from what the cluster did.

Kafka's ``failed-authentication-total`` counts the authenticator's own
verdicts. At the edge that is a wrong password, an unknown user or token; a
login whose password was right and which the cluster then refused (the
front door's own ``upstream.`` login) or could not be reached for is not
one: those are ``kafka_scram_unforwarded_logins_total{reason}``, and the
sets of addresses the front door cannot reach now are
``kafka_scram_upstream_unreachable``. Scraped over HTTP from a real serve in
front of a real broker.
"""

from __future__ import annotations

import time
import urllib.request
from pathlib import Path

import pytest

from sasl_scram import SCRAM_SHA_512
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import KafkaConnectionError
from sasl_scram.admin import SaslCredentials
from tests.sasl_scram.endpoint.test_metrics import samples_of
from tests.support.front_door import front_door_keys
from tests.support.kafka_broker import KafkaBroker
from tests.support.serve_process import ServeProcess
from tests.support.tcp_proxy import TcpProxy
from tests.support.zookeeper_server import free_port

pytestmark = pytest.mark.broker

ALICE = SaslCredentials(SCRAM_SHA_512, "alice", "alice-secret")
WRONG = SaslCredentials(SCRAM_SHA_512, "alice", "not-her-password")
FAILED = (
    'kafka_scram_failed_authentication_total{listener="SASL_PLAINTEXT",mechanism="SCRAM-SHA-512"}'
)
REFUSED = 'kafka_scram_unforwarded_logins_total{reason="login_refused"}'
UNREACHED = 'kafka_scram_unforwarded_logins_total{reason="unreachable"}'
GAUGE = "kafka_scram_upstream_unreachable"


def scrape(port: int) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        return samples_of(answer.read().decode())


def refused_login(bootstrap: str, credentials: SaslCredentials) -> str:
    with pytest.raises(KafkaConnectionError) as caught:
        KafkaConnection(bootstrap, credentials, timeout=20)
    return str(caught.value)


def test_a_refused_upstream_login_is_not_a_failed_authentication(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    upstream_user = f"fd-metrics-{free_port()}"
    kraft_broker.add_user(upstream_user, "upstream-secret")
    metrics_port = free_port()
    keys = front_door_keys(
        tmp_path,
        kraft_broker.bootstrap,
        upstream_user,
        "upstream-secret",
        **{"scram.metrics.listener": f"127.0.0.1:{metrics_port}"},
    )
    with ServeProcess(tmp_path, keys) as serve:
        kraft_broker.delete_user(upstream_user)
        kraft_broker.wait_refused(kraft_broker.credentials(upstream_user, "upstream-secret"))
        for _ in range(3):
            assert "could not log in to the cluster" in refused_login(serve.bootstrap, ALICE)
        after_refusals = scrape(metrics_port)
        # The control: the edge's own verdict still counts as Kafka counts it.
        refused_login(serve.bootstrap, WRONG)
        after_wrong = scrape(metrics_port)
    assert after_refusals.get(FAILED, 0) == 0, after_refusals
    assert after_refusals[REFUSED] == 3, after_refusals
    assert after_wrong[FAILED] == 1, after_wrong
    assert after_wrong[REFUSED] == 3, after_wrong


def test_a_login_that_waited_for_an_unreachable_cluster_is_counted_apart(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    """The cluster, behind a proxy, stops answering after start: alice's right
    password waits for it with its verdict held until her login's time-out,
    which closes it; that is no failed authentication, and the gauge shows
    the bootstrap servers unreachable until the cluster answers again."""
    metrics_port = free_port()
    with TcpProxy("127.0.0.1", kraft_broker.port) as proxy:
        keys = front_door_keys(
            tmp_path,
            proxy.address,
            **{
                "scram.metrics.listener": f"127.0.0.1:{metrics_port}",
                "scram.authentication.timeout.ms": "2000",
            },
        )
        with ServeProcess(tmp_path, keys) as serve:
            proxy.partition("refuse")
            started = time.monotonic()
            refused_login(serve.bootstrap, ALICE)
            waited = time.monotonic() - started
            during = scrape(metrics_port)
            proxy.heal()
            # The next connection waits in the queue until a look reaches the cluster.
            KafkaConnection(serve.bootstrap, ALICE, timeout=20).close()
            after = scrape(metrics_port)
            log = serve.log_text()
    assert 1.5 < waited < 10, f"the login was closed after {waited:.1f} s"
    assert during.get(FAILED, 0) == 0, during
    assert during[UNREACHED] == 1, during
    assert during[GAUGE] == 1, during
    assert after[GAUGE] == 0, after
    assert log.count("Cannot reach the cluster") == 1, log[-3000:]
    assert log.count("Reached the cluster") == 1, log[-3000:]


def test_the_gauge_shows_a_cluster_away_since_start_until_it_is_reached(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    """``serve`` started while the cluster cannot be reached accepts nothing: the
    gauge says 1 (as for an outage later), and 0 once the cluster is reached."""
    metrics_port = free_port()
    with TcpProxy("127.0.0.1", kraft_broker.port) as proxy:
        proxy.partition("refuse")
        keys = front_door_keys(
            tmp_path, proxy.address, **{"scram.metrics.listener": f"127.0.0.1:{metrics_port}"}
        )
        with ServeProcess(tmp_path, keys) as serve:
            serve.wait_for_log("Cannot reach the cluster at start")
            during = scrape(metrics_port)
            proxy.heal()
            KafkaConnection(serve.bootstrap, ALICE, timeout=30).close()
            after = scrape(metrics_port)
    assert during.get(GAUGE) == 1, during
    assert after.get(GAUGE) == 0, after


def test_a_killed_workers_upstream_connections_leave_the_gauge(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    """With ``scram.workers=2``, a worker killed with forwarded connections open
    took their upstream connections with it: the parent's sum no longer counts
    them once it has noticed, as it stops counting the worker's client connections."""
    import os
    import re
    import signal

    from tests.support.polling import wait_until

    started = re.compile(r"Worker (\d+) started \(pid (\d+)\)")
    metrics_port = free_port()
    keys = front_door_keys(
        tmp_path,
        kraft_broker.bootstrap,
        **{"scram.metrics.listener": f"127.0.0.1:{metrics_port}", "scram.workers": "2"},
    )
    with ServeProcess(tmp_path, keys) as serve:
        clients = [KafkaConnection(serve.bootstrap, ALICE, timeout=30) for _ in range(6)]
        try:
            assert scrape(metrics_port)["kafka_scram_upstream_connections"] == 6
            for index in (0, 1):
                pids = {int(m[1]): int(m[2]) for m in map(started.search, serve.log_lines()) if m}
                os.kill(pids[index], signal.SIGKILL)
                serve.wait_for_log(f"Worker {index} (pid {pids[index]}) was killed")
        finally:
            for client in clients:
                client.close()
        gauge = wait_until(
            lambda: scrape(metrics_port)["kafka_scram_upstream_connections"] == 0, 10, 0.1
        )
        assert gauge is not None, scrape(metrics_port)
