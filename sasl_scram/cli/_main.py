"""The ``kafka-scram`` command.

Subcommands are discovered through the ``kafka_scram.commands`` entry-point
group, so this module composes every package without importing any of them
(docs/architecture.md: no lower package imports a higher one). Each entry point is a
callable ``register(subparsers)`` that adds one subparser with :func:`add_command`
(``jaas``, which depends on nothing of ours, does the same itself), whose
``handler(args, stdin, stdout, stderr) -> int`` runs the command.

Exit codes: 0 on success, then one rule for every command, the table
:data:`EXIT_RULES`: what the user gave wrongly is a usage error (2), what went
wrong in the world a failure (1), Ctrl-C 130. Every error is one line,
``kafka-scram <command>: error: <problem and fix>``, on stderr; an unexpected
exception is reported the same way, with its traceback only under ``--debug``
(docs/architecture.md, "The command line").
"""

from __future__ import annotations

import argparse
import difflib
import enum
import logging
import sys
import traceback
from collections.abc import Callable
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError
from importlib.metadata import entry_points
from importlib.metadata import version
from typing import Any
from typing import NoReturn
from typing import TextIO

from sasl_scram._errors import ScramError
from sasl_scram.integrations import LOGIN_FIXES

__all__ = [
    "EXIT_RULES",
    "LOGIN_FIXES",
    "CommandError",
    "CommandUsageError",
    "ExitStatus",
    "Handler",
    "add_command",
    "main",
]

ENTRY_POINT_GROUP = "kafka_scram.commands"


class ExitStatus(enum.IntEnum):
    SUCCESS = 0
    ERROR = 1
    USAGE = 2
    #: 128 + SIGINT, what a shell reports for a command Ctrl-C stopped.
    INTERRUPTED = 130


class UsageError(Exception):
    """Raised instead of argparse's exit so errors stay one line and testable."""


class CommandUsageError(Exception):
    """A handler's usage error, found after parsing (options that cannot go
    together, a value out of range or malformed, an empty secret): :func:`main`
    prints it as ``kafka-scram <command>: error: <message>`` and exits 2."""


class CommandError(Exception):
    """A handler's failure (a file, the network, a server, a store): :func:`main`
    prints it as ``kafka-scram <command>: error: <message>`` and exits 1."""


#: The one exit-code rule, first match wins: (error, exit status, what it covers).
#: Usage errors are what the user gave wrongly, on the command line or as a
#: secret read for ``-``; failures are what went wrong in the world.
EXIT_RULES: tuple[tuple[type[BaseException], ExitStatus, str], ...] = (
    (
        UsageError,
        ExitStatus.USAGE,
        "the command line does not parse: an unknown or misspelled option (reported before "
        "a missing required one), a missing option or value, a value of the wrong type or "
        "not among the choices",
    ),
    (
        CommandUsageError,
        ExitStatus.USAGE,
        "options that cannot go together or need another, a value out of range or malformed "
        "(--add-config, --override, an address, a mechanism name, iterations, base64, a "
        "principal), an empty, missing, unconfirmed or non-UTF-8 secret",
    ),
    (KeyboardInterrupt, ExitStatus.INTERRUPTED, "Ctrl-C"),
    (
        CommandError,
        ExitStatus.ERROR,
        "a file that cannot be read or holds a bad value, a store, a server or the network "
        "failing, a server refusing the request",
    ),
    (ScramError, ExitStatus.ERROR, "the same failures, raised by the library"),
    (Exception, ExitStatus.ERROR, "an error no command expected (its type is named)"),
)


def exit_status(exc: BaseException) -> ExitStatus:
    """The status :data:`EXIT_RULES` gives ``exc``."""
    return next(status for kind, status, _ in EXIT_RULES if isinstance(exc, kind))


