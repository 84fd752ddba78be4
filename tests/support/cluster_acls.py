"""ACLs on the suite's real brokers, and what their authorizer answers a login.

The shared brokers allow everyone on a resource that has no ACL
(``allow.everyone.if.no.acl.found``), so a test that wants a refusal puts an
ACL on its own resource (a ``unique_name`` topic or user) for someone else.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import SaslCredentials
from sasl_scram.kafka import ApiKey
from tests.support.kafka_broker import KafkaBroker

__all__ = [
    "TOPIC_AUTHORIZATION_FAILED",
    "add_acl",
    "add_acls",
    "create_topic",
    "topic_error",
    "wait_topic_error",
]

#: Kafka's TOPIC_AUTHORIZATION_FAILED (``Errors``); our own code never sends it.
TOPIC_AUTHORIZATION_FAILED = 29
#: Kafka's AclCommand (kafka-acls.sh): moved to kafka-tools in 4.0.
_ACL_COMMAND = {"kraft": "org.apache.kafka.tools.AclCommand", "zookeeper": "kafka.admin.AclCommand"}


def add_acl(broker: KafkaBroker, tmp_path: Path, user: str, operation: str, *resource: str) -> None:
    """``kafka-acls.sh --add --allow-principal User:<user> --operation <operation>
    <resource>`` (``--topic t``, ``--user-principal User:u``), as the super user."""
    add_acls(broker, tmp_path, user, [operation], *resource)


def add_acls(
    broker: KafkaBroker, tmp_path: Path, user: str, operations: Sequence[str], *resources: str
) -> None:
    """:func:`add_acl` for every operation on every resource (``--cluster``,
    ``--topic t --group g``, ``--user-principal User:a --user-principal User:b``),
    in one run of Kafka's tool."""
    result = broker.run_class(
        _ACL_COMMAND[broker.mode],
        "--bootstrap-server",
        broker.bootstrap,
        "--command-config",
        str(broker.client_properties(tmp_path / "acl-admin.properties")),
        "--add",
        "--allow-principal",
        f"User:{user}",
        *(word for operation in operations for word in ("--operation", operation)),
        *resources,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def create_topic(broker: KafkaBroker, topic: str) -> None:
    """``topic``, created by the super user's Metadata request (the brokers
    create topics on demand, ``auto.create.topics.enable``)."""
    wait_topic_error(broker.bootstrap, broker.credentials(), topic, 0, create=True)


def topic_error(bootstrap: str, login: SaslCredentials, topic: str, *, create: bool = False) -> int:
    """The error Metadata v12 reports for ``topic`` to ``login`` at ``bootstrap``."""
    body = {
        "topics": [{"name": topic, "topic_id": None}],
        "allow_auto_topic_creation": create,
        "include_topic_authorized_operations": False,
    }
    with KafkaConnection(bootstrap, login, timeout=20) as conn:
        response = conn.request(ApiKey.METADATA, body, 12)
    [entry] = response["topics"]
    return int(entry["error_code"])


def wait_topic_error(
    bootstrap: str,
    login: SaslCredentials,
    topic: str,
    expected: int,
    timeout: float = 20.0,
    *,
    create: bool = False,
) -> None:
    """Until ``topic_error`` is ``expected``: topics and ACLs reach the broker's
    metadata and authorizer asynchronously (KRaft's metadata log, ZooKeeper's
    change notifications)."""
    deadline = time.monotonic() + timeout
    while (got := topic_error(bootstrap, login, topic, create=create)) != expected:
        assert time.monotonic() < deadline, f"{login.username}: error {got}, not {expected}"
        time.sleep(0.2)
