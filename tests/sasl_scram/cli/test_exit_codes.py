"""The one exit-code rule, walked over every command's bad inputs.

What the user gave wrongly (an option, a value, a piped or typed secret) is a
usage error: exit 2. What went wrong in the world (a file, the network, a
server, a store) is a failure: exit 1. Either way the error is one line,
``kafka-scram <command>: error: <problem and fix>``, on stderr and nothing else
there. The rule is the table ``EXIT_RULES`` in ``sasl_scram/cli/_main.py``;
docs/architecture.md ("The command line") lists which errors are usage errors.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from sasl_scram.cli._main import EXIT_RULES
from sasl_scram.cli._main import ExitStatus
from sasl_scram.cli._main import main
from tests.support.cli_process import ROOT
from tests.support.cli_process import assert_one_error
from tests.support.cli_process import kafka_scram

USAGE, FAILURE = 2, 1
STORE = "sqlite:{tmp}/creds.db"
ALTER = ("configs", "--store", STORE, "--alter", "--entity-type", "users", "--entity-name", "a")
TOKENS = ("delegation-tokens", "--bootstrap-server", "127.0.0.1:1", "--command-config")

# (arguments, piped stdin, exit status, the command in the error, a fragment of the error)
CASES: list[tuple[tuple[str, ...], str, int, str, str]] = [
    # kafka-scram itself
    (("--bogus",), "", USAGE, "", "unrecognized arguments: --bogus"),
    (("nosuch",), "", USAGE, "", "invalid choice: 'nosuch'"),
    # credential
    (("credential", "--mechanism", "SCRAM-SHA-256", "--password", "x", "--itertions", "5"),
     "", USAGE, "credential", "unrecognized arguments: --itertions 5 (did you mean --iterations?)"),
    (("credential", "--mechanism", "SCRAM-SHA-1", "--password", "x"), "", USAGE, "credential",
     "SCRAM-SHA-1"),
    (("credential", "--mechanism", "SCRAM-SHA-256"), "", USAGE, "credential", "--password"),
    (("credential", "--mechanism", "SCRAM-SHA-256", "--password", "x", "--iterations", "abc"),
     "", USAGE, "credential", "invalid int value: 'abc'"),
    (("credential", "--mechanism", "SCRAM-SHA-256", "--password", "x", "--iterations", "10"),
     "", USAGE, "credential", "--iterations must be between 4096 and 16384"),
    (("credential", "--mechanism", "SCRAM-SHA-256", "--password", "x", "--salt-base64", "!"),
     "", USAGE, "credential", "--salt-base64 is not valid base64"),
    (("credential", "--mechanism", "SCRAM-SHA-256", "--password", "-"), "\n", USAGE,
     "credential", "no password given: the line read from standard input is empty"),
    (("credential", "--mechanism", "SCRAM-SHA-256", "--password", "-"), "", USAGE,
     "credential", "no password given: standard input ended before a line"),
    (("credential", "--mechanism", "SCRAM-SHA-256", "--password", ""), "", USAGE,
     "credential", "the password must not be empty"),
    # serve
    (("serve",), "", USAGE, "serve", "the following arguments are required: --config"),
    (("serve", "--hlep"), "", USAGE, "serve",
     "unrecognized arguments: --hlep (did you mean --help?)"),
    (("serve", "--config", "{tmp}/s.properties", "--override", "foo"), "", USAGE, "serve",
     "--override expects KEY=VALUE"),
    (("serve", "--config", "{tmp}/s.properties", "--override", "=x"), "", USAGE, "serve",
     "--override expects KEY=VALUE"),
    (("serve", "--config", "{tmp}/s.properties", "--log-level", "LOUD"), "", USAGE, "serve",
     "invalid choice: 'LOUD'"),
    (("serve", "--config", "{tmp}/missing.properties"), "", FAILURE, "serve", "cannot read"),
    (("serve", "--config", "{tmp}/bad.properties"), "", FAILURE, "serve",
     "connections.max.reauth.ms: expected an integer"),
    # configs
    (("configs", "--describe", "--entity-type", "users"), "", USAGE, "configs",
     "exactly one of --bootstrap-server, --zookeeper, --store"),
    (("configs", "--store", STORE, "--describe"), "", USAGE, "configs", "--entity-type users"),
    (("configs", "--store", STORE, "--describe", "--entity-type", "topics"), "", USAGE,
     "configs", "only the users entity type"),
    (("configs", "--store", STORE, "--describe", "--entity-type", "users", "--entity-default"),
     "", USAGE, "configs", "--entity-default"),
    (("configs", "--store", STORE, "--describe", "--user", "a", "--itertions"), "", USAGE,
     "configs", "unrecognized arguments: --itertions"),
    (("configs", "--store", STORE, "--user", "a"), "", USAGE, "configs",
     "one of the arguments --alter --describe is required"),
    ((*ALTER,), "", USAGE, "configs", "--alter needs --add-config or --delete-config"),
    ((*ALTER, "--add-config", "garbage"), "", USAGE, "configs", 'in the format "key=val"'),
    ((*ALTER, "--add-config", "SCRAM-SHA-1=[password=x]"), "", USAGE, "configs",
     "Invalid config(s): SCRAM-SHA-1"),
    ((*ALTER, "--delete-config", "SCRAM-SHA-1"), "", USAGE, "configs",
     "Invalid config(s): SCRAM-SHA-1"),
    ((*ALTER, "--add-config", "SCRAM-SHA-256=[iterations=x,password=y]"), "", USAGE,
     "configs", "Invalid credential property SCRAM_SHA_256=[hidden]"),
    ((*ALTER, "--add-config", "SCRAM-SHA-256=[iterations=100,password=y]"), "", USAGE,
     "configs", "Iterations 100 is less than the minimum 4096"),
    ((*ALTER, "--add-config", "SCRAM-SHA-256=[password=]"), "", USAGE, "configs",
     "Password must not be empty"),
    ((*ALTER, "--add-config", "SCRAM-SHA-256=[password=-]"), "\n", USAGE, "configs",
     "no password given: the line read from standard input is empty"),
    (("configs", "--bootstrap-server", "127.0.0.1:1", "--describe", "--user", "a"), "", USAGE,
     "configs", "--command-config is required with --bootstrap-server"),
    (("configs", "--zookeeper", "127.0.0.1:1", "--zookeeper-timeout", "-1", "--describe",
      "--user", "a"), "", USAGE, "configs", "--zookeeper-timeout"),
    # Where to connect, as typed: checked before anything is opened.
    (("configs", "--bootstrap-server", "127.0.0.1", "--command-config", "{tmp}/c.properties",
      "--describe", "--user", "a"), "", USAGE, "configs",
     "--bootstrap-server: '127.0.0.1' is not host:port"),
    (("configs", "--bootstrap-server", "127.0.0.1:70000", "--command-config",
      "{tmp}/c.properties", "--describe", "--user", "a"), "", USAGE, "configs",
     "--bootstrap-server: port 70000 is out of range (1-65535)"),
    (("configs", "--zookeeper", "nohost:abc", "--describe", "--user", "a"), "", USAGE,
     "configs", "--zookeeper: 'nohost:abc' is not host:port"),
    (("configs", "--zookeeper", "127.0.0.1:1,,", "--describe", "--user", "a"), "", USAGE,
     "configs", "--zookeeper: an empty host:port"),
    (("configs", "--store", "{tmp}/c.db", "--describe", "--user", "a"), "", USAGE, "configs",
     "--store: store location must be sqlite:PATH"),
    (("configs", "--store", "zookeeper:127.0.0.1:99999", "--describe", "--user", "a"), "",
     USAGE, "configs", "--store: port 99999 is out of range (1-65535)"),
    (("serve", "--config", "{tmp}/s.properties", "--override", "node.id=abc"), "", USAGE,
     "serve", "--override: node.id: expected an integer"),
    (("serve", "--config", "{tmp}/zk.properties"), "", FAILURE, "serve",
     "zookeeper.connect: '127.0.0.1:abc' is not host:port"),
    # An option given twice: argparse would keep the last value silently.
    ((*ALTER, "--add-config", "SCRAM-SHA-256=[password=x]", "--add-config",
      "SCRAM-SHA-512=[password=y]"), "", USAGE, "configs",
     "--add-config is given more than once; give it once"),
    (("configs", "--store", STORE, "--describe", "--user", "a", "--user", "b"), "", USAGE,
     "configs", "--user is given more than once"),
    (("credential", "--mechanism", "SCRAM-SHA-256", "--password", "x", "--password", "y"), "",
     USAGE, "credential", "--password is given more than once"),
    ((*ALTER, "--delete-config", "SCRAM-SHA-256"), "", FAILURE, "configs",
     "Attempt to delete a user credential that does not exist"),
    (("configs", "--bootstrap-server", "127.0.0.1:1", "--command-config",
      "{tmp}/missing.properties", "--describe", "--user", "a"), "", FAILURE, "configs",
     "cannot read"),
    # acls
    (("acls", "--store", STORE, "--lst"), "", USAGE, "acls",
     "unrecognized arguments: --lst (did you mean --list?)"),
    (("acls", "--store", STORE), "", USAGE, "acls", "exactly one action"),
    (("acls", "--store", STORE, "--add", "--topic", "t", "--allow-principal", "alice"), "",
     USAGE, "acls", "principalType:principalName"),
    (("acls", "--store", STORE, "--list", "--resource-pattern-type", "x"), "", USAGE, "acls",
     "Unknown resource-pattern-type: x"),
    (("acls", "--store", STORE, "--list", "--store", STORE), "", USAGE, "acls",
     "--store is given more than once"),
    (("acls", "--zookeeper", "127.0.0.1:1", "--zookeeper-timeout", "0", "--list"), "", USAGE,
     "acls", "--zookeeper-timeout"),
    (("acls", "--store", STORE, "--list"), "", FAILURE, "acls", "no SQLite ACL store at"),
    # delegation-tokens
    ((*TOKENS, "{tmp}/c.properties"), "", USAGE, "delegation-tokens",
     "exactly one action"),
    ((*TOKENS, "{tmp}/c.properties", "--describe", "--hlep"), "", USAGE, "delegation-tokens",
     "unrecognized arguments: --hlep"),
    ((*TOKENS, "{tmp}/c.properties", "--renew", "--hmac", "!!", "--renew-time-period", "1"),
     "", USAGE, "delegation-tokens", "--hmac is not valid base64"),
    ((*TOKENS, "{tmp}/c.properties", "--describe", "--owner-principal", "bob"), "", USAGE,
     "delegation-tokens", "--owner-principal"),
    ((*TOKENS, "{tmp}/c.properties", "--create", "--max-life-time-period", "x"), "", USAGE,
     "delegation-tokens", "invalid int value"),
    # Present is present, 0 included, as Kafka's tool checks it (options.has).
    ((*TOKENS, "{tmp}/c.properties", "--renew", "--hmac", "AAAA", "--renew-time-period", "1",
      "--max-life-time-period", "0"), "", USAGE, "delegation-tokens",
     "Option --max-life-time-period can't be used with --renew"),
    ((*TOKENS, "{tmp}/c.properties", "--create", "--max-life-time-period", "1",
      "--expiry-time-period", "0"), "", USAGE, "delegation-tokens",
     "Option --expiry-time-period can't be used with --create"),
    ((*TOKENS, "{tmp}/missing.properties", "--describe"), "", FAILURE, "delegation-tokens",
     "cannot read"),
    (("delegation-tokens", "--bootstrap-server", "127.0.0.1:70000", "--command-config",
      "{tmp}/c.properties", "--describe"), "", USAGE, "delegation-tokens",
     "--bootstrap-server: port 70000 is out of range (1-65535)"),
    # jaas
    (("jaas",), "", USAGE, "jaas", "required"),
    (("jaas", "chek"), "", USAGE, "jaas", "invalid choice: 'chek'"),
    (("jaas", "check"), "", USAGE, "jaas check", "required: FILE"),
    (("jaas", "show", "--bogus", "x"), "", USAGE, "jaas show", "unrecognized arguments: --bogus"),
    (("jaas", "check", "{tmp}/missing.conf"), "", FAILURE, "jaas check", "cannot read"),
]  # fmt: skip


def _files(tmp: Path) -> None:
    (tmp / "s.properties").write_text("listeners=SASL_PLAINTEXT://127.0.0.1:0\n")
    (tmp / "bad.properties").write_text("connections.max.reauth.ms=soon\n")
    (tmp / "c.properties").write_text("security.protocol=PLAINTEXT\n")
    (tmp / "zk.properties").write_text("zookeeper.connect=127.0.0.1:abc\n")


@pytest.mark.parametrize(
    ("argv", "stdin", "status", "command", "fragment"),
    CASES,
    ids=[" ".join(c[0]).replace("{tmp}/", "") for c in CASES],
)
def test_every_bad_input_is_one_line_with_the_rule_s_status(
    tmp_path: Path, argv: tuple[str, ...], stdin: str, status: int, command: str, fragment: str
) -> None:
    _files(tmp_path)
    args = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    out, err = io.StringIO(), io.StringIO()
    code = main(args, stdin=io.StringIO(stdin), stdout=out, stderr=err)
    lines = [line for line in err.getvalue().splitlines() if line.strip()]
    prefix = f"kafka-scram {command}: error: " if command else "kafka-scram: error: "
    assert (code, lines[-1:]) == (status, lines[-1:]) and lines, err.getvalue()
    errors = [line for line in lines if ": error: " in line]
    assert len(errors) == 1 and errors[0].startswith(prefix), err.getvalue()
    assert fragment in errors[0], errors[0]
    assert "Traceback" not in err.getvalue() and not out.getvalue()


def test_the_rule_is_one_table_of_usage_errors_and_failures() -> None:
    statuses = {status for _, status, _ in EXIT_RULES}
    assert statuses == {ExitStatus.USAGE, ExitStatus.ERROR, ExitStatus.INTERRUPTED}
    # Every entry says what it covers (the table is the documentation).
    assert all(why for _, _, why in EXIT_RULES)


@pytest.mark.slow
def test_the_process_exits_with_the_rule_s_status() -> None:
    """The entry point's status is main's: two of the cases above, as processes."""
    assert_one_error(kafka_scram("serve", "--hlep"), "serve", status=2)
    result = kafka_scram("credential", "--mechanism", "SCRAM-SHA-256", "--password", "-")
    assert "no password given" in assert_one_error(result, "credential", status=2)


def test_the_table_is_in_the_architecture_document() -> None:
    doc = (ROOT / "docs" / "architecture.md").read_text()
    for _, status, why in EXIT_RULES:
        if why != "the same failures, raised by the library":
            assert f"| {int(status)} | {why} |" in doc, why
