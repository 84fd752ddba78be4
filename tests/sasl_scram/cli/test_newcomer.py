"""What a newcomer meets through the real entry point: version, usage, help, one error format.

Every error is one line ``kafka-scram <command>: error: ...`` on stderr, exit 1
for a failure and 2 for a usage error, and no traceback without --debug.
"""

from __future__ import annotations

import argparse
import errno
import os
import socket
import subprocess
from importlib.metadata import version
from pathlib import Path

import pytest

from sasl_scram.cli._main import build_parser
from sasl_scram.endpoint import EndpointConfig
from sasl_scram.endpoint.runtime._process import cannot_listen
from tests.support.cli_process import EXE
from tests.support.cli_process import ROOT
from tests.support.cli_process import assert_one_error
from tests.support.cli_process import child_env
from tests.support.cli_process import kafka_scram
from tests.support.cli_process import pty_run
from tests.support.zookeeper_server import free_port

COMMANDS = ("configs", "credential", "delegation-tokens", "jaas", "serve")


@pytest.mark.slow
def test_version_comes_from_the_package_metadata() -> None:
    result = kafka_scram("--version")
    assert (result.returncode, result.stdout) == (0, f"kafka-scram {version('kafka-scram')}\n")


@pytest.mark.slow
def test_bare_command_prints_usage_with_every_command_and_exits_2() -> None:
    result = kafka_scram()
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("usage: kafka-scram")
    listed = result.stderr.split("commands:")[1]
    for command in COMMANDS:
        line = next(line for line in listed.splitlines() if line.strip().startswith(command))
        # The description sits on the command's line or the next one.
        assert len(line.split()) > 1 or command == "delegation-tokens"
    assert "create, renew, expire and describe delegation tokens" in listed
    assert result.stderr.rstrip().endswith("kafka-scram: error: a command is required")


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found.extend(_parsers(sub))
    return found


def test_every_option_has_help_and_every_help_ends_with_examples() -> None:
    for parser in _parsers(build_parser()):
        for action in parser._actions:
            if action.option_strings and action.help != argparse.SUPPRESS:
                assert action.help, f"{parser.prog} {action.option_strings[0]} has no help"
        assert parser.epilog and "examples:" in parser.epilog, parser.prog
        assert parser.format_help().rstrip().endswith(parser.epilog.rstrip())


@pytest.mark.slow
def test_delegation_tokens_help_through_the_entry_point() -> None:
    result = kafka_scram("delegation-tokens", "--help")
    assert result.returncode == 0
    assert "with --create: the token's longest life in ms" in result.stdout
    assert result.stdout.rstrip().splitlines()[-1].strip().startswith("--command-config")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("workers", "advertised", "shared"),
    [
        ("1", False, False),
        ("2", False, False),
        ("1", True, False),
        # Held as another serve's workers hold it: with SO_REUSEPORT, which the
        # parent's own reservation also sets, so the kernel would have let a
        # second serve share the port and split the connections between them.
        ("2", False, True),
    ],
)
def test_serve_on_a_port_in_use(
    tmp_path: Path, workers: str, advertised: bool, shared: bool
) -> None:
    with socket.socket() as busy:
        if shared:
            busy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        config = tmp_path / "server.properties"
        pinned = f"advertised.listeners=SASL_PLAINTEXT://127.0.0.1:{port}\n" if advertised else ""
        config.write_text(
            f"listeners=SASL_PLAINTEXT://127.0.0.1:{port}\n"
            f"scram.credential.store.path={tmp_path}/creds.db\n"
            f"scram.workers={workers}\n" + pinned  # 2: the parent's reservation finds it in use
        )
        error = assert_one_error(kafka_scram("serve", "--config", str(config)), "serve")
    assert f"cannot listen on SASL_PLAINTEXT://127.0.0.1:{port}" in error
    assert "address already in use" in error.lower() and "--override listeners=" in error
    # A pinned advertised.listeners must move too: the hint names it.
    assert ("--override advertised.listeners=" in error) == advertised, error


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["1", "2"])
def test_serve_on_an_address_this_host_does_not_have(tmp_path: Path, workers: str) -> None:
    # 192.0.2.1: TEST-NET-1 (RFC 5737), reserved for documentation, on no interface.
    config = tmp_path / "server.properties"
    config.write_text(
        f"listeners=SASL_PLAINTEXT://192.0.2.1:{free_port()}\n"
        f"scram.credential.store.path={tmp_path}/creds.db\nscram.workers={workers}\n"
    )
    error = assert_one_error(kafka_scram("serve", "--config", str(config)), "serve")
    assert "cannot assign requested address" in error.lower()
    assert "stop the process" not in error, error  # no process holds an address
    assert "192.0.2.1 is not an address of this host" in error, error
    assert "--override listeners=" in error


