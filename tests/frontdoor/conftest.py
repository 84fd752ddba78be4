"""A real ``kafka-scram serve`` as the front door of the suite's real brokers.

The edge user exists only in the front door's SQLite store, made with
``kafka-scram configs --store``; the broker never heard of it. The front door
logs in at the broker as the broker's own super user (its ``upstream.``
login), through a :class:`~tests.support.tcp_proxy.TcpProxy` that counts the
connections made to the broker's bootstrap listener. Node N of the cluster is
served on ``upstream.node.port.base`` + N.

``front_door`` is one front door per broker (Kafka 4.x in KRaft mode, Kafka
3.9 in ZooKeeper mode: the session's brokers, started once for the whole
suite) for the module; :func:`open_front_door` starts one with other
listener settings.
"""

from __future__ import annotations

import contextlib
import urllib.request
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

import jaas
from sasl_scram import ScramMechanism
from sasl_scram.admin import SaslCredentials
from tests.support.broker_and_serve import REFUSED
from tests.support.broker_and_serve import login_error
from tests.support.cli_process import kafka_scram
from tests.support.javaharness import JavaHarness
from tests.support.javaharness import b64
from tests.support.kafka_broker import ADMIN_PASSWORD
from tests.support.kafka_broker import ADMIN_USER
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.serve_process import ServeProcess
from tests.support.tcp_proxy import TcpProxy
from tests.support.zookeeper_server import free_port
from tests.support.zookeeper_server import free_port_base

#: The edge's mechanisms: each test runs with both.
MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
#: The front door's own token secret: not the broker's, so a token it issues
#: cannot log in at the broker.
EDGE_TOKEN_SECRET = "front-door-edge-token-secret"


@dataclass
class FrontDoor:
    """A running front door in front of ``broker``, and its one edge user.

    Attributes:
        broker: the cluster (one broker).
        serve: the ``kafka-scram serve`` process.
        proxy: between the front door and the broker's bootstrap listener.
        node_port_base: ``upstream.node.port.base``.
        metrics_port: ``scram.metrics.listener``'s port.
        user: the edge user, in the front door's store only.
        password: its password (both mechanisms).
    """

    broker: KafkaBroker
    serve: ServeProcess
    proxy: TcpProxy
    node_port_base: int
    metrics_port: int
    user: str
    password: str

    @property
    def bootstrap(self) -> str:
        return self.serve.bootstrap

    def __repr__(self) -> str:
        return f"FrontDoor({self.bootstrap} to {self.broker!r})"

    def log_tail(self, lines: int = 80) -> str:
        """The end of serve's log: what the front door saw (a failing test shows it)."""
        return "\n".join(self.serve.log_lines()[-lines:])

    @property
    def node_id(self) -> int:
        """The broker's node id: 1 in KRaft mode, 0 in ZooKeeper mode (broker.id)."""
        return 1 if self.broker.kraft else 0

    @property
    def node_address(self) -> str:
        """Where clients reach the broker's node: the front door's host and node port."""
        return f"127.0.0.1:{self.node_port_base + self.node_id}"

    def properties(
        self, mechanism: str, login: tuple[str, str, bool] | None = None
    ) -> dict[str, str]:
        """``client.properties`` through the front door, as ``(name, secret, token)``;
        the edge user by default."""
        name, secret, token = login or (self.user, self.password, False)
        line = jaas.scram_token_login_line if token else jaas.scram_login_line
        return {
            "bootstrap.servers": self.bootstrap,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": mechanism,
            "sasl.jaas.config": str(line(name, secret)),
        }

    def java_properties(self, mechanism: str, **extra: str) -> str:
        """:meth:`properties` with ``extra``, as a Java client reads them (base64)."""
        props = {
            **self.properties(mechanism),
            "request.timeout.ms": "15000",
            "default.api.timeout.ms": "30000",
            **extra,
        }
        return b64("".join(f"{k}={v}\n" for k, v in props.items()))

    def upstream_opened(self) -> int:
        """How many connections to the cluster the front door has opened for
        clients, from its ``/metrics`` (the start-up look is not counted)."""
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            text = response.read().decode()
        name = 'kafka_scram_upstream_connection_events_total{event="opened"} '
        counts = [line[len(name) :] for line in text.splitlines() if line.startswith(name)]
        return int(float(counts[0])) if counts else 0

    def credentials(self, mechanism: str) -> SaslCredentials:
        return SaslCredentials(ScramMechanism.from_name(mechanism), self.user, self.password)


