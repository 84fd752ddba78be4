"""No edge user is a cluster administrator by accident, against real Kafka 4.x
brokers: one whose StandardAuthorizer grants only what ACLs say
(``strict_kraft_broker``: ``allow.everyone.if.no.acl.found=false``, the super
user ``User:admin``), and one without an authorizer.

- ``upstream.identity=service``: serve asks the cluster at start what its
  ``upstream.`` login holds on the Cluster (DescribeCluster, KIP-430) and refuses
  to start as an administrator's front door, unless
  ``upstream.allow.cluster.admin=true`` (a WARNING at every start).
- ``upstream.identity=owner-token``: an edge user whose owner principal is a
  cluster administrator is refused at login (a wrong password's answer, an audit
  line), unless ``upstream.owner.admins`` lists it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import jaas
from sasl_scram import SCRAM_SHA_512
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import KafkaConnectionError
from sasl_scram.admin import SaslCredentials
from sasl_scram.authz import AclOperation
from sasl_scram.frontdoor import CHECK_OWNER
from sasl_scram.frontdoor import CLUSTER_OPERATIONS
from sasl_scram.frontdoor import ClusterOperations
from sasl_scram.frontdoor import describe_cluster_request
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode
from sasl_scram.store import SQLiteCredentialStore
from tests.support.broker_and_serve import REFUSED
from tests.support.cli_process import assert_one_error
from tests.support.cli_process import kafka_scram
from tests.support.cluster_acls import add_acls
from tests.support.cluster_acls import create_topic
from tests.support.endpoint_harness import seed_users
from tests.support.kafka_broker import ADMIN_PASSWORD
from tests.support.kafka_broker import ADMIN_USER
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.polling import wait_until
from tests.support.serve_process import ServeProcess
from tests.support.zookeeper_server import free_port
from tests.support.zookeeper_server import free_port_base

pytestmark = pytest.mark.broker

C = AclOperation
EVERY = frozenset(CLUSTER_OPERATIONS)
#: What Kafka answers a SCRAM login whose proof is wrong (ScramSaslServer's
#: SaslException, in SaslServerAuthenticator's words).
WRONG_PASSWORD = (
    "Authentication failed during authentication due to invalid credentials with SASL "
    "mechanism SCRAM-SHA-512"
)
_ALL_TOPICS = {
    "topics": None,
    "allow_auto_topic_creation": False,
    "include_topic_authorized_operations": False,
}


def operations(bootstrap: str, login: SaslCredentials) -> ClusterOperations:
    """What the cluster answers ``login``'s DescribeCluster: its cluster operations."""
    with KafkaConnection(bootstrap, login, timeout=20) as conn:
        body = conn.request(ApiKey.DESCRIBE_CLUSTER, describe_cluster_request(), 1)
    assert body["error_code"] == ErrorCode.NONE, body
    return ClusterOperations.from_bits(body["cluster_authorized_operations"])


def wait_operations(broker: KafkaBroker, user: str, password: str, held: set[AclOperation]) -> None:
    """Until the cluster answers ``user`` ``held``: ACLs reach the authorizer
    through the metadata log."""
    login = broker.credentials(user, password)
    assert wait_until(lambda: operations(broker.bootstrap, login).held == held, 20), operations(
        broker.bootstrap, login
    )


@dataclass
class Login:
    """A SCRAM user of the cluster."""

    user: str
    password: str

    def upstream(self, bootstrap: str) -> dict[str, str]:
        """``upstream.`` keys logging in as this user."""
        return {
            "upstream.bootstrap.servers": bootstrap,
            "upstream.security.protocol": "SASL_PLAINTEXT",
            "upstream.sasl.mechanism": "SCRAM-SHA-256",
            "upstream.sasl.jaas.config": str(jaas.scram_login_line(self.user, self.password)),
        }


def new_user(broker: KafkaBroker, prefix: str) -> Login:
    login = Login(unique_name(prefix), f"{prefix}-secret")
    broker.add_user(login.user, login.password)
    return login


ADMIN = Login(ADMIN_USER, ADMIN_PASSWORD)


