"""A fleet of two front doors sharing one ZooKeeper store, in front of one cluster.

Front doors A and B are two ``kafka-scram serve`` processes in front of the
session's KRaft broker, on the same ``zookeeper.connect`` (Kafka's layout:
users under ``/config/users``, tokens under ``/delegation_token``), each with
its own listener, node ports (``upstream.node.port.base``) and ``/metrics``;
B runs two workers. What one front door writes to the store, the other
serves once its watch fires: a user created through A (KIP-554, by the edge's
super user) logs in through B, a token created through B logs in through A,
and a credential deleted through A is refused at B. Each front door's
``/metrics`` counts only the requests it forwarded itself, B's summed over
its workers.
"""

from __future__ import annotations

import contextlib
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest

import jaas
from sasl_scram import SCRAM_SHA_512
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import SaslCredentials
from sasl_scram.kafka import ApiKey
from tests.sasl_scram.integrations.real_clients import ROUNDTRIPS
from tests.support.broker_and_serve import REFUSED
from tests.support.broker_and_serve import login_error
from tests.support.cli_process import kafka_scram
from tests.support.front_door import upstream_keys
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.polling import wait_until
from tests.support.proc_tcp import established_to
from tests.support.serve_process import ServeProcess
from tests.support.zookeeper_server import ZooKeeperServer
from tests.support.zookeeper_server import free_port
from tests.support.zookeeper_server import free_port_base

pytestmark = [pytest.mark.zookeeper, pytest.mark.broker, pytest.mark.jvm]

#: The edge's super user (``super.users``), in the shared store only.
EDGE_ADMIN = ("fleet-admin", "fleet-admin-secret")
#: One token secret for the fleet: a token is checked by whichever door it reaches.
TOKEN_SECRET = "fleet-edge-token-secret"
#: Bound on a change written through one door being served by the other
#: (a ZooKeeper watch, plus a loaded 2-core machine).
PROPAGATION_S = 15.0
#: A Metadata v12 request naming no topic.
METADATA = {"topics": [], "allow_auto_topic_creation": False}


@dataclass
class Door:
    """One front door of the fleet: its serve process and its ``/metrics`` port."""

    serve: ServeProcess
    metrics_port: int

    def forwarded(self, api: str, user: str | None = None) -> float:
        """``kafka_scram_forwarded_requests_total{api=...}`` from its ``/metrics``;
        with ``user``, that user's ``kafka_scram_user_forwarded_requests_total``."""
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            text = response.read().decode()
        name = f'kafka_scram_forwarded_requests_total{{api="{api}"}} '
        if user is not None:
            name = f'kafka_scram_user_forwarded_requests_total{{api="{api}",user="{user}"}} '
        return sum(float(line[len(name) :]) for line in text.splitlines() if line.startswith(name))

    def workers(self) -> list[int]:
        assert self.serve.proc is not None
        pid = self.serve.proc.pid
        children = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        return children or [pid]


@dataclass
class Fleet:
    a: Door
    b: Door
    broker: KafkaBroker
    base_dir: Path


def _door(fleet_keys: dict[str, str], base_dir: Path, name: str, **more: str) -> Door:
    metrics_port = free_port()
    keys = {
        **fleet_keys,
        "upstream.node.port.base": str(free_port_base()),
        "scram.metrics.listener": f"127.0.0.1:{metrics_port}",
        **more,
    }
    return Door(ServeProcess(base_dir, keys, name), metrics_port)


@pytest.fixture(scope="module")
def fleet(
    zookeeper_server: ZooKeeperServer,
    kraft_broker: KafkaBroker,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Fleet]:
    """A and B on one fresh chroot of the session's ZooKeeper; B with two workers."""
    base_dir = tmp_path_factory.mktemp("fleet")
    hosts = f"{zookeeper_server.hosts}/fleet{uuid.uuid4().hex[:8]}"
    seeded = kafka_scram(
        "configs", "--zookeeper", hosts, "--alter",
        "--add-config", f"SCRAM-SHA-512=[password={EDGE_ADMIN[1]}]",
        "--entity-type", "users", "--entity-name", EDGE_ADMIN[0],
    )  # fmt: skip
    assert seeded.returncode == 0, seeded.stderr
    fleet_keys = {
        "zookeeper.connect": hosts,
        "super.users": f"User:{EDGE_ADMIN[0]}",
        "delegation.token.secret.key": TOKEN_SECRET,
        **upstream_keys(kraft_broker.bootstrap),
    }
    a = _door(fleet_keys, base_dir, "door-a")
    b = _door(fleet_keys, base_dir, "door-b", **{"scram.workers": "2"})
    with contextlib.ExitStack() as stack:
        stack.enter_context(a.serve)
        stack.enter_context(b.serve)
        yield Fleet(a, b, kraft_broker, base_dir)


def _properties(bootstrap: str, user: str, secret: str, token: bool = False) -> dict[str, str]:
    line = jaas.scram_token_login_line if token else jaas.scram_login_line
    return {
        "bootstrap.servers": bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": str(line(user, secret)),
    }