def upstream_properties(broker: KafkaBroker, bootstrap: str) -> dict[str, str]:
    """The ``upstream.`` keys: the broker's super user over SASL_PLAINTEXT, as its
    listener wants it; a cluster administrator, which serve starts with only when
    told (``upstream.allow.cluster.admin``, test_cluster_admin.py)."""
    login = jaas.scram_login_line(ADMIN_USER, ADMIN_PASSWORD)
    return {
        "upstream.bootstrap.servers": bootstrap,
        "upstream.allow.cluster.admin": "true",
        "upstream.security.protocol": "SASL_PLAINTEXT",
        "upstream.sasl.mechanism": "SCRAM-SHA-512",
        "upstream.sasl.jaas.config": str(login),
    }


def edge_user_store(path: Path, user: str, password: str) -> None:
    """A SQLite store holding ``user`` with both mechanisms, made by the CLI."""
    credentials = ",".join(f"{m}=[password={password}]" for m in MECHANISMS)
    result = kafka_scram(
        "configs",
        "--store",
        f"sqlite:{path}",
        "--alter",
        "--add-config",
        credentials,
        "--entity-type",
        "users",
        "--entity-name",
        user,
    )
    assert result.returncode == 0, result.stderr


@contextlib.contextmanager
def open_front_door(
    broker: KafkaBroker,
    base_dir: Path,
    listener: Mapping[str, str] | None = None,
    user: str | None = None,
) -> Iterator[FrontDoor]:
    """A front door in front of ``broker`` with ``listener``'s extra serve keys,
    logging at DEBUG (logins and re-authentications are logged there); its edge
    user is ``user``, or a name of its own."""
    user = user or unique_name("edge")
    password = f"{user}-password"
    store = base_dir / "edge.db"
    base_dir.mkdir(parents=True, exist_ok=True)
    edge_user_store(store, user, password)
    # The broker never heard of the edge user.
    for mechanism in MECHANISMS:
        refused = SaslCredentials(ScramMechanism.from_name(mechanism), user, password)
        assert login_error(broker.bootstrap, refused) == REFUSED
    base = free_port_base()
    metrics_port = free_port()
    while base <= metrics_port <= base + 4:  # not a node port
        metrics_port = free_port()
    with TcpProxy("127.0.0.1", broker.port) as proxy:
        keys = {
            "scram.credential.store.path": str(store),
            "scram.metrics.listener": f"127.0.0.1:{metrics_port}",
            "delegation.token.secret.key": EDGE_TOKEN_SECRET,
            **upstream_properties(broker, proxy.address),
            "upstream.node.port.base": str(base),
            **(listener or {}),
        }
        with ServeProcess(base_dir, keys, args=("--log-level", "DEBUG")) as serve:
            yield FrontDoor(broker, serve, proxy, base, metrics_port, user, password)


@pytest.fixture(
    scope="module",
    params=["kraft", pytest.param("zookeeper", marks=pytest.mark.zookeeper)],
    ids=["kafka4-kraft", "kafka39-zookeeper"],
)
def front_door(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FrontDoor]:
    """A front door in front of each of the session's brokers in turn."""
    broker: KafkaBroker = request.getfixturevalue(f"{request.param}_broker")
    with open_front_door(broker, tmp_path_factory.mktemp(f"front-door-{request.param}")) as door:
        yield door


#: ``connections.max.reauth.ms`` of :func:`edge_reauth_door`'s listener (KIP-368).
EDGE_REAUTH_MS = 2000


@pytest.fixture(scope="module")
def edge_reauth_door(
    kraft_broker: KafkaBroker, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FrontDoor]:
    """A front door whose clients must re-authenticate every ``EDGE_REAUTH_MS``."""
    listener = {"connections.max.reauth.ms": str(EDGE_REAUTH_MS)}
    with open_front_door(kraft_broker, tmp_path_factory.mktemp("edge-reauth"), listener) as door:
        yield door


@pytest.fixture(scope="session")
def java_clients() -> Iterator[JavaHarness]:
    """Kafka's own Java clients (kafka-clients 4.3.0), one JVM for the session."""
    with JavaHarness("FrontDoorClientHarness") as harness:
        yield harness