@pytest.mark.slow
@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (
            "listeners=SASL_PLAINTEXT://no.such.invalid:{port}\n",
            "no.such.invalid cannot be resolved to an address",
        ),
        (
            "listeners=SASL_SSL://127.0.0.1:{port}\nssl.keystore.location={tmp}/none.pem\n",
            "ssl.keystore.location: cannot load the TLS key and certificate from "
            "{tmp}/none.pem: No such file or directory",
        ),
        (
            "listeners=SASL_SSL://127.0.0.1:{port}\nssl.keystore.location={tmp}/bad.pem\n",
            "ssl.keystore.location: cannot load the TLS key and certificate from {tmp}/bad.pem",
        ),
    ],
)
def test_a_listener_that_cannot_start_is_not_blamed_on_the_port(
    tmp_path: Path, lines: str, expected: str
) -> None:
    (tmp_path / "bad.pem").write_text("-----BEGIN CERTIFICATE-----\nnot base64\n")
    config = tmp_path / "server.properties"
    config.write_text(
        lines.format(port=free_port(), tmp=tmp_path)
        + f"scram.credential.store.path={tmp_path}/creds.db\n"
    )
    error = assert_one_error(kafka_scram("serve", "--config", str(config)), "serve")
    assert expected.format(tmp=tmp_path) in error, error
    assert "stop the process using the port" not in error, error


def test_a_privileged_port_gets_its_own_hint() -> None:
    # The tests run as root, which may bind below 1024: the kernel's refusal is built.
    config = EndpointConfig.from_properties(
        {"listeners": "SASL_PLAINTEXT://127.0.0.1:80", "scram.credential.store.path": "x.db"}
    )
    error = str(cannot_listen(config, OSError(errno.EACCES, "Permission denied")))
    assert "a port below 1024 needs privileges: choose one above 1023 in 'listeners'" in error
    assert "stop the process" not in error


@pytest.mark.slow
def test_serve_with_an_unknown_log_level(tmp_path: Path) -> None:
    result = kafka_scram("serve", "--config", "x", "--log-level", "LOUD")
    assert "invalid choice: 'LOUD'" in assert_one_error(result, "serve", status=2)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("add", "message"),
    [
        ("SCRAM-SHA-256=[iterations=100,password=x]", "Iterations 100 is less than"),
        ("garbage", 'must be in the format "key=val"'),
        # Kafka's words, then what is wrong: the value itself holds the password.
        (
            "SCRAM-SHA-256=[iterations=abc,password=hunter2]",
            "Invalid credential property SCRAM_SHA_256=[hidden]: iterations must be a "
            "whole number, got 'abc'",
        ),
        (
            "SCRAM-SHA-256=[iterations=99999999999,password=hunter2]",
            "Invalid credential property SCRAM_SHA_256=[hidden]: iterations 99999999999 "
            "is more than a Java int holds",
        ),
        (
            "SCRAM-SHA-256=[pass=hunter2]",
            "Invalid credential property SCRAM_SHA_256=[hidden]: expected "
            "[iterations=N,]password=PASSWORD",
        ),
        (
            "SCRAM-SHA-256=[iterations=8192]",
            "Invalid credential property SCRAM_SHA_256=[hidden]: expected "
            "[iterations=N,]password=PASSWORD",
        ),
    ],
)
def test_configs_errors_have_the_prefix(tmp_path: Path, add: str, message: str) -> None:
    store = f"sqlite:{tmp_path}/creds.db"
    result = kafka_scram("configs", "--store", store, "--alter", "--add-config", add, "--user", "a")
    assert message in assert_one_error(result, "configs", status=2)
    assert "hunter2" not in result.stderr


