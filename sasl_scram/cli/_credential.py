"""``kafka-scram credential``: print the Kafka credential string for a password.

Users need it to seed stores and to compare with what Kafka holds in
ZooKeeper (``/config/users/<user>``) or in its metadata log.
"""

from __future__ import annotations

import argparse
from typing import Any
from typing import TextIO

from sasl_scram._b64 import Base64Error
from sasl_scram._b64 import java_b64decode
from sasl_scram._credential import ScramCredential
from sasl_scram._mechanism import MIN_ITERATIONS
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.cli._main import CommandUsageError
from sasl_scram.cli._secret import READ_SECRET
from sasl_scram.cli._secret import read_secret
from sasl_scram.cli._texts import add_core_command

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    parser = add_core_command(subparsers, "credential", _run)
    parser.add_argument(
        "--mechanism", required=True, choices=ScramMechanism.names(), help="SCRAM mechanism"
    )
    parser.add_argument(
        "--password",
        required=True,
        help="the password, or - to read it: prompted without echo on a terminal, one line "
        "from a pipe (keeps it out of shell history)",
    )
    parser.add_argument(
        "--iterations",
        type=int,
        default=MIN_ITERATIONS,
        help=f"PBKDF2 iterations, {MIN_ITERATIONS}..16384 (default {MIN_ITERATIONS})",
    )
    parser.add_argument(
        "--salt-base64",
        dest="salt_base64",
        help="use this salt (standard base64) instead of a fresh Kafka-style salt",
    )


def _run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    mechanism = ScramMechanism.from_name(args.mechanism)
    if not mechanism.min_iterations <= args.iterations <= mechanism.max_iterations:
        # The same bounds Kafka enforces on alterations (KIP-554).
        raise CommandUsageError(
            f"--iterations must be between {mechanism.min_iterations} and "
            f"{mechanism.max_iterations}, got {args.iterations}"
        )
    salt: bytes | None = None
    if args.salt_base64 is not None:
        try:
            salt = java_b64decode(args.salt_base64)
        except Base64Error as exc:
            raise CommandUsageError(f"--salt-base64 is not valid base64: {exc}") from None
        if not salt:
            raise CommandUsageError("--salt-base64 must not be empty")
    password: str = args.password
    if password == READ_SECRET:
        password = read_secret(stdin, confirm=True)
    if not password:
        raise CommandUsageError("the password must not be empty; give one or - to type it")
    credential = ScramCredential.from_password(
        mechanism, password, iterations=args.iterations, salt=salt
    )
    print(credential.to_kafka_string(), file=stdout)
    return 0
