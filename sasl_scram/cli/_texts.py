"""The help texts of the core subcommands (``acls``, ``configs``, ``credential``, ``serve``):
each one's line in ``kafka-scram --help``, its description and its examples,
in one table, as ``jaas`` keeps its commands'."""

from __future__ import annotations

import argparse
from typing import Any
from typing import NamedTuple

from sasl_scram.cli._main import Handler
from sasl_scram.cli._main import add_command

__all__ = ["COMMANDS", "CommandText", "add_core_command"]


class CommandText(NamedTuple):
    summary: str
    description: str
    epilog: str


COMMANDS = {
    "acls": CommandText(
        summary="add, remove and list the edge's ACLs in their store (like kafka-acls)",
        description=(
            "Manage the ACLs kept beside the credentials (a table of the SQLite store, or "
            "Kafka's AclAuthorizer nodes in ZooKeeper) with kafka-acls' options: --add "
            "--allow-principal User:alice --operation Read --topic orders. The change is made "
            "in the store itself, where every process that follows it (a ZooKeeper-mode Kafka "
            "broker on the same chroot too) picks it up."
        ),
        epilog="""examples:
  kafka-scram acls --store sqlite:.kafka-scram/credentials.db --add \\
      --allow-principal User:alice --operation Read --operation Describe --topic orders
  kafka-scram acls --authorizer-properties zookeeper.connect=zk1:2181/kafka --list
  kafka-scram acls --zookeeper zk1:2181/kafka --remove --force --group app- \\
      --resource-pattern-type prefixed""",
    ),
    "configs": CommandText(
        summary="add, delete and describe users' SCRAM credentials (like kafka-configs)",
        description=(
            "Manage SCRAM credentials with kafka-configs' flags: "
            "--alter --add-config 'SCRAM-SHA-256=[iterations=8192,password=alice-secret]' "
            "--entity-type users --entity-name alice. password=- reads the password: "
            "prompted twice without echo on a terminal, one line from a pipe."
        ),
        epilog="""examples:
  kafka-scram configs --store sqlite:.kafka-scram/credentials.db --alter \\
      --add-config 'SCRAM-SHA-512=[password=-]' --entity-type users --entity-name alice
  kafka-scram configs --bootstrap-server 127.0.0.1:9092 \\
      --command-config .kafka-scram/admin.properties --describe --entity-type users""",
    ),
    "credential": CommandText(
        summary="print the Kafka SCRAM credential string for a password",
        description=(
            "Print salt=...,stored_key=...,server_key=...,iterations=N exactly as Kafka "
            "formats a SCRAM credential."
        ),
        epilog="""examples:
  kafka-scram credential --mechanism SCRAM-SHA-512 --password -
  echo pencil | kafka-scram credential --mechanism SCRAM-SHA-256 --password - --iterations 8192""",
    ),
    "serve": CommandText(
        summary="run the Kafka-protocol SCRAM endpoint",
        description="Authenticate real Kafka clients with SCRAM and serve the KIP-554 RPCs.",
        epilog="""examples:
  kafka-scram serve --config config/server.properties
  kafka-scram serve --config config/server.properties --override listeners=SASL_PLAINTEXT://127.0.0.1:9093

The keys, their defaults and what each accepts: docs/configuration.md.""",
    ),
}


def add_core_command(
    subparsers: argparse._SubParsersAction[Any], name: str, handler: Handler
) -> argparse.ArgumentParser:
    """Add the core subcommand ``name`` with its texts from :data:`COMMANDS`."""
    return add_command(subparsers, name, handler, **COMMANDS[name]._asdict())
