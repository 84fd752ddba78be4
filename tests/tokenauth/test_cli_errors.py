"""``kafka-scram delegation-tokens`` failures, driven as a user runs it (the real
entry point) against a real ``kafka-scram serve``.

A failure is the line Kafka's DelegationTokenCommand prints (its exception's
class and message), then how to fix it, from one table for every subcommand. A
period beyond a Java long (Kafka reads the periods as ``Long``) is a usage error,
found before anything is printed or sent.
"""

from __future__ import annotations

import base64
import io
import secrets
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import jaas
from sasl_scram.cli import main
from sasl_scram.config import format_properties
from tests.sasl_scram.endpoint.serve_process import Serve
from tests.sasl_scram.endpoint.serve_process import seed
from tests.support.cli_process import assert_one_error
from tests.support.cli_process import kafka_scram
from tests.support.endpoint_harness import ADMIN
from tests.support.endpoint_harness import ALICE
from tests.support.serve_process import client_properties
from tests.tokenauth._fixes import CLUSTER_FIX
from tests.tokenauth._fixes import DISABLED_FIX
from tests.tokenauth._fixes import EXPIRED_FIX
from tests.tokenauth._fixes import MISMATCH_FIX
from tests.tokenauth._fixes import NOT_FOUND_FIX
from tests.tokenauth._fixes import OWNER_FIX
from tests.tokenauth._fixes import PRINCIPAL_TYPE_FIX
from tests.tokenauth._fixes import SASL_FIX
from tests.tokenauth._fixes import TOKEN_LOGIN_FIX
from tokenauth import DelegationTokenClient
from tokenauth import TokenRequestError

# Each case runs the delegation-tokens command in a child Python.
pytestmark = pytest.mark.slow

COMMAND = "delegation-tokens"
ERROR = f"kafka-scram {COMMAND}: error: "
KAFKA = "org.apache.kafka.common.errors."
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
LONG_RANGE = f"({LONG_MIN} to {LONG_MAX})"
UNKNOWN_HMAC = base64.b64encode(secrets.token_bytes(64)).decode()


@dataclass(frozen=True)
class Served:
    """A running serve and --command-config files of its users."""

    bootstrap: str
    alice: Path  # not a super user
    admin: Path  # super.users=User:admin
    base: Path

    def login_file(self, name: str, jaas_line: str) -> Path:
        path = self.base / f"{name}.properties"
        path.write_text(format_properties(client_properties(self.bootstrap, jaas_line)))
        return path

    def run(self, config: Path, *args: str) -> subprocess.CompletedProcess[str]:
        argv = ("--bootstrap-server", self.bootstrap, "--command-config", str(config), *args)
        return kafka_scram(COMMAND, *argv)


def _serve(base: Path, properties: dict[str, str]) -> Iterator[Served]:
    db = base / "state" / "creds.db"
    seed(db)
    with Serve(base, db, properties) as serve:
        served = Served(serve.bootstrap, Path(), Path(), base)
        yield Served(
            serve.bootstrap,
            served.login_file("alice", jaas.scram_login_line(*ALICE)),
            served.login_file("admin", jaas.scram_login_line(*ADMIN)),
            base,
        )


