"""``kafka-scram serve`` as a front door with ``upstream.identity=owner-token``: the
cluster authorizes each edge user by name.

The edge users exist only in serve's SQLite store; the cluster knows only its
super user, serve's ``upstream.`` login, which creates a token owned by each
edge user. The cluster holds a READ ACL on the topic for one of them.
"""

from __future__ import annotations

import itertools
import struct
from pathlib import Path

import pytest

from sasl_scram import SCRAM_SHA_512
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import SaslCredentials
from sasl_scram.frontdoor import CHECK_OWNER
from sasl_scram.kafka import ErrorCode
from sasl_scram.kafka import message_spec
from sasl_scram.store import SQLiteCredentialStore
from tests.support.cli_process import assert_one_error
from tests.support.cli_process import kafka_scram
from tests.support.cluster_acls import TOPIC_AUTHORIZATION_FAILED
from tests.support.cluster_acls import add_acl
from tests.support.cluster_acls import wait_topic_error
from tests.support.endpoint_harness import seed_users
from tests.support.kafka_broker import ADMIN_PASSWORD
from tests.support.kafka_broker import ADMIN_USER
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.serve_process import ServeProcess
from tests.support.zookeeper_server import free_port

_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule"


@pytest.mark.broker
def test_the_cluster_authorizes_each_edge_user_by_name(
    kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    """Kafka 4.x's StandardAuthorizer (KRaft) and 3.9's AclAuthorizer alike."""
    kraft_broker = kafka_broker
    from kafka import KafkaConsumer
    from kafka import KafkaProducer

    alice, bob = unique_name("alice"), unique_name("bob")
    topic = unique_name("owner-token")
    store = tmp_path / "edge.db"
    edge = SQLiteCredentialStore(store, poll_interval=0)
    try:
        seed_users(edge, [(alice, f"{alice}-secret"), (bob, f"{bob}-secret")])
    finally:
        edge.close()
    admin = {
        "bootstrap_servers": kraft_broker.bootstrap,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "SCRAM-SHA-256",
        "sasl_plain_username": ADMIN_USER,
        "sasl_plain_password": ADMIN_PASSWORD,
    }
    producer = KafkaProducer(**admin, acks="all")
    producer.send(topic, b"for alice").get(timeout=20)
    producer.close()
    # ACLs on the topic (the shared broker allows everyone an operation no ACL
    # of the resource names): alice may read it, bob may not.
    add_acl(kraft_broker, tmp_path, alice, "Read", "--topic", topic)
    # And alter its configs (so that no one else may: Kafka authorizes that on
    # the topic alone).
    add_acl(kraft_broker, tmp_path, alice, "AlterConfigs", "--topic", topic)
    keys = {
        "scram.credential.store.path": str(store),
        "upstream.bootstrap.servers": kraft_broker.bootstrap,
        "upstream.identity": "owner-token",
        "upstream.security.protocol": "SASL_PLAINTEXT",
        "upstream.sasl.mechanism": "SCRAM-SHA-256",
        "upstream.sasl.jaas.config": (
            f'{_JAAS} required username="{ADMIN_USER}" password="{ADMIN_PASSWORD}";'
        ),
        # The KRaft broker is node 1, served on base + 1: a port known free.
        "upstream.node.port.base": str(free_port() - 1),
        # The shared brokers allow everyone everything on the Cluster, which has
        # no ACL (allow.everyone.if.no.acl.found): every owner is a cluster
        # administrator there, refused unless listed (test_cluster_admin.py).
        "upstream.owner.admins": f"User:{alice},User:{bob}",
    }
    with ServeProcess(tmp_path, keys) as serve:
        for user, expected in ((bob, TOPIC_AUTHORIZATION_FAILED), (alice, ErrorCode.NONE)):
            login = SaslCredentials(SCRAM_SHA_512, user, f"{user}-secret")
            wait_topic_error(serve.bootstrap, login, topic, expected, timeout=10)
        consumer = KafkaConsumer(
            topic,
            bootstrap_servers=serve.bootstrap,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="SCRAM-SHA-512",
            sasl_plain_username=alice,
            sasl_plain_password=f"{alice}-secret",
            auto_offset_reset="earliest",
            consumer_timeout_ms=10_000,
        )
        got = [m.value for m in itertools.islice(consumer, 1)]  # the one record
        consumer.close()
        # bob may not alter alice's topic: the cluster, which sees bob, says so,
        # and serve's audit trail names him, and whom the cluster saw.
        refused = _set_retention(serve.bootstrap, bob, topic)
        audit = [line for line in serve.log_lines() if " kafka_scram.audit " in line]
    assert got == [b"for alice"]
    assert refused == TOPIC_AUTHORIZATION_FAILED
    for user in (alice, bob):
        assert any(
            f"Principal = User:{user} is Allowed Operation = Authenticate " in line
            and line.endswith(f"clusterPrincipal = User:{user}")
            for line in audit
        ), audit
    (change,) = [line for line in audit if "for request = IncrementalAlterConfigs" in line]
    assert change.split(" kafka_scram.audit ")[1].startswith(
        f"Principal = User:{bob} is Denied Operation = AlterConfigs from host = 127.0.0.1 "
        f"on resource = Topic:LITERAL:{topic} for request = IncrementalAlterConfigs with "
        f"configs = SET:retention.ms, clusterPrincipal = User:{bob}, connectionId = "
    )
    assert change.endswith("result = TOPIC_AUTHORIZATION_FAILED")
    assert "3600000" not in change  # a config's value is never written


def _set_retention(bootstrap: str, user: str, topic: str) -> int:
    """IncrementalAlterConfigs v1 through the front door as ``user``: its error code."""
    spec = message_spec(44)
    body = {
        "resources": [
            {
                "resource_type": 2,
                "resource_name": topic,
                "configs": [{"name": "retention.ms", "config_operation": 0, "value": "3600000"}],
            }
        ],
        "validate_only": False,
    }
    # Request header v2 (flexible): client id, then no tagged fields.
    header = struct.pack(">hhih", 44, 1, 7, 4) + b"test\x00"
    payload = header + spec.write_request_body(1, body)
    login = SaslCredentials(SCRAM_SHA_512, user, f"{user}-secret")
    with KafkaConnection(bootstrap, login, timeout=20) as conn:
        answer = conn.raw_request(struct.pack(">i", len(payload)) + payload)
    # Response header v1: the correlation id, then no tagged fields.
    (result,) = spec.read_response_body(1, answer, 5)["responses"]
    return int(result["error_code"])


@pytest.mark.broker
def test_a_cluster_that_will_not_issue_owner_tokens_is_one_line_at_start(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    """An upstream login without CreateTokens on other users: serve says so,
    with the fix, and exits 1 before it listens."""
    login = unique_name("fd-no-tokens")
    kraft_broker.add_user(login, "no-tokens-secret")
    # With an ACL on the resource, the broker's allow.everyone.if.no.acl.found
    # no longer lets every login create tokens for that user.
    add_acl(
        kraft_broker,
        tmp_path,
        unique_name("other"),
        "CreateTokens",
        "--user-principal",
        f"User:{CHECK_OWNER}",
    )
    config = tmp_path / "server.properties"
    props = {
        "listeners": f"SASL_PLAINTEXT://127.0.0.1:{free_port()}",
        "scram.credential.store.path": str(tmp_path / "edge.db"),
        "upstream.bootstrap.servers": kraft_broker.bootstrap,
        "upstream.identity": "owner-token",
        "upstream.security.protocol": "SASL_PLAINTEXT",
        "upstream.sasl.mechanism": "SCRAM-SHA-256",
        "upstream.sasl.jaas.config": (
            f'{_JAAS} required username="{login}" password="no-tokens-secret";'
        ),
        "upstream.node.port.base": str(free_port()),
    }
    config.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    result = kafka_scram("serve", "--config", str(config), timeout=90)
    line = assert_one_error(result, "serve")
    assert f"the upstream login '{login}' may not create tokens for User:{CHECK_OWNER}" in line
    assert "--operation CreateTokens" in line and "no-tokens-secret" not in result.stderr
