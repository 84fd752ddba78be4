"""What the client examples share: their arguments and kafka-scram's error rule.

An example takes one ``client.properties`` file (or ``KAFKA_CLIENT_PROPERTIES``),
``--debug`` and ``--help`` (its docstring). Any failure, a wrong password, a
missing client library or a file that cannot be read included, ends in one line
``<example>: error: <what is wrong and how to fix it>`` on stderr and exit
status 1 (2 for a usage error, a missing or malformed argument; 130 for
Ctrl-C); the traceback only with ``--debug``. Examples with more options
parse them with :class:`OneLineParser` and run through :func:`report_failures`.

Before its client connects, an example says ``connecting to <bootstrap> ...``
on stderr and asks the port what it is (``check_listener``): a closed port, a
KRaft controller or a listener without SCRAM is named at once, not after the
client's bootstrap timeout, which is :data:`BOOTSTRAP_TIMEOUT` seconds here
rather than the clients' 30 to 60.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

__all__ = [
    "BOOTSTRAP_TIMEOUT",
    "ExampleError",
    "OneLineParser",
    "missing_library",
    "report_failures",
    "run_example",
]

#: Seconds an example waits for the cluster (clients' defaults are 30 to 60 s).
BOOTSTRAP_TIMEOUT = 10.0

# Words in an exception's class name or text that mean the login was refused.
_AUTH_WORDS = ("authentication", "sasl", "credential")
# Each client library's top-level module -> the extra (pyproject.toml) that installs it.
_EXTRAS = {
    "kafka": "kafka-python",
    "aiokafka": "aiokafka",
    "confluent_kafka": "confluent",
    "puresasl": "pure-sasl",
    "pyspark": "spark",
}


class _LastProblem(logging.Handler):
    """Keeps the clients' last warning instead of printing it: the one error line names it.

    kafka-python and aiokafka log why a login failed and then raise a generic
    "Unable to bootstrap"; the logged reason is the useful half.
    """

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.message = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.message = record.getMessage().splitlines()[0] if record.getMessage() else ""


class ExampleError(Exception):
    """A failure whose message already says what to do: printed as it is."""


class OneLineParser(argparse.ArgumentParser):
    """argparse with the usage-error rule above: one line and exit 2.

    argparse prints the whole usage before its error line; ``--help`` shows it.
    """

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _fail(prog: str, message: str, status: int) -> int:
    print(f"{prog}: error: {message}", file=sys.stderr)
    return status


def missing_library(prog: str, exc: ModuleNotFoundError) -> int:
    """One error line naming the extra that installs a missing client library."""
    module = (exc.name or "").partition(".")[0]
    extra = _EXTRAS.get(module)
    if extra is None:
        return _fail(prog, f"{exc}; reinstall: .venv/bin/pip install -e .", 1)
    return _fail(
        prog,
        f"this example needs {module}, which is not installed: "
        f".venv/bin/pip install -e '.[{extra}]'",
        1,
    )


def _connect_first(path: str) -> None:
    """``connecting to <bootstrap> ...`` on stderr, then what the port is, at once."""
    from sasl_scram.integrations import check_listener
    from sasl_scram.integrations import load_client_config

    config = load_client_config(path)
    print(f"connecting to {','.join(config.bootstrap_list())} ...", file=sys.stderr)
    check_listener(config, timeout=BOOTSTRAP_TIMEOUT)


def _login_fix(path: str, text: str) -> str:
    """How to fix a refused login: the user's password, or the token's life."""
    from sasl_scram.integrations import LOGIN_FIXES
    from sasl_scram.integrations import Cause
    from sasl_scram.integrations import load_client_config
    from sasl_scram.kafka import ErrorCode

    config = load_client_config(path)
    if config.token_auth:
        bootstrap = ",".join(config.bootstrap_list())
        return f"{text}; {LOGIN_FIXES[Cause.TOKEN_REFUSED].format(bootstrap=bootstrap)}"
    return f"{text}; {LOGIN_FIXES[ErrorCode.SASL_AUTHENTICATION_FAILED].format(config=path)}"


def _listener_problem(path: str) -> str | None:
    """What is wrong with the port, when the client failed for another reason."""
    from sasl_scram.integrations import ListenerError
    from sasl_scram.integrations import check_listener

    try:
        check_listener(path, timeout=BOOTSTRAP_TIMEOUT / 2)
    except ListenerError as exc:
        return str(exc)
    return None


def _our_login_refused(path: str) -> str | None:
    """Kafka's refusal, from a login of our own, when the client lost it:
    kafka-python can report a refused login as a bootstrap timeout."""
    from sasl_scram import ScramError
    from sasl_scram.admin import KafkaConnection
    from sasl_scram.admin import KafkaConnectionError
    from sasl_scram.integrations import load_client_config
    from sasl_scram.kafka import ErrorCode

    config = load_client_config(path)
    if not config.uses_sasl:
        return None
    try:
        KafkaConnection.from_config(config, timeout=BOOTSTRAP_TIMEOUT / 2).close()
    except KafkaConnectionError as exc:
        if exc.kafka_error == ErrorCode.SASL_AUTHENTICATION_FAILED:
            return f"{ErrorCode.SASL_AUTHENTICATION_FAILED.exception_name}: {exc}"
    except ScramError:  # a login our client cannot make: the client's error stands
        pass
    return None


def _describe(exc: BaseException, path: str, logged: str) -> str:
    from sasl_scram import ScramConfigError
    from sasl_scram.integrations import ListenerError

    if isinstance(exc, ListenerError):
        return str(exc)
    if isinstance(exc, ExampleError):
        return str(exc)
    if isinstance(exc, ScramConfigError):
        # A configuration problem: its message names the key and the fix.
        return f"{path}: {exc}"
    text = _said_once(exc)
    # The clients' last warning, when it adds to what the error says.
    new = logged and str(exc) not in logged and _said_once(exc) not in logged
    if new and any(word in logged.lower() for word in _AUTH_WORDS):
        text = f"{text} ({logged})"
    # The port may have changed since the first check (a broker stopped).
    problem = _listener_problem(path)
    if problem is not None:
        return f"{text}; {problem}"
    if any(word in text.lower() for word in _AUTH_WORDS):
        return _login_fix(path, text)
    refused = _our_login_refused(path)
    if refused is not None:
        return _login_fix(path, f"{text} ({refused})")
    return (
        f"{text}; check that a broker's SASL listener is at bootstrap.servers and that the "
        f"login in {path}'s sasl.jaas.config is right"
    )


def _said_once(exc: BaseException) -> str:
    """``Name (Kafka error N): message``: kafka-python and aiokafka write an error
    as ``[Error N] Name: message``, and kafka-python's message starts with the
    name again."""
    name, text = type(exc).__name__, str(exc)
    code = re.match(r"\[Error (-?\d+)\] ", text)
    if code is not None:
        text = text[code.end() :]
    while text.startswith(f"{name}: "):
        text = text[len(name) + 2 :]
    return f"{name} (Kafka error {code[1]}): {text}" if code else f"{name}: {text}"


def run_example(main: Callable[[str], int], argv: list[str]) -> int:
    """Run ``main(path)`` for ``argv``; every failure becomes one error line."""
    prog = Path(argv[0]).name
    if "--help" in argv[1:] or "-h" in argv[1:]:
        print(sys.modules[main.__module__].__doc__)
        return 0
    args = [a for a in argv[1:] if a != "--debug"]
    debug = len(args) != len(argv) - 1
    path = args[0] if args else os.environ.get("KAFKA_CLIENT_PROPERTIES", "")
    if len(args) > 1 or not path:
        return _fail(
            prog,
            "give one client.properties file (bootstrap.servers, security.protocol, "
            f"sasl.mechanism, sasl.jaas.config): python {argv[0]} [--debug] FILE",
            2,
        )
    if not Path(path).is_file():
        # A file that cannot be read is a failure, not a usage error: the
        # project's exit-code rule, as for kafka-scram's --command-config.
        return _fail(prog, f"{path} is not a file; give a client.properties file", 1)
    problems = _LastProblem()
    if not debug:
        logging.basicConfig(handlers=[problems], level=logging.WARNING)

    def connect_and_run() -> int:
        _connect_first(path)
        return main(path)

    return report_failures(prog, path, debug, connect_and_run, problems)


def report_failures(
    prog: str,
    path: str,
    debug: bool,
    call: Callable[[], int],
    problems: _LastProblem | None = None,
) -> int:
    """``call()``'s exit status; a failure becomes one error line about ``path``.

    ``problems``, when the example's logging goes to it, adds the clients' last
    warning to the line.
    """
    try:
        return call()
    except KeyboardInterrupt:
        # 128 + SIGINT, what a shell reports for a command Ctrl-C stopped.
        return _fail(prog, "interrupted", 130)
    except ModuleNotFoundError as exc:
        if debug:
            traceback.print_exc()
        return missing_library(prog, exc)
    except Exception as exc:
        if debug:
            traceback.print_exc()
        return _fail(prog, _describe(exc, path, problems.message if problems else ""), 1)