@pytest.fixture(scope="module")
def tokens_on(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from _serve(tmp_path_factory.mktemp("tokens-on"), {"delegation.token.secret.key": "k"})


@pytest.fixture(scope="module")
def tokens_off(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from _serve(tmp_path_factory.mktemp("tokens-off"), {})


def assert_failure(
    result: subprocess.CompletedProcess[str], exception: str, message: str, fix: str
) -> None:
    """Exit 1 and one line: Kafka's words first, exactly, then the fix."""
    line = assert_one_error(result, COMMAND, status=1)
    assert line == f"{ERROR}{KAFKA}{exception}: {message} ({fix})", line


def _create(served: Served, config: Path, *args: str) -> tuple[str, str]:
    result = served.run(config, "--create", *args)
    assert result.returncode == 0, result.stderr
    token_id, hmac = result.stdout.strip().splitlines()[-1].split()[:2]
    return token_id, hmac


# -- 1. A period Kafka could not read as a Java long -----------------------------------

ACTIONS = {
    "--max-life-time-period": ("--create",),
    "--renew-time-period": ("--renew", "--hmac", UNKNOWN_HMAC),
    "--expiry-time-period": ("--expire", "--hmac", UNKNOWN_HMAC),
}


@pytest.mark.parametrize("value", [str(LONG_MAX + 1), "99999999999999999999999", str(LONG_MIN - 1)])
@pytest.mark.parametrize("flag", list(ACTIONS))
def test_a_period_beyond_a_java_long_is_a_usage_error_before_anything_is_sent(
    tmp_path: Path, flag: str, value: str
) -> None:
    config = tmp_path / "c.properties"
    config.write_text(format_properties(client_properties("x:1", jaas.scram_login_line(*ALICE))))
    with socket.create_server(("127.0.0.1", 0)) as listener:
        bootstrap = f"127.0.0.1:{listener.getsockname()[1]}"
        argv = ("--bootstrap-server", bootstrap, "--command-config", str(config))
        result = kafka_scram(COMMAND, *argv, *ACTIONS[flag], flag, value)
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
    line = assert_one_error(result, COMMAND, status=2)
    assert line == (
        f"{ERROR}{flag}: expected a whole number of milliseconds that fits a Java long "
        f"{LONG_RANGE}, got '{value}'"
    ), line
    assert result.stdout == ""


def test_a_very_long_period_is_shortened_in_the_error() -> None:
    out, err = io.StringIO(), io.StringIO()
    argv = [COMMAND, "--bootstrap-server", "127.0.0.1:1", "--command-config", "c.properties"]
    code = main([*argv, "--create", "--max-life-time-period", "9" * 4000], stdout=out, stderr=err)
    assert (code, out.getvalue()) == (2, "")
    assert err.getvalue().endswith(f"{LONG_RANGE}, got '{'9' * 20}…' (4000 digits)\n")


def test_the_ends_of_a_java_long_are_sent(tokens_on: Served) -> None:
    # The server caps the lifetime at its maximum, as Kafka does.
    _create(tokens_on, tokens_on.alice, "--max-life-time-period", str(LONG_MAX))
    period = ("--renew-time-period", str(LONG_MIN))
    assert_failure(
        tokens_on.run(tokens_on.alice, "--renew", "--hmac", UNKNOWN_HMAC, *period),
        "DelegationTokenNotFoundException",
        "Delegation Token is not found on server.",
        NOT_FOUND_FIX,
    )


# -- 2. Kafka's words, then the fix ----------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("--create", "--max-life-time-period", "-1"),
        ("--renew", "--hmac", UNKNOWN_HMAC, "--renew-time-period", "-1"),
        ("--expire", "--hmac", UNKNOWN_HMAC, "--expiry-time-period", "-1"),
        ("--describe",),
    ],
    ids=lambda a: a[0],
)
def test_tokens_disabled_names_the_secret_key(tokens_off: Served, args: tuple[str, ...]) -> None:
    assert_failure(
        tokens_off.run(tokens_off.alice, *args),
        "DelegationTokenDisabledException",
        "Delegation Token feature is not enabled.",
        DISABLED_FIX,
    )


@pytest.mark.parametrize(
    ("action", "period"), [("--renew", "--renew-time-period"), ("--expire", "--expiry-time-period")]
)
def test_an_unknown_hmac_points_to_describe(tokens_on: Served, action: str, period: str) -> None:
    assert_failure(
        tokens_on.run(tokens_on.alice, action, "--hmac", UNKNOWN_HMAC, period, "-1"),
        "DelegationTokenNotFoundException",
        "Delegation Token is not found on server.",
        NOT_FOUND_FIX,
    )


