"""``kafka-scram configs --bootstrap-server`` beside Kafka's own ConfigCommand.

Both tools run with the same arguments against each real broker (Kafka 4.x
in KRaft mode, 3.9 in ZooKeeper mode): same exit status, same stdout, and
for each error Kafka's tool reports, the same text. Where Kafka prints a stack
trace we print one line; what must match is then the failure it names, the
``ExecutionException``'s exception class and message (the broker's message,
or the admin client's). The deliberate differences are asserted precisely and
listed in docs/compatibility.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.side_by_side import KafkaTools
from tests.support.side_by_side import Pair
from tests.support.side_by_side import kafka_failure
from tests.support.side_by_side import ours

PROG = "kafka-scram configs"


@pytest.fixture
def admin_config(kafka_broker: KafkaBroker, tmp_path: Path) -> Path:
    return kafka_broker.client_properties(tmp_path / "admin.properties")


def _user(name: str) -> tuple[str, ...]:
    return ("--entity-type", "users", "--entity-name", name)


def _both(tools: KafkaTools, config: Path, *args: str) -> Pair:
    return Pair.same(tools, tools.broker.config_command, "configs", config, *args)


def _alter(tools: KafkaTools, config: Path, kafka_user: str, our_user: str, *how: str) -> Pair:
    """The same alteration, by Kafka's tool for one user and by ours for another."""
    return Pair.run(
        lambda: tools.run(tools.broker.config_command, config, "--alter", *how, *_user(kafka_user)),
        lambda: ours("configs", tools.broker, config, "--alter", *how, *_user(our_user)),
    )


def _assert_completed(pair: Pair, kafka_user: str, our_user: str) -> None:
    assert pair.kafka.returncode == pair.ours.returncode == 0, pair
    assert pair.kafka.stdout == f"Completed updating config for user {kafka_user}.\n", pair
    assert pair.ours.stdout == pair.kafka.stdout.replace(kafka_user, our_user), pair
    assert pair.ours.stderr == "", pair


def _assert_same_failure(
    pair: Pair, name: str, message: str, status: int = 1, fix: str = ""
) -> None:
    """Kafka's tool failed with ``name: message`` in a stack trace, ours in one line,
    then ``(fix)`` where ours says how to fix it.

    Kafka's tool exits 1 for every error; ours exits 2 for a usage error (a value
    typed on the command line that is malformed, out of range or empty: the
    one exit-code rule of docs/architecture.md), a documented deliberate difference.
    """
    assert (pair.kafka.returncode, pair.ours.returncode) == (1, status), pair
    assert pair.kafka.stdout == pair.ours.stdout == "", pair
    assert kafka_failure(pair.kafka) == (name, message), pair
    after = f" ({fix})" if fix else ""
    assert pair.ours.stderr == (
        f"{PROG}: error: Error while executing config command: {name}: {message}{after}\n"
    ), pair


def test_alter_describe_and_delete_match_kafka(kafka_tools: KafkaTools, admin_config: Path) -> None:
    tools, config = kafka_tools, admin_config
    kafka_user, our_user = unique_name("cfg-kafka"), unique_name("cfg-ours")

    both = (
        "SCRAM-SHA-256=[iterations=8192,password=pw-1],"
        "SCRAM-SHA-512=[iterations=5000,password=pw-1]"
    )
    pair = _alter(tools, config, kafka_user, our_user, "--add-config", both)
    if tools.broker.kraft:
        # KRaft's ScramControlManager takes one alteration per user and request.
        _assert_same_failure(
            pair,
            "DuplicateResourceException",
            "A user credential cannot be altered twice in the same request",
        )
    else:
        _assert_completed(pair, kafka_user, our_user)

    # -1 means Kafka's default, 4096 (ConfigCommand.alterUserScramCredentialConfigs).
    for add in (
        "SCRAM-SHA-512=[iterations=-1,password=pw-2]",
        "SCRAM-SHA-256=[iterations=16384,password=pw-2]",
    ):
        _assert_completed(
            _alter(tools, config, kafka_user, our_user, "--add-config", add), kafka_user, our_user
        )

    # Every user on the broker, each tool reading what the other wrote.
    pair = _both(tools, config, "--describe", "--entity-type", "users")
    assert pair.kafka.returncode == pair.ours.returncode == 0, pair
    assert pair.ours.stdout == pair.kafka.stdout, pair
    lines = pair.ours.stdout.splitlines()
    for user in (kafka_user, our_user):
        # KRaft lists mechanisms in the order they were added, ZooKeeper mode by type.
        head = f"SCRAM credential configs for user-principal '{user}' are "
        [line] = [line for line in lines if line.startswith(head)]
        assert sorted(line.removeprefix(head).split(", ")) == [
            "SCRAM-SHA-256=iterations=16384",
            "SCRAM-SHA-512=iterations=4096",
        ], line

    delete = ("--delete-config", "SCRAM-SHA-512")
    # Deleting and adding one credential in one request. (For a user without
    # it, KRaft reports the missing credential first, ZooKeeper mode the duplicate.)
    _assert_same_failure(
        _alter(
            tools,
            config,
            kafka_user,
            our_user,
            *delete,
            "--add-config",
            "SCRAM-SHA-512=[password=pw-3]",
        ),
        "DuplicateResourceException",
        "A user credential cannot be altered twice in the same request",
    )
    _assert_completed(_alter(tools, config, kafka_user, our_user, *delete), kafka_user, our_user)
    _assert_same_failure(
        _alter(tools, config, kafka_user, our_user, *delete),
        "ResourceNotFoundException",
        "Attempt to delete a user credential that does not exist",
    )

    for user, expected in (
        (
            our_user,
            f"SCRAM credential configs for user-principal '{our_user}' are "
            "SCRAM-SHA-256=iterations=16384\n",
        ),
        # A user with no credential: nothing at all, and success.
        (unique_name("cfg-nobody"), ""),
    ):
        pair = _both(tools, config, "--describe", *_user(user))
        assert pair.kafka.returncode == pair.ours.returncode == 0, pair
        assert pair.kafka.stdout == pair.ours.stdout == expected, pair
        assert pair.ours.stderr == "", pair