def _configs_at(fleet: Fleet, door: Door, *args: str) -> None:
    """``kafka-scram configs --bootstrap-server <door>`` as the edge's super user:
    AlterUserScramCredentials (KIP-554) answered by that door."""
    admin = fleet.base_dir / "admin.properties"
    admin.write_text(
        "".join(f"{k}={v}\n" for k, v in _properties(door.serve.bootstrap, *EDGE_ADMIN).items())
    )
    done = kafka_scram(
        "configs", "--bootstrap-server", door.serve.bootstrap, "--command-config", str(admin),
        "--alter", *args,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def _create_user(fleet: Fleet, door: Door) -> tuple[str, str]:
    user = unique_name("fleet")
    password = f"{user}-secret"
    _configs_at(
        fleet, door,
        "--add-config", f"SCRAM-SHA-512=[password={password}]",
        "--entity-type", "users", "--entity-name", user,
    )  # fmt: skip
    return user, password


def _logs_in(door: Door, login: SaslCredentials, outcome: int) -> bool:
    return login_error(door.serve.bootstrap, login) == outcome


def _until(door: Door, login: SaslCredentials, outcome: int, what: str) -> None:
    took = wait_until(partial(_logs_in, door, login, outcome), PROPAGATION_S, 0.1)
    assert took is not None, f"{what} within {PROPAGATION_S:g} s: {door.serve.log_text()[-2000:]}"


def _values(topic: str) -> list[bytes]:
    return [f"{topic}/{i}".encode() for i in range(5)]


def test_a_user_created_through_a_produces_and_consumes_through_b(fleet: Fleet) -> None:
    user, password = _create_user(fleet, fleet.a)
    login = SaslCredentials(SCRAM_SHA_512, user, password)
    _until(fleet.b, login, 0, f"{user} created through A logs in through B")
    topic = unique_name("fleet-b")
    sent = _values(topic)
    props = _properties(fleet.b.serve.bootstrap, user, password)
    assert ROUNDTRIPS["kafka-python"](props, topic, sent) == sent


def test_a_token_created_through_b_produces_and_consumes_through_a(fleet: Fleet) -> None:
    """CreateDelegationToken is answered at B's edge; the token is A's too."""
    from tokenauth import DelegationTokenClient

    user, password = _create_user(fleet, fleet.a)
    owner = SaslCredentials(SCRAM_SHA_512, user, password)
    _until(fleet.b, owner, 0, f"{user} logs in through B")
    with DelegationTokenClient(
        KafkaConnection(fleet.b.serve.bootstrap, owner, timeout=20)
    ) as tokens:
        token = tokens.create_token()
    assert token.info.owner.name == user
    login = SaslCredentials(SCRAM_SHA_512, token.token_id, token.hmac_base64, True)
    _until(fleet.a, login, 0, "the token created through B logs in through A")
    assert login_error(fleet.broker.bootstrap, login) == REFUSED  # an edge token only
    topic = unique_name("fleet-token")
    sent = _values(topic)
    props = _properties(fleet.a.serve.bootstrap, token.token_id, token.hmac_base64, token=True)
    assert ROUNDTRIPS["kafka-python"](props, topic, sent) == sent


def test_a_credential_deleted_through_a_is_refused_at_b(fleet: Fleet) -> None:
    user, password = _create_user(fleet, fleet.a)
    login = SaslCredentials(SCRAM_SHA_512, user, password)
    _until(fleet.b, login, 0, f"{user} logs in through B")
    _configs_at(
        fleet, fleet.a,
        "--delete-config", "SCRAM-SHA-512", "--entity-type", "users", "--entity-name", user,
    )  # fmt: skip
    _until(fleet.a, login, REFUSED, f"{user} deleted through A is refused at A")
    _until(fleet.b, login, REFUSED, f"{user} deleted through A is refused at B")


def _metadata_through(door: Door, login: SaslCredentials, n: int, broker: KafkaBroker) -> list[int]:
    """``n`` connections to ``door``, each forwarding one Metadata request: how
    many upstream connections each of its workers holds while they are open."""
    with contextlib.ExitStack() as stack:
        for _ in range(n):
            conn = stack.enter_context(KafkaConnection(door.serve.bootstrap, login, timeout=20))
            assert conn.request(ApiKey.METADATA, METADATA, 12)["brokers"]
        return [len(established_to(broker.port, pid)) for pid in door.workers()]


def test_each_door_counts_what_it_forwarded_b_summed_over_its_workers(fleet: Fleet) -> None:
    user, password = _create_user(fleet, fleet.a)
    login = SaslCredentials(SCRAM_SHA_512, user, password)
    _until(fleet.b, login, 0, f"{user} logs in through B")
    before = (fleet.a.forwarded("Metadata"), fleet.b.forwarded("Metadata"))
    spread = _metadata_through(fleet.b, login, 12, fleet.broker)
    assert len(spread) == 2 and all(spread), f"B's workers held {spread} connections"
    middle = (fleet.a.forwarded("Metadata"), fleet.b.forwarded("Metadata"))
    assert middle == (before[0], before[1] + 12)
    # The user's row is one in both workers (one shared table of names): exact.
    assert fleet.b.forwarded("other", user) == 12
    _metadata_through(fleet.a, login, 3, fleet.broker)
    after = (fleet.a.forwarded("Metadata"), fleet.b.forwarded("Metadata"))
    assert after == (middle[0] + 3, middle[1])
