"""Edge ACLs shared by a fleet: two authorizing front doors on one ZooKeeper
store (Kafka 3.x ``AclAuthorizer``'s nodes, with its change notifications).
An ACL added through front door A with Kafka's own ``kafka-acls`` decides
requests at front door B within a second; removed through B, it stops
deciding them at A within a second too.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from sasl_scram import SCRAM_SHA_512
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import SaslCredentials
from sasl_scram.kafka import ApiKey
from tests.support.cli_process import kafka_scram
from tests.support.front_door import upstream_keys
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.serve_process import ServeProcess
from tests.support.zookeeper_server import ZooKeeperServer
from tests.support.zookeeper_server import free_port_base

pytestmark = [pytest.mark.zookeeper, pytest.mark.broker, pytest.mark.jvm]

STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
ACL_COMMAND = "org.apache.kafka.tools.AclCommand"
ADMIN = ("acl-fleet-admin", "acl-fleet-admin-secret")
USER = ("acl-fleet-user", "acl-fleet-user-secret")
#: The issue of record's bound on an ACL change reaching the other door.
PROPAGATION_S = 1.0


@dataclass
class Fleet:
    a: ServeProcess
    b: ServeProcess
    broker: KafkaBroker
    base_dir: Path


@pytest.fixture(scope="module")
def fleet(
    zookeeper_server: ZooKeeperServer,
    kraft_broker: KafkaBroker,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Fleet]:
    base_dir = tmp_path_factory.mktemp("acl-fleet")
    hosts = f"{zookeeper_server.hosts}/aclfleet{uuid.uuid4().hex[:8]}"
    for name, secret in (ADMIN, USER):
        seeded = kafka_scram(
            "configs", "--zookeeper", hosts, "--alter",
            "--add-config", f"SCRAM-SHA-512=[password={secret}]",
            "--entity-type", "users", "--entity-name", name,
        )  # fmt: skip
        assert seeded.returncode == 0, seeded.stderr
    keys = {
        "zookeeper.connect": hosts,
        "super.users": f"User:{ADMIN[0]}",
        "authorizer.class.name": STANDARD,
        **upstream_keys(kraft_broker.bootstrap),
    }
    a = ServeProcess(base_dir, {**keys, "upstream.node.port.base": str(free_port_base())}, "a")
    b = ServeProcess(base_dir, {**keys, "upstream.node.port.base": str(free_port_base())}, "b")
    with contextlib.ExitStack() as stack:
        stack.enter_context(a)
        stack.enter_context(b)
        yield Fleet(a, b, kraft_broker, base_dir)


def kafka_acls(fleet: Fleet, door: ServeProcess, *args: str) -> None:
    config = fleet.broker.client_properties(
        fleet.base_dir / "admin.properties", ADMIN[0], ADMIN[1], "SCRAM-SHA-512"
    )
    done = fleet.broker.run_class(
        ACL_COMMAND, "--bootstrap-server", door.bootstrap, "--command-config", str(config), *args
    )
    assert done.returncode == 0, done.stdout + done.stderr


def topic_error(door: ServeProcess, topic: str) -> int:
    login = SaslCredentials(SCRAM_SHA_512, *USER)
    body = {"topics": [{"name": topic}], "allow_auto_topic_creation": False}
    with KafkaConnection(door.bootstrap, login, timeout=20) as conn:
        [entry] = conn.request(ApiKey.METADATA, body, 12)["topics"]
    return int(entry["error_code"])


def seconds_until(door: ServeProcess, topic: str, allowed: bool, limit: float = 10.0) -> float:
    start = time.monotonic()
    while (topic_error(door, topic) != 29) is not allowed:
        assert time.monotonic() - start < limit, door.log_text()[-2000:]
        time.sleep(0.02)
    return time.monotonic() - start


def test_an_acl_added_through_a_decides_at_b_within_a_second(fleet: Fleet) -> None:
    topic = unique_name("acl-fleet")
    assert topic_error(fleet.b, topic) == 29  # no ACL, allow.everyone.if.no.acl.found=false
    grant = ("--allow-principal", f"User:{USER[0]}", "--operation", "Describe", "--topic", topic)
    kafka_acls(fleet, fleet.a, "--add", *grant)
    took = seconds_until(fleet.b, topic, allowed=True)
    assert took <= PROPAGATION_S, f"{took:.2f} s"
    kafka_acls(fleet, fleet.b, "--remove", "--force", *grant)
    took = seconds_until(fleet.a, topic, allowed=False)
    assert took <= PROPAGATION_S, f"{took:.2f} s"


def test_kafka_acls_lists_what_the_other_door_added(fleet: Fleet) -> None:
    topic = unique_name("acl-list")
    kafka_acls(fleet, fleet.a, "--add", "--allow-principal", f"User:{USER[0]}",
               "--operation", "Read", "--topic", topic)  # fmt: skip
    config = fleet.broker.client_properties(
        fleet.base_dir / "admin.properties", ADMIN[0], ADMIN[1], "SCRAM-SHA-512"
    )
    deadline = time.monotonic() + 10
    while True:
        done = fleet.broker.run_class(
            ACL_COMMAND, "--bootstrap-server", fleet.b.bootstrap, "--command-config",
            str(config), "--list", "--topic", topic,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        if f"principal=User:{USER[0]}" in done.stdout:
            break
        assert time.monotonic() < deadline, done.stdout
        time.sleep(0.2)
    assert "operation=READ" in done.stdout and "permissionType=ALLOW" in done.stdout


def test_kafka_acls_through_the_edge_is_refused_to_a_plain_user(fleet: Fleet) -> None:
    """ALTER on the cluster is needed, and nobody but the super user has it."""
    config = fleet.broker.client_properties(
        fleet.base_dir / "plain.properties", USER[0], USER[1], "SCRAM-SHA-512"
    )
    topic = unique_name("acl-refused")
    done = fleet.broker.run_class(
        ACL_COMMAND, "--bootstrap-server", fleet.a.bootstrap, "--command-config", str(config),
        "--add", "--allow-principal", f"User:{USER[0]}", "--operation", "All", "--topic", topic,
    )  # fmt: skip
    assert "ClusterAuthorizationException" in done.stdout + done.stderr, done.stdout + done.stderr
    assert topic_error(fleet.b, topic) == 29  # nothing was added
