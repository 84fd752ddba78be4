"""The edge decides as Kafka decides: one set of ACLs on a real Kafka 4.x
broker (``StandardAuthorizer``) for its user, the same set at an authorizing
front door for the edge user of the same name, and the same requests sent by
that user to both. Every error code must be the same.

Both sets are made with Kafka's own ``AclCommand`` (``kafka-acls``): at the
broker as its super user, at the edge as the edge's super user, which also
proves the tool works against the edge unchanged. Both sides allow what no
ACL names (the suite broker's ``allow.everyone.if.no.acl.found=true``), so
each refused resource carries an ACL for somebody else.
"""

from __future__ import annotations

import struct
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sasl_scram import ScramMechanism
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import SaslCredentials
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka._message_table import message_spec
from tests.support.cli_process import kafka_scram
from tests.support.cluster_acls import create_topic
from tests.support.javaharness import JavaHarness
from tests.support.javaharness import b64
from tests.support.javaharness import unb64
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.polling import wait_until

from .conftest import FrontDoor
from .conftest import open_front_door

pytestmark = [pytest.mark.broker, pytest.mark.jvm]

STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
ACL_COMMAND = "org.apache.kafka.tools.AclCommand"
SHA512 = ScramMechanism.SCRAM_SHA_512


@dataclass
class Sides:
    """The broker and the front door, each with the same ACLs for ``user``."""

    broker: KafkaBroker
    door: FrontDoor
    user: str
    password: str
    names: dict[str, str]

    def login(self) -> SaslCredentials:
        return SaslCredentials(SHA512, self.user, self.password)

    def both(self, key: int, version: int, body: dict[str, Any]) -> tuple[Any, Any]:
        """``body`` sent as ``user`` to the broker, then through the edge: the
        two decoded responses."""
        answers = []
        for bootstrap in (self.broker.bootstrap, self.door.bootstrap):
            deadline = time.monotonic() + 30
            while True:
                with KafkaConnection(bootstrap, self.login(), timeout=20) as conn:
                    answer = _call(conn, key, version, body)
                # A coordinator still loading answers anyone so: asked again.
                if not _TRANSIENT & _all_codes(answer) or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            answers.append(answer)
        return answers[0], answers[1]


#: COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR.
_TRANSIENT = frozenset({14, 15, 16})


