"""``kafka-scram delegation-tokens`` output, run as a user runs it against a real
``kafka-scram serve``: every output ends with a newline, dates say their time
zone, and ``--hmac -`` reads the HMAC from standard input."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli_process import kafka_scram
from tests.tokenauth.test_cli_errors import COMMAND
from tests.tokenauth.test_cli_errors import Served
from tests.tokenauth.test_cli_errors import _serve

# Local time with its UTC offset (ISO 8601), where Kafka's tool prints local time alone.
DATE = r"\d{4}-\d\d-\d\dT\d\d:\d\d[+-]\d\d:\d\d"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from _serve(tmp_path_factory.mktemp("tokens"), {"delegation.token.secret.key": "k"})


def run(served: Served, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    argv = ("--bootstrap-server", served.bootstrap, "--command-config", str(served.alice), *args)
    return kafka_scram(COMMAND, *argv, stdin=stdin)


def create(served: Served) -> str:
    result = run(served, "--create", "--max-life-time-period", "-1")
    assert result.returncode == 0, result.stderr
    assert re.search(rf" {DATE} +{DATE} +{DATE} *$", result.stdout.splitlines()[-1]), result
    return result.stdout.splitlines()[-1].split()[1]


def test_renew_and_expire_end_with_a_newline_and_dates_say_their_zone(served: Served) -> None:
    hmac = create(served)
    for action, period in (
        ("--renew", "--renew-time-period"),
        ("--expire", "--expiry-time-period"),
    ):
        result = run(served, action, "--hmac", hmac, period, "60000")
        assert result.returncode == 0, result.stderr
        last = result.stdout.splitlines()[-1]
        assert result.stdout.endswith("\n"), result.stdout
        assert re.fullmatch(rf"Completed {action[2:]} operation\. New expiry date : {DATE}", last)


def test_describe_dates_say_their_zone(served: Served) -> None:
    create(served)
    result = run(served, "--describe")
    assert result.returncode == 0 and result.stdout.endswith("\n"), result
    assert re.search(rf" {DATE} +{DATE} +{DATE} *$", result.stdout.splitlines()[-1]), result


def test_hmac_dash_reads_it_from_standard_input(served: Served) -> None:
    hmac = create(served)
    result = run(
        served, "--renew", "--hmac", "-", "--renew-time-period", "60000", stdin=hmac + "\n"
    )
    assert result.returncode == 0, result.stderr
    assert hmac not in result.stdout + result.stderr  # the banner hides it
    assert result.stdout.startswith("Calling renew token operation with hmac :[hidden] ,")
    empty = run(served, "--renew", "--hmac", "-", "--renew-time-period", "1", stdin="")
    assert empty.returncode == 2 and empty.stdout == "", empty
    assert empty.stderr == (
        f"kafka-scram {COMMAND}: error: no HMAC given: standard input ended before a line "
        "was read; pipe the HMAC as one line, or run on a terminal to be prompted\n"
    )


def test_config_warnings_reach_the_user(served: Served, tmp_path: Path) -> None:
    from jaas import SCRAM_LOGIN_MODULE

    line = f'{SCRAM_LOGIN_MODULE} required username="alice" password="alice-secret" tokenath=true;'
    config = served.login_file("typo", line)
    result = kafka_scram(
        COMMAND,
        "--bootstrap-server",
        served.bootstrap,
        "--command-config",
        str(config),
        "--describe",
    )
    assert result.stderr.startswith(
        f"kafka-scram {COMMAND}: warning: sasl.jaas.config: ScramLoginModule ignores option "
        "'tokenath'"
    ), result