def test_configs_deleting_a_missing_user(zookeeper_hosts: str) -> None:
    result = kafka_scram(
        "configs", "--zookeeper", zookeeper_hosts, "--alter", "--delete-config",
        "SCRAM-SHA-256", "--user", "nobody-here",
    )  # fmt: skip
    assert "Invalid config(s): SCRAM-SHA-256 (the user has" in assert_one_error(result, "configs")


@pytest.mark.slow
def test_jaas_errors_have_the_prefix(tmp_path: Path) -> None:
    missing = kafka_scram("jaas", "check", str(tmp_path / "missing.conf"))
    assert "cannot read" in assert_one_error(missing, "jaas check")
    bad = tmp_path / "bad.conf"
    bad.write_text('KafkaClient {\n m required password="hunter2" port=9092;\n};\n')
    for command in ("check", "show"):
        result = kafka_scram("jaas", command, str(bad))
        assert "expected a value for option 'port'" in assert_one_error(result, f"jaas {command}")
        assert "hunter2" not in result.stderr


@pytest.mark.slow
def test_an_unexpected_error_is_one_line_unless_debug(tmp_path: Path) -> None:
    # A fault nothing expects, injected where the password is read (Python
    # imports sitecustomize at start-up from the path).
    (tmp_path / "sitecustomize.py").write_text(
        "import sasl_scram.cli._secret as secret\n"
        "def fault(*args, **kwargs):\n"
        "    raise RuntimeError('an injected fault')\n"
        "secret.read_secret = fault\n"
    )
    env = {"PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    args = ("credential", "--mechanism", "SCRAM-SHA-256", "--password", "-")
    result = kafka_scram(*args, stdin="pw\n", env=env)
    error = assert_one_error(result, "credential")
    assert "RuntimeError: an injected fault" in error and "--debug" in error
    debug = kafka_scram("--debug", *args, stdin="pw\n", env=env)
    assert debug.returncode == 1 and "Traceback (most recent call last)" in debug.stderr
    # With --debug given, the error does not tell to run again with --debug.
    assert "--debug" not in debug.stderr.splitlines()[-1]


@pytest.mark.slow
def test_an_argument_that_is_not_utf8_is_a_usage_error() -> None:
    # A terminal in Latin-1 sends bytes Python keeps as surrogate escapes.
    for args, position, text in (
        (("credential", "--mechanism", "SCRAM-SHA-256", "--password", "caf\udce9"), 5, "caf"),
        (("configs", "--store", "memory:", "--describe", "--user", "jos\udce9"), 6, "jos"),
    ):
        done = subprocess.run(
            [os.fsencode(EXE), *(os.fsencode(a) for a in args)],
            capture_output=True,
            env=child_env(),
            timeout=60,
            check=False,
        )
        result = subprocess.CompletedProcess(
            done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
        )
        error = assert_one_error(result, args[0], 2)
        assert f"argument {position} is not UTF-8 text" in error, error
        assert text not in error  # it may be a password: not echoed


@pytest.mark.slow
def test_a_piped_password_that_is_not_utf8_is_a_usage_error(tmp_path: Path) -> None:
    store = f"sqlite:{tmp_path}/creds.db"
    for command in (
        ("credential", "--mechanism", "SCRAM-SHA-256", "--password", "-"),
        (
            "configs",
            "--store",
            store,
            "--alter",
            "--add-config",
            "SCRAM-SHA-256=[password=-]",
            "--entity-type",
            "users",
            "--entity-name",
            "alice",
        ),
    ):
        result = kafka_scram(*command, stdin=b"caf\xe9\n")  # Latin-1, not UTF-8
        error = assert_one_error(result, command[0], 2)
        assert "not UTF-8" in error, error


@pytest.mark.slow
def test_password_dash_on_a_terminal_prompts_without_echo_and_confirms() -> None:
    argv = [EXE, "credential", "--mechanism", "SCRAM-SHA-256", "--password", "-"]
    code, output = pty_run(argv, ["pencil-secret", "pencil-secret"])
    assert code == 0, output
    assert "Password:" in output and "Confirm password:" in output
    assert "pencil-secret" not in output
    assert "salt=" in output and "iterations=4096" in output
    code, output = pty_run(argv, ["pencil-secret", "other-secret"])
    assert code == 2 and "kafka-scram credential: error: the two passwords differ" in output
    assert "secret" not in output.replace("passwords differ", "")