def _all_codes(value: Any) -> set[int]:
    """Every ``error_code`` anywhere in a decoded response."""
    if isinstance(value, dict):
        found = {value["error_code"]} if "error_code" in value else set()
        return found.union(*(_all_codes(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_all_codes(v) for v in value))
    return set()


def _call(conn: KafkaConnection, key: int, version: int, body: dict[str, Any]) -> Any:
    spec = message_spec(key)
    header = struct.pack(">hhih", key, version, 99, 4) + b"diff"
    if spec.flexible(version):
        header += b"\x00"
    payload = header + spec.write_request_body(version, body)
    answer = conn.raw_request(struct.pack(">i", len(payload)) + payload)
    assert struct.unpack_from(">i", answer)[0] == 99
    return spec.read_response_body(version, answer, 5 if spec.flexible(version) else 4)


def acls(broker: KafkaBroker, bootstrap: str, config: Path, *args: str) -> None:
    done = broker.run_class(
        ACL_COMMAND, "--bootstrap-server", bootstrap, "--command-config", str(config), *args
    )
    assert done.returncode == 0, done.stdout + done.stderr


def grant(sides: Sides, configs: tuple[Path, Path], *args: str) -> None:
    """``kafka-acls --add <args>`` at the broker and at the edge."""
    for bootstrap, config in zip(
        (sides.broker.bootstrap, sides.door.bootstrap), configs, strict=True
    ):
        acls(sides.broker, bootstrap, config, "--add", "--force", *args)


@pytest.fixture(scope="module")
def sides(kraft_broker: KafkaBroker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sides]:
    base = tmp_path_factory.mktemp("edge-differential")
    user, admin = unique_name("dx"), unique_name("dx-admin")
    # open_front_door's edge user, whose password it makes: then the broker's.
    password = f"{user}-password"
    names = {
        k: unique_name(f"dx-{k}") for k in ("topic", "denied", "group", "nogroup", "txn", "notxn")
    }
    listener = {
        "authorizer.class.name": STANDARD,
        "allow.everyone.if.no.acl.found": "true",
        "super.users": f"User:{admin}",
    }
    with open_front_door(kraft_broker, base / "door", listener, user) as door:
        assert door.password == password
        kraft_broker.add_user(user, password)
        added = kafka_scram(
            "configs",
            "--store",
            f"sqlite:{base / 'door' / 'edge.db'}",
            "--alter",
            "--add-config",
            "SCRAM-SHA-512=[password=admin-secret]",
            "--entity-type",
            "users",
            "--entity-name",
            admin,
        )
        assert added.returncode == 0, added.stderr
        sides = Sides(kraft_broker, door, user, password, names)
        configs = (
            kraft_broker.client_properties(base / "broker-admin.properties"),
            kraft_broker.client_properties(
                base / "edge-admin.properties", admin, "admin-secret", "SCRAM-SHA-512"
            ),
        )
        n = names
        for op in ("Write", "Read", "Describe", "DescribeConfigs"):
            grant(
                sides,
                configs,
                "--allow-principal",
                f"User:{user}",
                "--operation",
                op,
                "--topic",
                n["topic"],
            )
        grant(
            sides,
            configs,
            "--allow-principal",
            f"User:{user}",
            "--operation",
            "Read",
            "--group",
            n["group"],
        )
        grant(
            sides,
            configs,
            "--allow-principal",
            f"User:{user}",
            "--operation",
            "Write",
            "--transactional-id",
            n["txn"],
        )
        for kind, name in (
            ("--topic", n["denied"]),
            ("--group", n["nogroup"]),
            ("--transactional-id", n["notxn"]),
        ):
            grant(
                sides,
                configs,
                "--allow-principal",
                "User:somebody-else",
                "--operation",
                "All",
                kind,
                name,
            )
        for topic in (n["topic"], n["denied"]):
            create_topic(kraft_broker, topic)
        yield sides


def _codes(entries: list[dict[str, Any]], name: str, inner: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for entry in entries:
        if inner is None:
            out[entry[name]] = entry["error_code"]
        else:
            out[entry[name]] = sorted(p["error_code"] for p in entry[inner])
    return out


def test_metadata_named_and_listed(sides: Sides) -> None:
    n = sides.names
    named = {
        "topics": [{"name": n["topic"]}, {"name": n["denied"]}],
        "allow_auto_topic_creation": False,
        "include_topic_authorized_operations": True,
    }
    broker, edge = sides.both(3, 12, named)
    assert _codes(edge["topics"], "name") == _codes(broker["topics"], "name")
    assert _codes(edge["topics"], "name")[n["denied"]] == 29
    ops = {t["name"]: t["topic_authorized_operations"] for t in broker["topics"]}
    assert {t["name"]: t["topic_authorized_operations"] for t in edge["topics"]} == ops
    listed = {**named, "topics": None}
    broker, edge = sides.both(3, 12, listed)
    mine = {n["topic"], n["denied"]}
    assert {t["name"] for t in edge["topics"]} & mine == {
        t["name"] for t in broker["topics"]
    } & mine


def test_produce_fetch_and_offsets_per_topic(sides: Sides) -> None:
    n = sides.names
    data = [
        {"name": t, "partition_data": [{"index": 0, "records": b"not a batch"}]}
        for t in (n["topic"], n["denied"])
    ]
    broker, edge = sides.both(0, 9, {"acks": 1, "timeout_ms": 5000, "topic_data": data})
    assert _codes(edge["responses"], "name", "partition_responses") == _codes(
        broker["responses"], "name", "partition_responses"
    )
    fetch = {
        "max_wait_ms": 10,
        "min_bytes": 0,
        "topics": [
            {
                "topic": t,
                "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1024}],
            }
            for t in (n["topic"], n["denied"])
        ],
    }
    broker, edge = sides.both(1, 12, fetch)
    assert _codes(edge["responses"], "topic", "partitions") == _codes(
        broker["responses"], "topic", "partitions"
    )
    offsets = {
        "replica_id": -1,
        "topics": [
            {"name": t, "partitions": [{"partition_index": 0, "timestamp": -1}]}
            for t in (n["topic"], n["denied"])
        ],
    }
    broker, edge = sides.both(2, 7, offsets)
    assert _codes(edge["topics"], "name", "partitions") == _codes(
        broker["topics"], "name", "partitions"
    )


def test_groups_and_transactions(sides: Sides) -> None:
    n = sides.names
    for key_type, keys in ((0, (n["group"], n["nogroup"])), (1, (n["txn"], n["notxn"]))):
        broker, edge = sides.both(10, 4, {"key_type": key_type, "coordinator_keys": list(keys)})
        assert _codes(edge["coordinators"], "key") == _codes(broker["coordinators"], "key")
    _coordinator_ready(sides, n["group"], n["topic"])
    for group in (n["group"], n["nogroup"]):
        commit = {
            "group_id": group,
            "generation_id_or_member_epoch": -1,
            "member_id": "",
            "topics": [
                {"name": t, "partitions": [{"partition_index": 0, "committed_offset": 0}]}
                for t in (n["topic"], n["denied"])
            ],
        }
        broker, edge = sides.both(8, 8, commit)
        assert _codes(edge["topics"], "name", "partitions") == _codes(
            broker["topics"], "name", "partitions"
        ), group
    for txn in (n["txn"], n["notxn"]):
        broker, edge = sides.both(22, 4, {"transactional_id": txn, "transaction_timeout_ms": 60000})
        assert edge["error_code"] == broker["error_code"], txn
    broker, edge = sides.both(22, 4, {"transactional_id": None, "transaction_timeout_ms": 60000})
    assert edge["error_code"] == broker["error_code"]
    described = {"groups": [n["group"], n["nogroup"]], "include_authorized_operations": True}
    broker, edge = sides.both(15, 5, described)
    assert _codes(edge["groups"], "group_id") == _codes(broker["groups"], "group_id")


def test_consumer_group_heartbeat_needs_describe_on_its_subscribed_topics(sides: Sides) -> None:
    """KIP-848: Kafka 4.x refuses a subscription naming a topic the member may not
    describe (TOPIC_AUTHORIZATION_FAILED) before the coordinator sees it."""
    n = sides.names
    for group in (n["group"], n["nogroup"]):
        body = {
            "group_id": group,
            "member_id": uuid.uuid4().hex[:22],
            "member_epoch": 0,
            "rebalance_timeout_ms": 30000,
            "subscribed_topic_names": [n["topic"], n["denied"]],
            "topic_partitions": [],
        }
        broker, edge = sides.both(68, 1, body)
        assert edge["error_code"] == broker["error_code"] != 0, group
        assert edge["assignment"] is None and edge["member_epoch"] == broker["member_epoch"]


def _coordinator_ready(sides: Sides, group: str, topic: str) -> None:
    """Until the broker coordinates ``group`` (its offsets partition loaded):
    before that Kafka answers every partition NOT_COORDINATOR, whoever asks."""
    commit = {
        "group_id": group,
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 0}]}],
    }
    deadline = time.monotonic() + 30
    while True:
        with KafkaConnection(sides.broker.bootstrap, sides.login(), timeout=20) as conn:
            answer = _call(conn, 8, 8, commit)
        if answer["topics"][0]["partitions"][0]["error_code"] != 16:
            return
        assert time.monotonic() < deadline, answer
        time.sleep(0.2)


