"""Edge ACLs (``authorizer.class.name``) on a real front door, with real clients.

With ``allow.everyone.if.no.acl.found=true`` and no ACL, every request is
parsed, decided and forwarded by the authorization filter: Kafka's Java
producer, consumer group, transactions and Admin, and the Python clients,
work as through a door without it. With it false, the same clients get
Kafka's authorization errors from the edge; a super user gets everything.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from sasl_scram import ScramMechanism
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import SaslCredentials
from sasl_scram.kafka import ApiKey
from tests.sasl_scram.integrations.real_clients import ROUNDTRIPS
from tests.support.javaharness import JavaHarness
from tests.support.javaharness import b64
from tests.support.javaharness import unb64
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name

from .conftest import FrontDoor
from .conftest import open_front_door

pytestmark = [pytest.mark.broker, pytest.mark.jvm]

STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
MECHANISM = "SCRAM-SHA-512"


@contextlib.contextmanager
def door(
    broker: KafkaBroker, base: Path, user: str | None = None, **keys: str
) -> Iterator[FrontDoor]:
    listener = {"authorizer.class.name": STANDARD, **keys}
    with open_front_door(broker, base, listener, user) as opened:
        yield opened


@pytest.fixture(
    scope="module",
    params=["kraft", pytest.param("zookeeper", marks=pytest.mark.zookeeper)],
    ids=["kafka4-kraft", "kafka39-zookeeper"],
)
def open_door(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FrontDoor]:
    """Edge ACLs on, none set, everyone allowed where no ACL names a resource."""
    broker: KafkaBroker = request.getfixturevalue(f"{request.param}_broker")
    base = tmp_path_factory.mktemp(f"edge-acls-open-{request.param}")
    with door(broker, base, **{"allow.everyone.if.no.acl.found": "true"}) as opened:
        yield opened


@pytest.fixture(scope="module")
def closed_door(
    kraft_broker: KafkaBroker, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FrontDoor]:
    """Edge ACLs on, none set: nobody but a super user may do anything."""
    with door(kraft_broker, tmp_path_factory.mktemp("edge-acls-closed")) as opened:
        yield opened


def java_call(java: JavaHarness, *fields: str) -> list[str]:
    status, *rest = java.call(*fields)
    assert status == "ok", unb64(rest[0]).decode() if rest else status
    return rest


def java_error(java: JavaHarness, *fields: str) -> str:
    status, *rest = java.call(*fields)
    assert status != "ok", rest
    return unb64(rest[0]).decode() if rest else status


def test_java_producer_consumer_group_transactions_and_admin_through_the_filter(
    open_door: FrontDoor, java_clients: JavaHarness
) -> None:
    topic, group = unique_name("authz"), unique_name("group")
    props = open_door.java_properties(MECHANISM)
    (offsets,) = java_call(java_clients, "produce", props, b64(topic), "5")
    assert unb64(offsets) == b"0,1,2,3,4"
    consumer = open_door.java_properties(
        MECHANISM, **{"group.id": group, "auto.offset.reset": "earliest"}
    )
    read, committed = java_call(java_clients, "consume", consumer, b64(topic))
    assert unb64(read) == b"v0,v1,v2,v3,v4" and committed == "5"
    _, _, topics = java_call(java_clients, "cluster", props)
    assert topic in unb64(topics).decode().split(",")
    txn_topic = unique_name("authz-txn")
    producer = open_door.java_properties(MECHANISM, **{"transactional.id": unique_name("tx")})
    (offsets,) = java_call(java_clients, "transact", producer, b64(txn_topic))
    assert unb64(offsets) == b"0,1,2"


@pytest.mark.parametrize("client", sorted(ROUNDTRIPS))
def test_python_clients_through_the_filter(open_door: FrontDoor, client: str) -> None:
    topic = unique_name(client)
    sent = [f"{topic}/{i}".encode() for i in range(3)]
    assert ROUNDTRIPS[client](open_door.properties(MECHANISM), topic, sent) == sent


def test_without_acls_the_edge_refuses_with_kafkas_errors(
    closed_door: FrontDoor, java_clients: JavaHarness
) -> None:
    topic = unique_name("refused")
    props = closed_door.java_properties(MECHANISM, **{"max.block.ms": "10000"})
    error = java_error(java_clients, "produce", props, b64(topic), "1")
    assert "TopicAuthorizationException" in error or "Not authorized" in error, error
    consumer = closed_door.java_properties(
        MECHANISM, **{"group.id": unique_name("group"), "auto.offset.reset": "earliest"}
    )
    error = java_error(java_clients, "consume", consumer, b64(topic))
    assert "AuthorizationException" in error, error
    # Listing all topics shows none of them, and nothing was created.
    _, _, topics = java_call(java_clients, "cluster", closed_door.java_properties(MECHANISM))
    assert unb64(topics) == b""


def test_metadata_and_api_versions_at_the_closed_door(closed_door: FrontDoor) -> None:
    credentials = SaslCredentials(
        ScramMechanism.from_name(MECHANISM), closed_door.user, closed_door.password
    )
    with KafkaConnection(closed_door.bootstrap, credentials) as connection:
        versions = connection.broker_versions
        # Only what the edge can authorize or answers itself is advertised.
        assert ApiKey.PRODUCE in versions and 56 not in versions  # AlterPartition
        assert versions[ApiKey.FETCH][1] >= 13  # by topic id: the edge resolves ids
        named = {"topics": [{"name": "__consumer_offsets"}], "allow_auto_topic_creation": False,
                 "include_topic_authorized_operations": False}  # fmt: skip
        answer = connection.request(ApiKey.METADATA, named, 12)
        everything = connection.request(ApiKey.METADATA, {**named, "topics": None}, 12)
    [topic] = answer["topics"]
    assert topic["name"] == "__consumer_offsets"
    assert topic["error_code"] == 29 and topic["partitions"] == []
    assert everything["topics"] == [] and everything["brokers"]


def test_a_super_user_at_the_edge_may_do_everything(
    kraft_broker: KafkaBroker, tmp_path: Path, java_clients: JavaHarness
) -> None:
    user = unique_name("edge-admin")
    with door(kraft_broker, tmp_path, user, **{"super.users": f"User:{user}"}) as admin:
        topic = unique_name("super")
        props = admin.java_properties(MECHANISM)
        (offsets,) = java_call(java_clients, "produce", props, b64(topic), "2")
        assert unb64(offsets) == b"0,1"
