"""``kafka-scram jaas check|show``: registered through the ``kafka_scram.commands`` entry point."""

from __future__ import annotations

import argparse
import json
from typing import Any
from typing import TextIO

from jaas._errors import JaasError
from jaas._file import parse_file
from jaas._model import Configuration
from jaas._model import Context
from jaas._options import option_warnings
from jaas._property import parse_property
from jaas._render import render_file
from jaas._render import render_property
from jaas._resolve import CLIENT_CONTEXT
from jaas._resolve import SERVER_CONTEXT
from jaas._resolve import LoginModulePolicy

__all__ = ["handler", "register"]

_OK, _ERROR, _USAGE = 0, 1, 2

_CHECK_EPILOG = """examples:
  kafka-scram jaas check /etc/kafka/kafka_server_jaas.conf
  kafka-scram jaas check --strict client_jaas.conf
  kafka-scram jaas check -Dkafka.home=/opt/kafka client_jaas.conf"""
_SHOW_EPILOG = """examples:
  kafka-scram jaas show /etc/kafka/kafka_server_jaas.conf
  kafka-scram jaas show --json --sasl-jaas-config - < sasl_jaas_config.txt"""
_JAAS_EPILOG = _CHECK_EPILOG + "\n  kafka-scram jaas show --json client_jaas.conf"


def _error(command: str, message: str, stderr: TextIO, level: str = "error") -> None:
    # One error format for every command: the first line says which command failed.
    print(f"kafka-scram jaas {command}: {level}: {message}", file=stderr)


def _warnings(contexts: tuple[Context, ...], where: str) -> list[str]:
    # Options a known login module ignores: Kafka accepts them without a word.
    found: list[str] = []
    for context in contexts:
        prefix = f"context {context.name}: " if where != "sasl.jaas.config" else ""
        for entry in context.entries:
            found.extend(f"{where}: {prefix}{w.message}" for w in option_warnings(entry))
    return found


# name: (help, description, epilog) of ``kafka-scram jaas`` and its subcommands.
_COMMANDS = {
    "jaas": (
        "check and show JAAS configuration",
        "Read JAAS configuration exactly as Kafka and the JDK read it.",
        _JAAS_EPILOG,
    ),
    "check": (
        "validate static JAAS files",
        "Exit 0 when every file is valid JAAS as the JDK reads it, 1 otherwise. "
        "Options Kafka's ScramLoginModule ignores (a misspelled tokenauth or password) "
        "and a tokenauth other than true or false are warnings (errors with --strict).",
        _CHECK_EPILOG,
    ),
    "show": (
        "print a parsed JAAS configuration",
        "Print the parsed model; secrets are masked unless --show-secrets.",
        _SHOW_EPILOG,
    ),
}


