"""``kafka-scram serve --config server.properties [--override key=value]...``."""

from __future__ import annotations

import argparse
import json
import logging
import logging.config
from typing import Any
from typing import TextIO

from sasl_scram.cli._main import CommandError
from sasl_scram.cli._main import CommandUsageError
from sasl_scram.cli._texts import add_core_command
from sasl_scram.config import ConfigValueError
from sasl_scram.config import Properties
from sasl_scram.config import read_properties
from sasl_scram.endpoint import LOG_FORMAT
from sasl_scram.endpoint import EndpointConfig
from sasl_scram.endpoint import run

__all__ = ["register"]


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    parser = add_core_command(subparsers, "serve", _run)
    parser.add_argument(
        "--config", required=True, metavar="FILE", help="the server.properties file to read"
    )
    parser.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set a property over the file's value (repeatable)",
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        type=str.upper,
        choices=LOG_LEVELS,
        help="logging level (default INFO); DEBUG also prints tracebacks",
    )
    parser.add_argument(
        "--log-config",
        metavar="FILE",
        help="a JSON logging.config.dictConfig applied over the default logging, e.g. to "
        "send the kafka_scram.audit logger to its own file (docs/security.md)",
    )


def load_properties(path: str, overrides: list[str]) -> Properties:
    props = read_properties(path)
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            # The argument is not echoed: it may be a secret typed without its key.
            raise CommandUsageError("--override expects KEY=VALUE")
        props.set(key.strip(), value, "--override")
    return props


def apply_log_config(path: str) -> None:
    """Apply a ``dictConfig`` read from the JSON file ``path`` over the default
    logging; the loggers it does not name keep logging as before.

    Raises:
        CommandError: the file cannot be read, or is not a usable configuration.
    """
    try:
        with open(path, encoding="utf-8") as file:
            config = json.load(file)
        if not isinstance(config, dict):
            raise ValueError("expected a JSON object (a logging.config.dictConfig)")
        config.setdefault("version", 1)
        # Loggers made before (ours, kazoo's) must keep working.
        config.setdefault("disable_existing_loggers", False)
        logging.config.dictConfig(config)
    except OSError as exc:
        raise CommandError(f"--log-config: cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, TypeError, AttributeError, ImportError) as exc:
        # One line, whatever the message (errors are one line on stderr).
        raise CommandError(f"--log-config: {path}: {' '.join(str(exc).split())}") from None


def _run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    logging.basicConfig(
        level=args.log_level.upper(),
        stream=stderr,
        format=LOG_FORMAT,
    )
    if args.log_config is not None:
        apply_log_config(args.log_config)
    # Every key is parsed once, here, before the loop is chosen: a bad value
    # is reported with its file and line, whichever key it is. An error is
    # main's one line (EXIT_RULES): a value typed with --override is a usage
    # error, one read from a file a failure.
    try:
        config = EndpointConfig.from_properties(load_properties(args.config, args.override))
    except ConfigValueError as exc:
        if exc.origin == "--override":
            raise CommandUsageError(str(exc)) from None
        raise
    return run(config, stdout=stdout, stderr=stderr)