def serve_keys(tmp_path: Path, upstream: dict[str, str], **more: str) -> dict[str, str]:
    """serve's keys besides ``listeners``: its own store, node ports, ``upstream``."""
    return {
        "scram.credential.store.path": str(tmp_path / "edge.db"),
        "upstream.node.port.base": str(free_port_base()),
        **upstream,
        **more,
    }


def serve_once(tmp_path: Path, keys: dict[str, str], login: Login) -> str:
    """``kafka-scram serve`` that must not start, ``login`` its ``upstream.`` login:
    its one error line (exit 1), which never holds the login's password."""
    config = tmp_path / "server.properties"
    props = {"listeners": f"SASL_PLAINTEXT://127.0.0.1:{free_port()}", **keys}
    config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    result = kafka_scram("serve", "--config", str(config), timeout=90)
    line = assert_one_error(result, "serve")
    assert login.password not in result.stderr, result.stderr
    return line


def edge_users(tmp_path: Path, *users: str) -> None:
    """serve's store, holding ``users`` with the password ``<user>-edge``."""
    store = SQLiteCredentialStore(tmp_path / "edge.db", poll_interval=0)
    try:
        seed_users(store, [(user, f"{user}-edge") for user in users])
    finally:
        store.close()


def edge_login(user: str, password: str | None = None) -> SaslCredentials:
    return SaslCredentials(SCRAM_SHA_512, user, password or f"{user}-edge")


def topics_through(bootstrap: str, login: SaslCredentials) -> list[str]:
    """The topics Metadata lists to ``login`` at ``bootstrap`` (all it may describe)."""
    with KafkaConnection(bootstrap, login, timeout=20) as conn:
        body = conn.request(ApiKey.METADATA, _ALL_TOPICS, 12)
    assert body["brokers"], body
    return [topic["name"] for topic in body["topics"]]


# -- what the cluster answers ----------------------------------------------------------


