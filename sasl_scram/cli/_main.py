"""The ``kafka-scram`` command.

Subcommands are discovered through the ``kafka_scram.commands`` entry-point
group, so this module composes every package without importing any of them
(docs/architecture.md: no lower package imports a higher one). Each entry point is a
callable ``register(subparsers)`` that adds one subparser and sets the default
``handler`` to ``handler(args, stdin, stdout, stderr) -> int``.

Exit codes follow Kafka's tools: 0 on success, 1 on error, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import enum
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from typing import NoReturn, TextIO

__all__ = ["ExitStatus", "main"]

ENTRY_POINT_GROUP = "kafka_scram.commands"


class ExitStatus(enum.IntEnum):
    SUCCESS = 0
    ERROR = 1
    USAGE = 2


class UsageError(Exception):
    """Raised instead of argparse's exit so errors stay one line and testable."""


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are a single line and never exit the process."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: error: {message}")


Handler = Callable[[argparse.Namespace, TextIO, TextIO, TextIO], int]


def build_parser(stderr: TextIO | None = None) -> OneLineParser:
    parser = OneLineParser(
        prog="kafka-scram",
        description="Kafka SCRAM credentials, delegation tokens and JAAS configuration.",
    )
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=OneLineParser
    )
    subparsers.required = True
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            register = ep.load()
        except Exception as exc:
            # One broken plug-in must not take every other subcommand down with it.
            print(
                f"kafka-scram: warning: subcommand {ep.name!r} unavailable: {exc}",
                file=stderr if stderr is not None else sys.stderr,
            )
            continue
        register(subparsers)
    return parser


def main(
    argv: Sequence[str] | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run ``kafka-scram`` with injected streams; returns the exit status."""
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    stderr = stderr if stderr is not None else sys.stderr
    parser = build_parser(stderr)
    try:
        args = parser.parse_args(list(argv) if argv is not None else sys.argv[1:])
    except UsageError as exc:
        print(str(exc), file=stderr)
        return ExitStatus.USAGE
    except SystemExit as exc:  # --help and --version exit through argparse
        return int(exc.code or 0)
    handler: Handler = args.handler
    return int(handler(args, stdin, stdout, stderr))


if __name__ == "__main__":
    raise SystemExit(main())