def test_topics_and_configs(sides: Sides) -> None:
    n = sides.names
    created = unique_name("dx-created")
    body = {
        "topics": [{"name": created, "num_partitions": 1, "replication_factor": 1}],
        "timeout_ms": 30000,
        "validate_only": True,
    }
    broker, edge = sides.both(19, 7, body)
    assert _codes(edge["topics"], "name") == _codes(broker["topics"], "name")
    resources = [
        {"resource_type": 2, "resource_name": t, "configuration_keys": None}
        for t in (n["topic"], n["denied"])
    ]
    broker, edge = sides.both(32, 4, {"resources": resources})
    assert _codes(edge["results"], "resource_name") == _codes(broker["results"], "resource_name")
    alter = {
        "resources": [
            {
                "resource_type": 2,
                "resource_name": t,
                "configs": [{"name": "retention.ms", "config_operation": 0, "value": "600000"}],
            }
            for t in (n["topic"], n["denied"])
        ],
        "validate_only": True,
    }
    broker, edge = sides.both(44, 1, alter)
    assert _codes(edge["responses"], "resource_name") == _codes(
        broker["responses"], "resource_name"
    )
    # A topic neither side has: deleting is not repeated on a topic the first deleted.
    deleted = {"topic_names": [unique_name("dx-missing")], "timeout_ms": 5000}
    broker, edge = sides.both(20, 5, deleted)
    assert _codes(edge["responses"], "name") == _codes(broker["responses"], "name")