def test_describe_show_hmac_named_by_the_fix_exists(tokens_on: Served) -> None:
    # What the not-found fix tells the user to run lists a live token's HMAC.
    _, hmac = _create(tokens_on, tokens_on.admin, "--max-life-time-period", "-1")
    described = tokens_on.run(tokens_on.admin, "--describe", "--show-hmac")
    assert described.returncode == 0, described.stderr
    assert hmac in described.stdout


def test_another_owner_needs_create_tokens_or_a_super_user(tokens_on: Served) -> None:
    owner = ("--owner-principal", "User:carol")
    assert_failure(
        tokens_on.run(tokens_on.alice, "--create", "--max-life-time-period", "-1", *owner),
        "DelegationTokenAuthorizationException",
        "Delegation Token authorization failed.",
        OWNER_FIX.format(owner="User:carol"),
    )
    # What the fix says works: the super user may.
    _create(tokens_on, tokens_on.admin, "--max-life-time-period", "-1", *owner)


def test_a_renewer_that_is_not_a_user(tokens_on: Served) -> None:
    create = ("--create", "--max-life-time-period", "-1")
    assert_failure(
        tokens_on.run(tokens_on.alice, *create, "--renewer-principal", "Group:ops"),
        "InvalidPrincipalTypeException",
        "Supplied principalType is not supported.",
        PRINCIPAL_TYPE_FIX,
    )


def test_a_wrong_password_points_to_the_command_config(tokens_on: Served) -> None:
    wrong = tokens_on.login_file("wrong", jaas.scram_login_line("alice", "not-alices"))
    assert_failure(
        tokens_on.run(wrong, "--describe"),
        "SaslAuthenticationException",
        "Authentication failed during authentication due to invalid credentials with SASL "
        "mechanism SCRAM-SHA-512",
        SASL_FIX.format(config=wrong),
    )


def test_a_token_login_may_not_ask_for_tokens(tokens_on: Served) -> None:
    token_id, hmac = _create(tokens_on, tokens_on.alice, "--max-life-time-period", "-1")
    as_token = tokens_on.login_file("token", jaas.scram_token_login_line(token_id, hmac))
    assert_failure(
        tokens_on.run(as_token, "--create", "--max-life-time-period", "-1"),
        "UnsupportedByAuthenticationException",
        "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on "
        "delegation token authenticated channels.",
        TOKEN_LOGIN_FIX,
    )


def test_only_the_owner_or_a_renewer_may_renew(tokens_on: Served) -> None:
    _, hmac = _create(tokens_on, tokens_on.alice, "--max-life-time-period", "-1")
    assert_failure(
        tokens_on.run(tokens_on.admin, "--renew", "--hmac", hmac, "--renew-time-period", "-1"),
        "DelegationTokenOwnerMismatchException",
        "Specified Principal is not valid Owner/Renewer.",
        MISMATCH_FIX,
    )


def test_an_expired_token_is_not_renewed(tokens_on: Served) -> None:
    _, hmac = _create(tokens_on, tokens_on.alice, "--max-life-time-period", "1")
    time.sleep(0.05)  # past its 1 ms life; the hourly sweep has not removed it
    assert_failure(
        tokens_on.run(tokens_on.alice, "--renew", "--hmac", hmac, "--renew-time-period", "-1"),
        "DelegationTokenExpiredException",
        "Delegation Token is expired.",
        EXPIRED_FIX,
    )


def test_cluster_authorization_says_who_may(
    tokens_on: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The endpoint never answers 31 to a token request (a KRaft broker may, when it
    forwards one): the broker's answer is stood in for, after a real login."""

    def refused(*_: object, **__: object) -> None:
        raise TokenRequestError("describe", 31)

    monkeypatch.setattr(DelegationTokenClient, "describe_tokens", refused)
    out, err = io.StringIO(), io.StringIO()
    argv = ["--bootstrap-server", tokens_on.bootstrap, "--command-config", str(tokens_on.alice)]
    assert main([COMMAND, *argv, "--describe"], stdout=out, stderr=err) == 1
    assert err.getvalue() == (
        f"{ERROR}{KAFKA}ClusterAuthorizationException: Cluster authorization failed. "
        f"({CLUSTER_FIX})\n"
    )