def _add_command(subparsers: argparse._SubParsersAction[Any], name: str) -> argparse.ArgumentParser:
    help_, description, epilog = _COMMANDS[name]
    return subparsers.add_parser(  # type: ignore[no-any-return]
        name,
        help=help_,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    """Add the ``jaas`` command and its ``check`` and ``show`` subcommands."""
    jaas = _add_command(subparsers, "jaas")
    commands = jaas.add_subparsers(dest="jaas_command", metavar="SUBCOMMAND")

    check = _add_command(commands, "check")
    check.add_argument("files", nargs="+", metavar="FILE", help="JAAS file ('-' for stdin)")
    check.add_argument(
        "--strict",
        action="store_true",
        help="fail (exit 1) on a warning: an option Kafka's login module ignores",
    )
    _add_define(check)

    show = _add_command(commands, "show")
    source = show.add_mutually_exclusive_group(required=True)
    source.add_argument("file", nargs="?", metavar="FILE", help="JAAS file ('-' for stdin)")
    source.add_argument(
        "--sasl-jaas-config",
        metavar="STRING",
        help="a sasl.jaas.config value ('-' reads it from stdin)",
    )
    show.add_argument("--json", action="store_true", help="print JSON")
    show.add_argument(
        "--show-secrets",
        action="store_true",
        help="print secret values (passwords, user_NAME, HMACs) instead of a mask",
    )
    _add_define(show)

    # Bare, it prints its usage with the subcommands, as bare kafka-scram does.
    jaas.set_defaults(handler=handler, jaas_usage=jaas.format_help)


def _add_define(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-D",
        dest="defines",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a Java system property for ${NAME} expansion (without -D nothing is expanded)",
    )


def handler(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """Run ``jaas check`` or ``jaas show``; return the exit status."""
    if args.jaas_command is None:
        print(args.jaas_usage(), end="", file=stderr)
        print("kafka-scram jaas: error: a subcommand is required: check or show", file=stderr)
        return _USAGE
    properties: dict[str, str] = {}
    for define in args.defines:
        name, sep, value = define.partition("=")
        if not sep or not name:
            _error(args.jaas_command, f"-D expects NAME=VALUE, got {define!r}", stderr)
            return _USAGE
        properties[name] = value
    expand = properties or None
    if args.jaas_command == "check":
        return _check(args.files, expand, args.strict, stdin, stdout, stderr)
    return _show(args, expand, stdin, stdout, stderr)


def _read(path: str, stdin: TextIO) -> str:
    if path == "-":
        return stdin.read()
    with open(path, encoding="utf-8") as fh:  # the JDK reads JAAS files as UTF-8
        return fh.read()


def _reason(exc: OSError | UnicodeDecodeError) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text (the JDK reads JAAS files as UTF-8)"
    return exc.strerror or str(exc)


def _kafka_problems(config: Configuration) -> list[str]:
    # Kafka refuses disallowed modules in the contexts it loads itself.
    problems = []
    policy = LoginModulePolicy()
    for context in config.contexts:
        name = context.name or ""
        if name not in (CLIENT_CONTEXT, SERVER_CONTEXT) and not name.endswith("." + SERVER_CONTEXT):
            continue
        for entry in context.entries:
            try:
                policy.check(entry)
            except JaasError as exc:
                problems.append(f"context {name}: {exc}")
    return problems


def _check(
    files: list[str],
    expand: dict[str, str] | None,
    strict: bool,
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    status = _OK
    for path in files:
        shown = "<stdin>" if path == "-" else path
        try:
            text = _read(path, stdin)
        except (OSError, UnicodeDecodeError) as exc:
            _error("check", f"cannot read {shown}: {_reason(exc)}", stderr)
            status = _ERROR
            continue
        try:
            config = parse_file(text, shown, expand_properties=expand)
        except JaasError as exc:
            _error("check", str(exc), stderr)
            status = _ERROR
            continue
        problems = [f"{shown}: {problem}" for problem in _kafka_problems(config)]
        warnings = _warnings(config.contexts, shown)
        for problem in problems:
            _error("check", problem, stderr)
        for warning in warnings:
            _error("check", warning, stderr, "error" if strict else "warning")
        if problems or (strict and warnings):
            status = _ERROR
            continue
        names = ", ".join(str(c.name) for c in config.contexts) or "no contexts"
        count = len(warnings)
        noted = f", {count} warning{'s' if count > 1 else ''}" if count else ""
        print(f"{shown}: OK ({names}){noted}", file=stdout)
    return status


def _show(
    args: argparse.Namespace,
    expand: dict[str, str] | None,
    stdin: TextIO,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    mask = not args.show_secrets
    try:
        if args.sasl_jaas_config is not None:
            value = (
                stdin.read().rstrip("\r\n")
                if args.sasl_jaas_config == "-"
                else args.sasl_jaas_config
            )
            context: Context = parse_property(value)
            for warning in _warnings((context,), "sasl.jaas.config"):
                _error("show", warning, stderr, "warning")
            if args.json:
                payload = {
                    "source": "sasl.jaas.config",
                    "contexts": [context.to_dict(show_secrets=not mask)],
                }
                print(json.dumps(payload, indent=2, ensure_ascii=False), file=stdout)
            else:
                print(render_property(context, mask_secrets=mask), file=stdout)
            return _OK
        shown = "<stdin>" if args.file == "-" else args.file
        config = parse_file(_read(args.file, stdin), shown, expand_properties=expand)
    except (OSError, UnicodeDecodeError) as exc:
        _error("show", f"cannot read {args.file}: {_reason(exc)}", stderr)
        return _ERROR
    except JaasError as exc:
        _error("show", str(exc), stderr)
        return _ERROR
    for warning in _warnings(config.contexts, shown):
        _error("show", warning, stderr, "warning")
    if args.json:
        payload = {"source": shown, **config.to_dict(show_secrets=not mask)}
        print(json.dumps(payload, indent=2, ensure_ascii=False), file=stdout)
    else:
        print(render_file(config, mask_secrets=mask), end="", file=stdout)
    return _OK