def test_the_acl_listing_at_the_edge_is_the_edges(sides: Sides) -> None:
    """DescribeAcls is answered by each side from its own ACLs; as the plain user
    (no ACL on the cluster: everyone may DESCRIBE it on both), each lists the
    user's ACLs the same way."""
    fields = {
        "resource_type_filter": 1,
        "resource_name_filter": None,
        "pattern_type_filter": 1,
        "principal_filter": f"User:{sides.user}",
        "host_filter": None,
        "operation": 1,
        "permission_type": 1,
    }
    broker, edge = sides.both(29, 3, fields)
    assert edge["error_code"] == broker["error_code"] == 0

    def listing(answer: dict[str, Any]) -> set[tuple[Any, ...]]:
        return {
            (r["resource_type"], r["resource_name"], a["operation"], a["permission_type"])
            for r in answer["resources"]
            for a in r["acls"]
        }

    assert listing(edge) == listing(broker) and len(listing(edge)) == 6


# -- by topic id (KIP-516, KIP-848): the edge resolves ids to names -----------------------


def _topic_ids(sides: Sides, *topics: str) -> dict[str, bytes]:
    """The topics' ids, as the broker's super user sees them."""
    with sides.broker.connect() as conn:
        body = {"topics": [{"name": t} for t in topics], "allow_auto_topic_creation": False,
                "include_topic_authorized_operations": False}  # fmt: skip
        answer = conn.request(3, body, 12)
    return {t["name"]: t["topic_id"] for t in answer["topics"]}


def _by_id(entries: list[dict[str, Any]], inner: str = "partitions") -> dict[bytes, list[int]]:
    return {e["topic_id"]: sorted(p["error_code"] for p in e[inner]) for e in entries}


def _edge_learned(sides: Sides, key: int, version: int, body: dict[str, Any], known: bytes) -> Any:
    """``body`` through the edge until ``known`` is no longer UNKNOWN_TOPIC_ID:
    the first miss answers it at once and starts the edge's refresh."""
    answers: list[Any] = []

    def learned() -> bool:
        with KafkaConnection(sides.door.bootstrap, sides.login(), timeout=20) as conn:
            answers.append(_call(conn, key, version, body))
        return 100 not in _all_codes_for(answers[-1], known)

    assert wait_until(learned, timeout=20, interval=0.3) is not None, answers[-1]
    return answers[-1]


def _all_codes_for(value: Any, topic_id: bytes) -> set[int]:
    if isinstance(value, dict):
        if value.get("topic_id") == topic_id:
            return _all_codes(value)
        return set().union(*(_all_codes_for(v, topic_id) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_all_codes_for(v, topic_id) for v in value))
    return set()


def test_fetch_by_topic_id_allowed_denied_and_unknown(sides: Sides) -> None:
    n = sides.names
    ids = _topic_ids(sides, n["topic"], n["denied"])
    unknown = uuid.uuid4().bytes
    partitions = [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1024}]
    fetch = {"max_wait_ms": 10, "min_bytes": 0, "session_epoch": -1,
             "topics": [{"topic_id": i, "partitions": partitions}
                        for i in (ids[n["topic"]], ids[n["denied"]], unknown)]}  # fmt: skip
    for version in (13, 15):
        broker, _ = sides.both(1, version, fetch)
        edge = _edge_learned(sides, 1, version, fetch, ids[n["denied"]])
        assert _by_id(edge["responses"]) == _by_id(broker["responses"])
        assert _by_id(broker["responses"]) == {
            ids[n["topic"]]: [0],
            ids[n["denied"]]: [29],
            unknown: [100],
        }


def test_offsets_by_topic_id(sides: Sides) -> None:
    n = sides.names
    ids = _topic_ids(sides, n["topic"], n["denied"])
    unknown = uuid.uuid4().bytes
    asked = (ids[n["topic"]], ids[n["denied"]], unknown)
    commit = {"group_id": n["group"], "generation_id_or_member_epoch": -1, "member_id": "",
              "topics": [{"topic_id": i, "partitions": [{"partition_index": 0,
                                                         "committed_offset": 0}]}
                         for i in asked]}  # fmt: skip
    broker, _ = sides.both(8, 10, commit)
    edge = _edge_learned(sides, 8, 10, commit, ids[n["denied"]])
    assert _by_id(edge["topics"]) == _by_id(broker["topics"])
    assert _by_id(broker["topics"])[ids[n["denied"]]] == [29]
    fetched = {"groups": [{"group_id": n["group"], "topics": [
        {"topic_id": i, "partition_indexes": [0]} for i in asked]}]}  # fmt: skip
    broker, edge = sides.both(9, 10, fetched)
    assert _by_id(edge["groups"][0]["topics"]) == _by_id(broker["groups"][0]["topics"])
    listed = {"groups": [{"group_id": n["group"], "topics": None}]}
    broker, edge = sides.both(9, 10, listed)
    assert _by_id(edge["groups"][0]["topics"]) == _by_id(broker["groups"][0]["topics"])