@dataclass(frozen=True)
class BrokerError:
    """Kafka's tool prints a stack trace naming ``exception: message``."""

    args: tuple[str, ...]
    exception: str
    message: str
    status: int = 1  # ours: 2 where the value typed is the problem


# Errors whose Kafka text ours repeats. None of them changes the user.
BROKER_ERRORS = {
    "too-many-iterations": BrokerError(
        ("--add-config", "SCRAM-SHA-256=[iterations=16385,password=pw]"),
        "UnacceptableCredentialException",
        "Too many iterations",
    ),
    # Refused by Kafka's admin client before any request; ours refuses it alike.
    "empty-password": BrokerError(
        ("--add-config", "SCRAM-SHA-256=[password=]"),
        "UnacceptableCredentialException",
        "Password must not be empty",
        status=2,
    ),
}


@pytest.mark.parametrize("case", BROKER_ERRORS.values(), ids=BROKER_ERRORS.keys())
def test_errors_name_kafkas_exception_and_message(
    kafka_tools: KafkaTools, admin_config: Path, case: BrokerError
) -> None:
    user = unique_name("cfg-err")
    pair = _both(
        kafka_tools,
        admin_config,
        "--alter",
        *case.args,
        *_user(user),
    )
    # Kafka's first line repeats the arguments, password included; ours never does.
    assert pair.kafka.stderr.startswith("Error while executing config command with args '")
    _assert_same_failure(pair, case.exception, case.message, case.status)


def test_a_failed_login_names_kafkas_exception(kafka_tools: KafkaTools, tmp_path: Path) -> None:
    config = kafka_tools.broker.client_properties(tmp_path / "wrong.properties", password="wrong")
    pair = _both(
        kafka_tools,
        config,
        "--describe",
        "--entity-type",
        "users",
    )
    _assert_same_failure(
        pair,
        "SaslAuthenticationException",
        "Authentication failed during authentication due to invalid credentials with SASL "
        "mechanism SCRAM-SHA-256",
        fix=f"check the username and password in sasl.jaas.config of the --command-config "
        f"file {config}",
    )


def test_too_few_iterations_is_kafkas_line(kafka_tools: KafkaTools, admin_config: Path) -> None:
    # ConfigCommand checks the minimum itself and prints the bare message.
    pair = _both(
        kafka_tools,
        admin_config,
        "--alter",
        "--add-config",
        "SCRAM-SHA-256=[iterations=4095,password=pw]",
        *_user(unique_name("cfg-err")),
    )
    assert (pair.kafka.returncode, pair.ours.returncode) == (1, 2), pair  # ours: a usage error
    assert pair.kafka.stdout == pair.ours.stdout == "", pair
    message = "Iterations 4095 is less than the minimum 4096 required for SCRAM-SHA-256"
    assert pair.kafka.stderr == f"{message}\n", pair
    assert pair.ours.stderr == f"{PROG}: error: {message}\n", pair


def test_deliberate_differences_are_exactly_as_documented(
    kafka_tools: KafkaTools, admin_config: Path
) -> None:
    """docs/compatibility.md: ours hides the password Kafka echoes, and names
    what it accepts where Kafka (which also alters quotas) lists the keys it
    does not know, in Scala's collection syntax on 3.9."""
    user = unique_name("cfg-err")
    value = "iterations=many,password=pw-never-shown"
    pair = _both(
        kafka_tools,
        admin_config,
        "--alter",
        "--add-config",
        f"SCRAM-SHA-256=[{value}]",
        *_user(user),
    )
    assert (pair.kafka.returncode, pair.ours.returncode) == (1, 2), pair  # ours: a usage error
    assert pair.kafka.stderr == f"Invalid credential property SCRAM_SHA_256={value}\n", pair
    # Kafka's words with the value hidden, then what is wrong in it.
    kafka_words = pair.kafka.stderr.rstrip("\n").replace(value, "[hidden]")
    assert pair.ours.stderr.startswith(
        f"{PROG}: error: {kafka_words}: iterations must be a whole number, got 'many'"
    ), pair
    assert pair.ours.stderr.count("\n") == 1, pair
    assert pair.kafka.stdout == pair.ours.stdout == "", pair

    pair = _both(
        kafka_tools,
        admin_config,
        "--alter",
        "--add-config",
        "foo=bar",
        *_user(user),
    )
    assert (pair.kafka.returncode, pair.ours.returncode) == (1, 2), pair
    names = "foo" if kafka_tools.broker.kraft else "Set(foo)"
    assert pair.kafka.stderr == (
        "Only quota and SCRAM credential configs can be added for 'users' using "
        f"--bootstrap-server. Unexpected config names: {names}\n"
    ), pair
    assert pair.ours.stderr == (
        f"{PROG}: error: Invalid config(s): foo. Only SCRAM-SHA-256 and SCRAM-SHA-512 can be "
        "altered by this command.\n"
    ), pair
