"""Kafka's own ConfigCommand (4.x and 3.9) against ``kafka-scram serve`` and
against the real broker of the same version.

Describing users, Kafka's tool asks for client quotas (DescribeClientQuotas,
KIP-546) before SCRAM credentials; ``serve`` answers that there are none, so
the tool prints against ``serve`` what it prints against a broker without
quotas for the same users.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sasl_scram.endpoint.serve_process import Serve
from tests.sasl_scram.endpoint.serve_process import seed
from tests.support.endpoint_harness import ALICE
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.side_by_side import KafkaTools
from tests.support.side_by_side import Run
from tests.support.side_by_side import kafka_failure

HEAD = "SCRAM credential configs for user-principal '{}' are "


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Serve]:
    """Its own serve per test: the users are exactly those the test expects."""
    base = tmp_path / "serve"
    db = base / "data" / "creds.db"
    seed(db)  # admin (the super user) and alice, both mechanisms at 4096
    with Serve(base, db) as serve:
        yield serve


def _tool(tools: KafkaTools, bootstrap: str, config: Path, *args: str) -> Run:
    command = tools.broker.config_command
    connection = ("--bootstrap-server", bootstrap, "--command-config", str(config))
    return tools.main(command, *connection, *args)


def test_kafkas_config_command_describes_users_on_serve_as_on_a_broker(
    kafka_tools: KafkaTools, served: Serve, tmp_path: Path
) -> None:
    broker: KafkaBroker = kafka_tools.broker
    admin = broker.client_properties(tmp_path / "admin.properties")
    user = unique_name("quotas")
    entity = ("--entity-type", "users", "--entity-name", user)
    places = {"broker": broker.bootstrap, "serve": served.bootstrap}
    for where, bootstrap in places.items():
        # One mechanism per request: KRaft takes one alteration per user and request.
        for add in ("SCRAM-SHA-256=[iterations=8192,password=pw]", "SCRAM-SHA-512=[password=pw]"):
            run = _tool(kafka_tools, bootstrap, admin, "--alter", "--add-config", add, *entity)
            done = f"Completed updating config for user {user}.\n"
            assert (run.returncode, run.stdout) == (0, done), (where, run)

    def describe(bootstrap: str, *name: str) -> Run:
        return _tool(kafka_tools, bootstrap, admin, "--describe", "--entity-type", "users", *name)

    for name in (user, unique_name("nobody")):
        on_broker = describe(broker.bootstrap, "--entity-name", name)
        on_serve = describe(served.bootstrap, "--entity-name", name)
        assert on_serve.returncode == on_broker.returncode == 0, (on_broker, on_serve)
        assert _users(on_serve) == _users(on_broker), (on_broker, on_serve)
    assert on_serve.stdout == ""  # a user without credentials: nothing, as on the broker

    # Every user: the broker holds other tests' users too; serve prints one line
    # per user it has, each the broker's line for that user.
    on_broker = describe(broker.bootstrap)
    on_serve = describe(served.bootstrap)
    assert on_serve.returncode == on_broker.returncode == 0, (on_broker, on_serve)
    ours, kafkas = _users(on_serve), _users(on_broker)
    assert sorted(ours) == sorted(["admin", ALICE[0], user]), on_serve
    both_4096 = ["SCRAM-SHA-256=iterations=4096", "SCRAM-SHA-512=iterations=4096"]
    # alice exists on serve only; her line has the shape of admin's.
    assert ours == {**{u: kafkas[u] for u in ("admin", user)}, ALICE[0]: both_4096}, on_serve
    assert ours[user] == ["SCRAM-SHA-256=iterations=8192", "SCRAM-SHA-512=iterations=4096"]


def _users(run: Run) -> dict[str, list[str]]:
    """Each line's user and its mechanisms, sorted: KRaft's broker lists a user's
    mechanisms in no fixed order."""
    users: dict[str, list[str]] = {}
    for line in run.stdout.splitlines():
        user = line.split("'")[1]
        assert line.startswith(HEAD.format(user)), line
        users[user] = sorted(line.removeprefix(HEAD.format(user)).split(", "))
    return users


def test_a_user_who_is_not_a_super_user_is_refused_the_quotas(
    kafka_tools: KafkaTools, served: Serve, tmp_path: Path
) -> None:
    # serve answers its own KIP-554 and quota requests for super.users only;
    # Kafka refuses DescribeClientQuotas without DESCRIBE_CONFIGS on CLUSTER.
    alice = kafka_tools.broker.client_properties(tmp_path / "alice.properties", *ALICE)
    run = _tool(kafka_tools, served.bootstrap, alice, "--describe", "--entity-type", "users")
    assert (run.returncode, run.stdout) == (1, ""), run
    assert kafka_failure(run) == ("ClusterAuthorizationException", "Cluster authorization failed.")