def test_txn_offset_commit_by_topic_id(sides: Sides) -> None:
    n = sides.names
    ids = _topic_ids(sides, n["topic"], n["denied"])
    unknown = uuid.uuid4().bytes
    partitions = [{"partition_index": 0, "committed_offset": 0}]
    commit = {"transactional_id": n["txn"], "group_id": n["group"], "producer_id": 0,
              "producer_epoch": 0, "member_id": "",
              "topics": [{"topic_id": i, "partitions": partitions}
                         for i in (ids[n["topic"]], ids[n["denied"]], unknown)]}  # fmt: skip
    broker, _ = sides.both(28, 6, commit)
    edge = _edge_learned(sides, 28, 6, commit, ids[n["denied"]])
    assert _by_id(edge["topics"]) == _by_id(broker["topics"])
    assert _by_id(broker["topics"])[ids[n["denied"]]] == [29]
    assert _by_id(broker["topics"])[unknown] == [100]


def test_delete_topics_by_id_unknown(sides: Sides) -> None:
    """An id neither side knows. (The user may DELETE on the cluster here: no ACL
    names it and everyone is allowed, so both sides would delete a real topic;
    the refusals by id are the unit tests'.)"""
    unknown = uuid.uuid4().bytes
    missing = unique_name("dx-missing")
    body = {"topics": [{"name": None, "topic_id": unknown},
                       {"name": missing, "topic_id": bytes(16)}], "timeout_ms": 5000}  # fmt: skip
    broker, edge = sides.both(20, 6, body)

    def results(answer: Any) -> set[tuple[Any, ...]]:
        return {(r["name"], r["topic_id"], r["error_code"]) for r in answer["responses"]}

    assert results(edge) == results(broker)
    assert (None, unknown, 100) in results(broker)


def test_the_java_consumer_reads_by_topic_id_with_read_and_is_refused_without(
    sides: Sides, java_clients: JavaHarness
) -> None:
    n, door = sides.names, sides.door
    with KafkaConnection(door.bootstrap, sides.login()) as connection:
        assert connection.broker_versions[ApiKey.FETCH][1] >= 13
        assert connection.broker_versions[8][1] >= 10
    props = door.java_properties("SCRAM-SHA-512")
    status, *rest = java_clients.call("produce", props, b64(n["topic"]), "3")
    assert status == "ok", unb64(rest[0]).decode() if rest else status
    consumer = door.java_properties(
        "SCRAM-SHA-512", **{"group.id": n["group"], "auto.offset.reset": "earliest"}
    )
    status, *rest = java_clients.call("consume", consumer, b64(n["topic"]))
    assert status == "ok", unb64(rest[0]).decode() if rest else status
    assert unb64(rest[0]).startswith(b"v0,v1,v2")
    status, *rest = java_clients.call("consume", consumer, b64(n["denied"]))
    assert status != "ok"
    assert "TopicAuthorizationException" in unb64(rest[0]).decode()


def test_an_id_no_answer_through_the_door_named_is_learned_by_the_refresh(sides: Sides) -> None:
    """A topic created behind the door's back: no Metadata through the door has
    named its id, so only the edge's own refresh can teach it."""
    fresh = unique_name("dx-fresh")
    create_topic(sides.broker, fresh)
    topic_id = _topic_ids(sides, fresh)[fresh]
    partitions = [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1024}]
    fetch = {"max_wait_ms": 10, "min_bytes": 0, "session_epoch": -1,
             "topics": [{"topic_id": topic_id, "partitions": partitions}]}  # fmt: skip
    with KafkaConnection(sides.door.bootstrap, sides.login(), timeout=20) as conn:
        first = _call(conn, 1, 15, fetch)
    assert _by_id(first["responses"]) == {topic_id: [100]}
    edge = _edge_learned(sides, 1, 15, fetch, topic_id)
    assert _by_id(edge["responses"]) == {topic_id: [0]}  # no ACL names it: everyone may