def test_the_cluster_answers_each_login_its_cluster_operations(
    strict_kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    """KIP-430 as the checks read it: the super user holds every cluster
    operation; a Describe grant shows only itself; AlterConfigs shows with the
    DescribeConfigs it implies; without Describe the answer is 0, even for a
    principal holding ClusterAction: what the checks cannot see, they refuse."""
    broker = strict_kraft_broker
    assert operations(broker.bootstrap, broker.credentials()).held == EVERY
    describe, configs, hidden = (new_user(broker, p) for p in ("describe", "configs", "hidden"))
    assert (
        operations(broker.bootstrap, broker.credentials(describe.user, describe.password)).held
        == set()
    )
    add_acls(broker, tmp_path, describe.user, ["Describe"], "--cluster")
    wait_operations(broker, describe.user, describe.password, {C.DESCRIBE})
    add_acls(broker, tmp_path, configs.user, ["Describe", "AlterConfigs"], "--cluster")
    wait_operations(
        broker, configs.user, configs.password, {C.DESCRIBE, C.DESCRIBE_CONFIGS, C.ALTER_CONFIGS}
    )
    add_acls(broker, tmp_path, hidden.user, ["ClusterAction"], "--cluster")
    # Give the ACL time to land, then see that it still reads as nothing.
    add_acls(broker, tmp_path, describe.user, ["IdempotentWrite"], "--cluster")
    wait_operations(broker, describe.user, describe.password, {C.DESCRIBE, C.IDEMPOTENT_WRITE})
    seen = operations(broker.bootstrap, broker.credentials(hidden.user, hidden.password))
    assert seen.held == set() and not seen.visible and seen.is_admin


# -- service mode: the start --------------------------------------------------------------


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_super_user_upstream_login_is_refused_at_start(
    strict_kraft_broker: KafkaBroker, tmp_path: Path, workers: str
) -> None:
    """The same one line from one process, or from the first of two workers."""
    keys = serve_keys(
        tmp_path, ADMIN.upstream(strict_kraft_broker.bootstrap), **{"scram.workers": workers}
    )
    line = serve_once(tmp_path, keys, ADMIN)
    assert line.startswith(
        "kafka-scram serve: error: the upstream login 'admin' holds Alter, AlterConfigs, "
        "ClusterAction on the cluster"
    ), line
    assert "least-privilege" in line and "authorizer.class.name at the edge" in line


def test_the_override_starts_and_warns_at_every_start(
    strict_kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    broker = strict_kraft_broker
    edge_users(tmp_path, "alice")
    keys = serve_keys(
        tmp_path, ADMIN.upstream(broker.bootstrap), **{"upstream.allow.cluster.admin": "true"}
    )
    for start in range(2):
        with ServeProcess(tmp_path, keys, name=f"serve-override-{start}") as serve:
            warning = serve.wait_for_log("upstream.allow.cluster.admin=true")
            assert " WARNING " in warning and "every edge user one" in warning, warning
            assert "holds Alter, AlterConfigs, ClusterAction" in warning, warning
            # Forwarded as the super user: every topic of the cluster is seen.
            assert topics_through(serve.bootstrap, edge_login("alice")) is not None


def test_a_least_privilege_upstream_login_starts_and_forwards(
    strict_kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    """Describe on the cluster, and the ACLs of the traffic it carries: one topic."""
    from kafka import KafkaConsumer
    from kafka import KafkaProducer
    from kafka import TopicPartition

    broker = strict_kraft_broker
    login = new_user(broker, "frontdoor")
    topic, other = unique_name("least"), unique_name("not-granted")
    create_topic(broker, topic)
    create_topic(broker, other)
    add_acls(broker, tmp_path, login.user, ["Describe"], "--cluster")
    add_acls(broker, tmp_path, login.user, ["Read", "Write"], "--topic", topic)
    wait_operations(broker, login.user, login.password, {C.DESCRIBE})
    edge_users(tmp_path, "alice")
    with ServeProcess(tmp_path, serve_keys(tmp_path, login.upstream(broker.bootstrap))) as serve:
        assert "upstream.allow.cluster.admin" not in serve.log_text()
        client = {
            "bootstrap_servers": serve.bootstrap,
            "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "SCRAM-SHA-512",
            "sasl_plain_username": "alice",
            "sasl_plain_password": "alice-edge",
        }
        producer = KafkaProducer(**client, acks="all")
        producer.send(topic, b"least privilege").get(timeout=30)
        producer.close()
        consumer = KafkaConsumer(**client, group_id=None, consumer_timeout_ms=15_000)
        partition = TopicPartition(topic, 0)
        consumer.assign([partition])
        consumer.seek_to_beginning(partition)
        got = [record.value for record in consumer]
        consumer.close()
        # Only what the login may see: the topic not granted is not listed.
        listed = topics_through(serve.bootstrap, edge_login("alice"))
    assert got == [b"least privilege"]
    assert topic in listed and other not in listed


def test_a_login_the_cluster_hides_its_operations_from_is_refused_at_start(
    strict_kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    """No Describe on the cluster: the answer is 0, which could hide ClusterAction."""
    login = new_user(strict_kraft_broker, "no-describe")
    keys = serve_keys(tmp_path, login.upstream(strict_kraft_broker.bootstrap))
    line = serve_once(tmp_path, keys, login)
    assert f"the upstream login '{login.user}' may do on it: it lacks Describe" in line, line


@pytest.fixture(scope="module")
def bare_kraft_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """Kafka 4.x in KRaft mode without an authorizer: every principal may do everything."""
    broker = KafkaBroker("kraft", tmp_path_factory.mktemp("kafka-bare"), authorizer=False)
    try:
        broker.start()
        yield broker
    finally:
        broker.stop()


def test_a_cluster_without_an_authorizer_is_refused_at_start(
    bare_kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    """Every principal of such a cluster is an administrator: any login."""
    broker = bare_kraft_broker
    login = new_user(broker, "anyone")
    assert (
        operations(broker.bootstrap, broker.credentials(login.user, login.password)).held == EVERY
    )
    line = serve_once(tmp_path, serve_keys(tmp_path, login.upstream(broker.bootstrap)), login)
    assert f"the upstream login '{login.user}' holds Alter, AlterConfigs, ClusterAction" in line
    assert "on a cluster without an authorizer every login is one" in line, line


# -- owner-token mode: each login -------------------------------------------------------


@dataclass
class OwnerCluster:
    """The strict broker, an ``upstream.`` login that may create tokens for the
    owners, and the owners: ``alice`` (Describe on the cluster, Read on
    ``topic``), ``carol`` (no Describe on the cluster) and the super user."""

    broker: KafkaBroker
    login: Login
    alice: str
    carol: str
    topic: str


@pytest.fixture(scope="module")
def owner_cluster(
    strict_kraft_broker: KafkaBroker, tmp_path_factory: pytest.TempPathFactory
) -> OwnerCluster:
    broker = strict_kraft_broker
    tmp = tmp_path_factory.mktemp("owner-acls")
    login = new_user(broker, "fd-owner")
    alice, carol, topic = unique_name("alice"), unique_name("carol"), unique_name("owned")
    create_topic(broker, topic)
    owners = (alice, carol, ADMIN_USER, CHECK_OWNER)
    principals = [word for owner in owners for word in ("--user-principal", f"User:{owner}")]
    add_acls(broker, tmp, login.user, ["CreateTokens"], *principals)
    add_acls(broker, tmp, alice, ["Describe"], "--cluster")
    add_acls(broker, tmp, alice, ["Read"], "--topic", topic)
    return OwnerCluster(broker, login, alice, carol, topic)


def owner_keys(tmp_path: Path, cluster: OwnerCluster, **more: str) -> dict[str, str]:
    edge_users(tmp_path, cluster.alice, cluster.carol, ADMIN_USER)
    upstream = {
        **cluster.login.upstream(cluster.broker.bootstrap),
        "upstream.identity": "owner-token",
    }
    return serve_keys(tmp_path, upstream, **more)


def refusal(bootstrap: str, login: SaslCredentials) -> tuple[int | None, str]:
    """The error code and message of a refused login at ``bootstrap``."""
    with pytest.raises(KafkaConnectionError) as caught:
        KafkaConnection(bootstrap, login, timeout=20).close()
    return caught.value.error_code, str(caught.value)


def test_an_owner_that_is_a_cluster_super_user_is_refused_at_login(
    owner_cluster: OwnerCluster, tmp_path: Path
) -> None:
    """The edge user ``admin`` is the cluster's super user through its token: it
    hears what a wrong password hears, and the audit line says why. alice, who
    holds Describe on the cluster only, is forwarded; carol, whose operations
    the cluster hides, is refused as well."""
    cluster = owner_cluster
    with ServeProcess(tmp_path, owner_keys(tmp_path, cluster)) as serve:
        assert topics_through(serve.bootstrap, edge_login(cluster.alice)) == [cluster.topic]
        wrong = refusal(serve.bootstrap, edge_login(cluster.alice, "not-her-password"))
        assert wrong == (REFUSED, WRONG_PASSWORD)
        for attempt in range(2):
            assert refusal(serve.bootstrap, edge_login(ADMIN_USER)) == wrong, attempt
        line = serve.wait_for_log("Principal = User:admin is Denied Operation = Authenticate")
        assert (
            "on resource = Cluster:LITERAL:kafka-cluster for request = SaslAuthenticate with "
            "owner = User:admin, reason = ClusterAdministrator, clusterOperations = "
            "Create,Alter,Describe,ClusterAction,DescribeConfigs,AlterConfigs,IdempotentWrite, "
            "notListedIn = upstream.owner.admins"
        ) in line, line
        assert " INFO kafka_scram.audit Principal = " in line, line
        assert refusal(serve.bootstrap, edge_login(cluster.carol)) == wrong
        hidden = serve.wait_for_log(f"Principal = User:{cluster.carol} is Denied")
        assert "reason = ClusterOperationsHidden, clusterOperations = none" in hidden, hidden
        # One token for admin: its answer is kept with the token, asked once.
        created = [line for line in serve.log_lines() if "of 'admin' created" in line]
        assert len(created) == 1, created


def test_a_listed_administrator_owner_is_forwarded(
    owner_cluster: OwnerCluster, tmp_path: Path
) -> None:
    cluster = owner_cluster
    keys = owner_keys(tmp_path, cluster, **{"upstream.owner.admins": "User:admin"})
    with ServeProcess(tmp_path, keys) as serve:
        assert cluster.topic in topics_through(serve.bootstrap, edge_login(ADMIN_USER))
        # Listing admin lists no one else.
        assert refusal(serve.bootstrap, edge_login(cluster.carol))[0] == REFUSED
    assert "Principal = User:admin is Denied" not in serve.log_text()