class _StoreOnce(argparse._StoreAction):
    """An option that takes one value refuses a second one, as Kafka's tools do
    (joptsimple: "Found multiple arguments for option"), where argparse would
    keep the last and drop the first without a word."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        given: set[str] = namespace.__dict__.setdefault(_GIVEN, set())
        if self.dest in given:
            parser.error(f"{option_string} is given more than once; give it once")
        given.add(self.dest)
        super().__call__(parser, namespace, values, option_string)


#: The options a parse has met, kept in its namespace (a fresh set per parse).
_GIVEN = "_options_given"


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are a single line and never exit the process.

    Each (sub)command reports its own unknown arguments, so the error names the
    command; an unknown option is reported before a missing required one (it
    is often that option, misspelled), with the closest known option. An option
    that takes one value may be given once.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", "store", _StoreOnce)
        self.register("action", None, _StoreOnce)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: error: {message}")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        try:
            parsed, extras = super().parse_known_args(args, namespace)
        except UsageError:
            extras = self._extras_without_requirements(args)
            if not extras:
                raise
        if extras:
            self.error(self._unrecognized(extras))
        return parsed, extras

    def _extras_without_requirements(self, args: Sequence[str] | None) -> list[str]:
        """The unknown arguments, found by parsing again with nothing required."""
        items: list[argparse.Action | argparse._MutuallyExclusiveGroup] = [
            *self._actions,
            *self._mutually_exclusive_groups,
        ]
        saved = [item.required for item in items]
        try:
            for item in items:
                item.required = False
            return super().parse_known_args(args, argparse.Namespace())[1]
        except UsageError:
            return []
        finally:
            for item, was in zip(items, saved, strict=True):
                item.required = was

    def _unrecognized(self, extras: list[str]) -> str:
        message = f"unrecognized arguments: {' '.join(extras)}"
        unknown = next((e.split("=", 1)[0] for e in extras if e.startswith("--")), None)
        known = [o for a in self._actions for o in a.option_strings if o.startswith("--")]
        close = difflib.get_close_matches(unknown, known, n=1, cutoff=0.7) if unknown else []
        return f"{message} (did you mean {close[0]}?)" if close else message


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
    argv = list(argv) if argv is not None else sys.argv[1:]
    try:
        args = parser.parse_args(argv)
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
    not_text = _not_utf8(argv)
    if not_text:
        print(f"kafka-scram {args.command}: error: {not_text}", file=stderr)
        return ExitStatus.USAGE
    # serve logs as a server (timestamps, levels, its --log-level); every other
    # command says its warnings as it says its error.
    warnings = None if args.command == "serve" else _warnings_to(stderr, args.command)
    try:
        return int(handler(args, stdin, stdout, stderr))
    except (Exception, KeyboardInterrupt) as exc:
        status = exit_status(exc)
        print(f"kafka-scram {args.command}: error: {_problem(exc, args, stderr)}", file=stderr)
        return status
    finally:
        if warnings is not None:
            logging.getLogger().removeHandler(warnings)


def _not_utf8(argv: Sequence[str]) -> str | None:
    """Why an argument cannot be used: bytes that were not UTF-8, which Python keeps
    as surrogate escapes (a terminal in another encoding). The argument may be a
    password, so only its position is named."""
    for position, argument in enumerate(argv, 1):
        try:
            argument.encode("utf-8")
        except UnicodeEncodeError:
            return (
                f"argument {position} is not UTF-8 text; set the terminal to UTF-8 "
                "(e.g. LANG=C.UTF-8) or give a secret as - to be prompted for it"
            )
    return None


def _warnings_to(stderr: TextIO, command: str) -> logging.Handler:
    """A WARNING or worse becomes ``kafka-scram <command>: warning: ...`` on ``stderr``."""
    handler = logging.StreamHandler(stderr)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(_CommandFormatter(command))
    logging.getLogger().addHandler(handler)
    return handler


class _CommandFormatter(logging.Formatter):
    """``kafka-scram <command>: warning: <message>``: lower case, as ``error:``."""

    def __init__(self, command: str) -> None:
        super().__init__()
        self._prefix = f"kafka-scram {command}: "

    def format(self, record: logging.LogRecord) -> str:
        return f"{self._prefix}{record.levelname.lower()}: {record.getMessage()}"


def _problem(exc: BaseException, args: argparse.Namespace, stderr: TextIO) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    if isinstance(exc, (CommandUsageError, CommandError, ScramError)):
        return str(exc)
    # Whatever a handler did not expect still ends in one line, not a traceback.
    debugging = _debugging(args)
    if debugging:
        traceback.print_exc(file=stderr)
    hint = "" if debugging else " (run again with --debug for the traceback)"
    return f"{type(exc).__name__}: {exc}{hint}"


def _debugging(args: argparse.Namespace) -> bool:
    level = getattr(args, "log_level", None)
    return bool(args.debug) or (isinstance(level, str) and level.upper() == "DEBUG")


if __name__ == "__main__":
    raise SystemExit(main())
