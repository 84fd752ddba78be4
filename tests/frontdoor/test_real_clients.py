"""Real Kafka clients through ``kafka-scram serve``'s front door to real brokers.

Each client logs in at the edge (SCRAM-SHA-256 and -512) as a user that only
the front door's store holds, or with a delegation token the front door
issued, and then talks to the broker behind it: Kafka's Java producer,
consumer group, transactions and Admin, kafka-python, aiokafka and
confluent-kafka (librdkafka). Every broker address a client is given is the
front door's. A request sent before the login is never forwarded, and a
client that re-authenticates at the edge (KIP-368) keeps producing.
"""

from __future__ import annotations

import socket

import pytest

from sasl_scram import ScramMechanism
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import SaslCredentials
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import encode_request
from tests.sasl_scram.integrations.real_clients import ROUNDTRIPS
from tests.support.broker_and_serve import REFUSED
from tests.support.broker_and_serve import login_error
from tests.support.broker_and_serve import login_within
from tests.support.javaharness import JavaHarness
from tests.support.javaharness import b64
from tests.support.javaharness import unb64
from tests.support.kafka_broker import ADMIN_USER
from tests.support.kafka_broker import unique_name
from tokenauth import DelegationTokenClient

from .conftest import MECHANISMS
from .conftest import FrontDoor

# The front door's tests share the session's brokers, and every one of them
# starts a JVM (the broker, and Kafka's Java clients).
pytestmark = [pytest.mark.broker, pytest.mark.jvm]

#: A Metadata v12 request for every topic, as a client's first request.
METADATA = {
    "topics": None,
    "allow_auto_topic_creation": False,
    "include_topic_authorized_operations": False,
}


def java_call(java: JavaHarness, *fields: str) -> list[str]:
    """One harness call that must succeed; else what the Java client saw."""
    status, *rest = java.call(*fields)
    assert status == "ok", unb64(rest[0]).decode() if rest else status
    return rest


def values(topic: str, n: int = 5) -> list[bytes]:
    return [f"{topic}/{i}".encode() for i in range(n)]


# -- Kafka's Java clients ---------------------------------------------------------------


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_java_producer_consumer_group_and_admin(
    front_door: FrontDoor, java_clients: JavaHarness, mechanism: str
) -> None:
    """The consumer group finds its coordinator and commits through the front
    door; Admin's describeCluster names only the front door's node port."""
    topic, group = unique_name("java"), unique_name("group")
    props = front_door.java_properties(mechanism)
    (offsets,) = java_call(java_clients, "produce", props, b64(topic), "5")
    assert unb64(offsets) == b"0,1,2,3,4"
    consumer = front_door.java_properties(
        mechanism, **{"group.id": group, "auto.offset.reset": "earliest"}
    )
    read, committed = java_call(java_clients, "consume", consumer, b64(topic))
    assert unb64(read) == b"v0,v1,v2,v3,v4" and committed == "5"
    nodes, controller, topics = java_call(java_clients, "cluster", props)
    node = f"{front_door.node_id}@{front_door.node_address}"
    assert unb64(nodes).decode() == node
    assert unb64(controller).decode() == node
    assert topic in unb64(topics).decode().split(",")


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_java_transaction_commits_and_aborts(
    front_door: FrontDoor, java_clients: JavaHarness, mechanism: str
) -> None:
    """t0..t2 committed, x0..x2 aborted: a read_committed consumer in a group
    reads the committed three and ends past both markers (offset 8)."""
    topic = unique_name("txn")
    producer = front_door.java_properties(mechanism, **{"transactional.id": unique_name("tx")})
    (offsets,) = java_call(java_clients, "transact", producer, b64(topic))
    assert unb64(offsets) == b"0,1,2"
    consumer = front_door.java_properties(
        mechanism,
        **{
            "group.id": unique_name("group"),
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
        },
    )
    read, committed = java_call(java_clients, "consume", consumer, b64(topic))
    assert unb64(read) == b"t0,t1,t2" and committed == "8"


