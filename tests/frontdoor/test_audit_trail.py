"""The front door's audit trail against the real brokers: an edge user logs in
through ``kafka-scram serve`` with kafka-python's admin client, creates a
topic, deletes it and deletes one that does not exist. serve's
``kafka_scram.audit`` lines name the edge user (the cluster only ever sees
serve's own login), who the cluster saw, and the cluster's answers."""

from __future__ import annotations

import pytest

from tests.support.front_door import python_client_login
from tests.support.kafka_broker import ADMIN_USER
from tests.support.kafka_broker import unique_name
from tests.support.polling import wait_until

from .conftest import FrontDoor

pytestmark = [pytest.mark.broker, pytest.mark.jvm]

AUDIT = " INFO kafka_scram.audit "


def audit_lines(door: FrontDoor, after: int) -> list[str]:
    return [line.split(AUDIT, 1)[1] for line in door.serve.log_lines()[after:] if AUDIT in line]


def test_logins_and_topic_changes_name_the_edge_user(front_door: FrontDoor) -> None:
    from kafka import KafkaAdminClient

    door, user = front_door, front_door.user
    topic, missing = unique_name("audited"), unique_name("never-created")
    before = len(door.serve.log_lines())
    login = python_client_login(door.bootstrap, user, door.password, "SCRAM-SHA-512")
    admin = KafkaAdminClient(**login, request_timeout_ms=30000)
    try:
        admin.create_topics(
            {
                topic: {
                    "num_partitions": 1,
                    "replication_factor": 1,
                    "configs": {"retention.ms": "1"},
                }
            }
        )
        admin.delete_topics([topic])
        refused = admin.delete_topics([missing], raise_errors=False)
    finally:
        admin.close()
    assert [t["error_code"] for t in refused["topics"]] == [3]  # the broker's own answer

    said = f"Principal = User:{user} is Allowed Operation = "
    cluster = f"clusterPrincipal = User:{ADMIN_USER}"

    def changes() -> list[str]:
        return [
            line
            for line in audit_lines(door, before)
            if " for request = CreateTopics " in line or " for request = DeleteTopics " in line
        ]

    assert wait_until(lambda: len(changes()) == 3, 10) is not None, audit_lines(door, before)
    created, deleted, refused_line = changes()
    assert created.startswith(
        f"{said}Create from host = 127.0.0.1 on resource = Topic:LITERAL:{topic} for request = "
        "CreateTopics with numPartitions = 1, replicationFactor = 1, configs = retention.ms, "
        f"{cluster}, connectionId = "
    )
    assert created.endswith(", result = NONE")
    deletion = said + "Delete"  # (a literal "Delete from" reads as SQL to the linter)
    assert deleted.startswith(
        f"{deletion} from host = 127.0.0.1 on resource = Topic:LITERAL:{topic} "
        f"for request = DeleteTopics with {cluster}, connectionId = "
    )
    assert deleted.endswith(", result = NONE")
    assert refused_line.startswith(
        f"{deletion} from host = 127.0.0.1 on resource = Topic:LITERAL:{missing} "
    )
    assert refused_line.endswith(", result = UNKNOWN_TOPIC_OR_PARTITION")
    # The value of a config never: only its name.
    assert not any("retention.ms = 1" in line or "=1" in line for line in changes())

    # Each connection the client opened logged in at the edge, and the line
    # says whom the cluster saw for it; the change went over one of them.
    logins = [line for line in audit_lines(door, before) if "request = SaslAuthenticate" in line]
    assert logins, audit_lines(door, before)
    for line in logins:
        assert line.startswith(
            f"{said}Authenticate from host = 127.0.0.1 on resource = User:LITERAL:{user} "
            "for request = SaslAuthenticate with mechanism = SCRAM-SHA-512, "
            "reauthentication = false, listener = "
        )
        assert line.endswith(cluster)
    connection = created.split("connectionId = ")[1].split(",")[0]
    assert any(f"connectionId = {connection}," in line for line in logins)
