"""The ``kafka-scram`` command.

Subcommands are discovered through the ``kafka_scram.commands`` entry-point
group, so this module composes every package without importing any of them
(docs/architecture.md: no lower package imports a higher one). Each entry point is a
callable ``register(subparsers)`` that adds one subparser with :func:`add_command`
(``jaas``, which depends on nothing of ours, does the same itself), whose
``handler(args, stdin, stdout, stderr) -> int`` runs the command.

Exit codes follow Kafka's tools: 0 on success, 1 on error, 2 for a usage error.
Every error is one line, ``kafka-scram <command>: error: <problem and fix>``, on
stderr; an unexpected exception is reported the same way, with its traceback
only under ``--debug`` (docs/architecture.md, "The command line").
"""

from __future__ import annotations

import argparse
import enum
import sys
import traceback
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, entry_points, version
from typing import Any, NoReturn, TextIO

__all__ = ["CommandUsageError", "ExitStatus", "Handler", "add_command", "main"]

ENTRY_POINT_GROUP = "kafka_scram.commands"


class ExitStatus(enum.IntEnum):
    SUCCESS = 0
    ERROR = 1
    USAGE = 2


class UsageError(Exception):
    """Raised instead of argparse's exit so errors stay one line and testable."""


class CommandUsageError(Exception):
    """A handler's usage error, found after parsing (options that cannot go
    together, a value out of range): :func:`main` prints it as
    ``kafka-scram <command>: error: <message>`` and exits 2."""


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are a single line and never exit the process."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: error: {message}")


Handler = Callable[[argparse.Namespace, TextIO, TextIO, TextIO], int]


EPILOG = """examples:
  kafka-scram serve --config config/server.properties
  kafka-scram credential --mechanism SCRAM-SHA-512 --password -

Run 'kafka-scram COMMAND --help' for a command's options."""


def installed_version() -> str:
    """This distribution's version, from the installed package metadata."""
    try:
        return version("kafka-scram")
    except PackageNotFoundError:
        return "unknown (not installed; run pip install -e . in the source tree)"


def add_command(
    subparsers: argparse._SubParsersAction[Any],
    name: str,
    handler: Handler,
    *,
    summary: str,
    description: str,
    epilog: str,
) -> argparse.ArgumentParser:
    """Add one subcommand the way every ``kafka-scram`` command is added.

    ``summary`` is its line in ``kafka-scram --help``; ``epilog`` holds its
    examples, printed as written; ``handler`` runs it (and raises
    :class:`CommandUsageError` for a usage error).
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help=summary,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(handler=handler)
    return parser


def _add_debug(parser: argparse.ArgumentParser, default: Any) -> None:
    parser.add_argument(
        "--debug",
        action="store_true",
        default=default,
        help="print the traceback of an unexpected error",
    )


def build_parser(stderr: TextIO | None = None) -> OneLineParser:
    parser = OneLineParser(
        prog="kafka-scram",
        description="Kafka SCRAM credentials, delegation tokens and JAAS configuration.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"kafka-scram {installed_version()}")
    _add_debug(parser, False)
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=OneLineParser, title="commands"
    )
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
    _add_debug_below(subparsers)
    return parser


def _add_debug_below(subparsers: argparse._SubParsersAction[Any]) -> None:
    for sub in subparsers.choices.values():
        # SUPPRESS: "--debug" after the command must not reset one given before it.
        _add_debug(sub, argparse.SUPPRESS)
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                _add_debug_below(action)


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
    if args.command is None:
        parser.print_help(stderr)
        print("kafka-scram: error: a command is required", file=stderr)
        return ExitStatus.USAGE
    handler: Handler = args.handler
    try:
        return int(handler(args, stdin, stdout, stderr))
    except CommandUsageError as exc:
        print(f"kafka-scram {args.command}: error: {exc}", file=stderr)
        return ExitStatus.USAGE
    except KeyboardInterrupt:
        print(f"kafka-scram {args.command}: error: interrupted", file=stderr)
        return ExitStatus.ERROR
    except Exception as exc:
        # Whatever a handler did not expect still ends in one line, not a traceback.
        debugging = _debugging(args)
        if debugging:
            traceback.print_exc(file=stderr)
        hint = "" if debugging else " (run again with --debug for the traceback)"
        print(f"kafka-scram {args.command}: error: {type(exc).__name__}: {exc}{hint}", file=stderr)
        return ExitStatus.ERROR


def _debugging(args: argparse.Namespace) -> bool:
    level = getattr(args, "log_level", None)
    return bool(args.debug) or (isinstance(level, str) and level.upper() == "DEBUG")


if __name__ == "__main__":
    raise SystemExit(main())