# -- kafka-python, aiokafka, confluent-kafka ------------------------------------------


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("client", sorted(ROUNDTRIPS))
def test_python_clients_produce_and_consume(
    front_door: FrontDoor, client: str, mechanism: str
) -> None:
    topic = unique_name(client)
    sent = values(topic)
    assert ROUNDTRIPS[client](front_door.properties(mechanism), topic, sent) == sent


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("client", ["kafka-python", "aiokafka"])
def test_a_token_the_front_door_issued_produces_and_consumes(
    front_door: FrontDoor, client: str, mechanism: str
) -> None:
    """CreateDelegationToken is answered by the front door: the token logs in
    there as its owner, the edge user, and the broker refuses it."""
    conn = KafkaConnection(front_door.bootstrap, front_door.credentials(mechanism), timeout=20)
    with DelegationTokenClient(conn) as tokens:
        token = tokens.create_token()
    assert token.info.owner.name == front_door.user
    scram = ScramMechanism.from_name(mechanism)
    login = SaslCredentials(scram, token.token_id, token.hmac_base64, True)
    login_within(10, front_door.bootstrap, login, 0, "the token logs in at the front door")
    assert login_error(front_door.broker.bootstrap, login) == REFUSED
    topic = unique_name(f"token-{client}")
    sent = values(topic)
    props = front_door.properties(mechanism, (token.token_id, token.hmac_base64, True))
    assert ROUNDTRIPS[client](props, topic, sent) == sent
    logged = f"authenticated User:{front_door.user} with {mechanism} (delegation token)"
    assert any(logged in line for line in front_door.serve.log_lines())


# -- before the login -------------------------------------------------------------------


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_metadata_before_the_login_never_reaches_the_broker(
    front_door: FrontDoor, mechanism: str
) -> None:
    """As Kafka's SaslServerAuthenticator, the front door closes a connection
    whose first request is neither ApiVersions nor SaslHandshake, unanswered,
    on its bootstrap port and on the node port; and it opens no connection to
    the broker for it (the proxy in front of the broker's bootstrap listener
    counts them, and so does the front door's /metrics). The same request
    after a login opens exactly one."""
    early = encode_request(ApiKey.METADATA, 12, 7, "early", METADATA)
    before = (front_door.proxy.accepted, front_door.upstream_opened())
    for address in (front_door.bootstrap, front_door.node_address):
        assert _answer_before_login(address, early) == b""
    assert (front_door.proxy.accepted, front_door.upstream_opened()) == before
    assert _answer_before_login(front_door.broker.bootstrap, early) == b""  # Kafka's own
    with KafkaConnection(front_door.bootstrap, front_door.credentials(mechanism)) as conn:
        brokers = conn.request(ApiKey.METADATA, METADATA, 12)["brokers"]
    assert [(b["node_id"], f"{b['host']}:{b['port']}") for b in brokers] == [
        (front_door.node_id, front_door.node_address)
    ]
    after = (front_door.proxy.accepted, front_door.upstream_opened())
    assert after == (before[0] + 1, before[1] + 1)


def _answer_before_login(address: str, request: bytes) -> bytes:
    """What comes back for ``request`` sent first on a new connection, until it closes."""
    host, port = address.rsplit(":", 1)
    answer = b""
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


# -- KIP-368 at the edge ------------------------------------------------------------------

#: How long the producer keeps going after its first record: two edge sessions and more.
PRODUCING_MS = 5000


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_producer_keeps_going_across_edge_reauthentications(
    edge_reauth_door: FrontDoor, java_clients: JavaHarness, mechanism: str
) -> None:
    """The edge listener's sessions last 2 s (connections.max.reauth.ms): the
    Java producer re-authenticates in band on its connections, every record is
    acknowledged, and all of them are read back in order."""
    door = edge_reauth_door
    before = len(door.serve.log_lines())
    topic = unique_name("reauth")
    props = door.java_properties(mechanism)
    (sent,) = java_call(java_clients, "produceFor", props, b64(topic), str(PRODUCING_MS))
    consumer = door.java_properties(
        mechanism, **{"group.id": unique_name("group"), "auto.offset.reset": "earliest"}
    )
    read, committed = java_call(java_clients, "consume", consumer, b64(topic))
    log = door.serve.log_lines()[before:]
    assert int(sent) > 1 and committed == sent
    assert unb64(read).decode().split(",") == [f"r{i}" for i in range(int(sent))]
    reauthenticated = f"re-authenticated User:{door.user} with {mechanism}"
    # Sessions of 2 s, renewed at 85-95% of them (Kafka's clients), for 5 s.
    assert sum(reauthenticated in line for line in log) >= 2, log[-40:]
    assert not any("session expired" in line for line in log), log[-40:]
    # Each re-authentication is a line of the audit trail too, saying whom the
    # cluster sees (the front door's upstream login, its own session renewed apart).
    audited = (
        f"Principal = User:{door.user} is Allowed Operation = Authenticate from host = "
        f"127.0.0.1 on resource = User:LITERAL:{door.user} for request = SaslAuthenticate "
        f"with mechanism = {mechanism}, reauthentication = true, "
    )
    reauth_lines = [line for line in log if audited in line]
    assert len(reauth_lines) >= 2, log[-40:]
    assert all(line.endswith(f"clusterPrincipal = User:{ADMIN_USER}") for line in reauth_lines)
