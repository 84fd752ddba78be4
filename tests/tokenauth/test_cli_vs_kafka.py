"""``kafka-scram delegation-tokens`` beside Kafka's own DelegationTokenCommand.

Both tools run against each real broker (Kafka 4.x in KRaft mode, 3.9 in
ZooKeeper mode). What legitimately differs per run is normalised with exact
patterns: a token id (22 characters of URL-safe base64), an HMAC (HmacSHA512:
88 characters of base64) and a date (``yyyy-MM-dd'T'HH:mm``), each replaced
by a placeholder of the same width so that the column layout is still
compared. Everything else must be equal: headers, columns, the banners
(ours shows the HMAC there only with ``--show-hmac``), exit status and, for a
failure, the line Kafka's tool prints, ``e.getMessage()`` of its
``ExecutionException`` (ours adds how to fix it after those words, in
parentheses). Deliberate differences are asserted precisely and
listed in docs/compatibility.md: our dates add their UTC offset to the same
local time, and our renew/expire line ends with a newline.
"""

from __future__ import annotations

import base64
import re
import secrets
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from sasl_scram import ScramMechanism
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.side_by_side import KAFKA_ERRORS
from tests.support.side_by_side import KafkaTools
from tests.support.side_by_side import Pair
from tests.support.side_by_side import kafka_failure
from tests.support.side_by_side import ours
from tests.tokenauth._fixes import MISMATCH_FIX
from tests.tokenauth._fixes import NOT_FOUND_FIX
from tests.tokenauth._fixes import PRINCIPAL_TYPE_FIX
from tests.tokenauth._fixes import SASL_FIX
from tests.tokenauth._fixes import TOKEN_LOGIN_FIX

PROG = "kafka-scram delegation-tokens"
_TOKEN_ID = r"[A-Za-z0-9_-]{22}"
_HMAC = r"[A-Za-z0-9+/]{86}=="
_DATE = r"\d{4}-\d\d-\d\dT\d\d:\d\d"
# Ours: the same local time, then its UTC offset.
_OFFSET = r"[+-]\d\d:\d\d"
_CREATED = re.compile(rf"^Created delegation token with tokenId : ({_TOKEN_ID})$", re.MULTILINE)
_ROW = re.compile(rf"^({_TOKEN_ID}) ({_HMAC}) ", re.MULTILINE)
HEADER = (
    f"{'TOKENID':<15} {'HMAC':<30} {'OWNER':<15} {'REQUESTER':<15} {'RENEWERS':<25} "
    f"{'ISSUEDATE':<15} {'EXPIRYDATE':<15} {'MAXDATE':<15}"
)
# Ours hides an HMAC in describe: "[hidden]" in the 30-wide column.
_HIDDEN_COLUMN = f"{'[hidden]':<30} "


def normalised(text: str) -> str:
    text = re.sub(rf"(?<![\w+/-]){_TOKEN_ID}(?![\w+/=-])", "T" * 22, text)
    text = re.sub(_HMAC, "H" * 88, text)
    return re.sub(rf"{_DATE}(?:{_OFFSET})?", "yyyy-MM-ddTHH:mm", text)


def kafka_dates(ours: str) -> str:
    """Our output with each date as Kafka's tool prints it: every date must carry
    an offset, and the local time before it is Kafka's (same machine, same zone)."""
    dates = re.findall(_DATE, ours)
    with_offset = re.findall(rf"({_DATE}){_OFFSET}", ours)
    assert dates == with_offset, ours
    return re.sub(rf"({_DATE}){_OFFSET}", r"\1", ours)


@dataclass(frozen=True)
class Token:
    token_id: str
    hmac: str


def created(result: subprocess.CompletedProcess[str]) -> Token:
    """The token a ``--create`` printed: the id line and the table's one row."""
    assert result.returncode == 0, result.stderr
    match = _CREATED.search(result.stdout)
    row = _ROW.search(result.stdout)
    assert match is not None and row is not None, result.stdout
    assert row.group(1) == match.group(1), result.stdout
    return Token(row.group(1), row.group(2))


@dataclass(frozen=True)
class Logins:
    """--command-config files of the users in one test (all SCRAM-SHA-256)."""

    admin: Path
    owner: Path
    renewer: Path
    stranger: Path
    owner_name: str
    renewer_name: str


@pytest.fixture
def logins(kafka_broker: KafkaBroker, tmp_path: Path) -> Logins:
    names = {role: unique_name(f"tok-{role}") for role in ("owner", "renewer", "stranger")}
    paths = {}
    for role, name in names.items():
        kafka_broker.add_user(name, f"{name}-pw", [ScramMechanism.SCRAM_SHA_256])
        paths[role] = kafka_broker.client_properties(
            tmp_path / f"{role}.properties", name, f"{name}-pw"
        )
    return Logins(
        kafka_broker.client_properties(tmp_path / "admin.properties"),
        paths["owner"],
        paths["renewer"],
        paths["stranger"],
        names["owner"],
        names["renewer"],
    )


def _kafka(tools: KafkaTools, config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return tools.run(tools.broker.delegation_token_command, config, *args)


def _tokens(tools: KafkaTools, config: Path, *args: str) -> Pair:
    return Pair.same(
        tools, tools.broker.delegation_token_command, "delegation-tokens", config, *args
    )


def _each(tools: KafkaTools, config: Path, tokens: tuple[Token, Token], *args: str) -> Pair:
    """``args`` with ``{hmac}`` filled in: Kafka's tool on its token, ours on ours."""
    kafka_token, our_token = tokens
    return Pair.run(
        lambda: _kafka(tools, config, *(a.format(hmac=kafka_token.hmac) for a in args)),
        lambda: ours(
            "delegation-tokens",
            tools.broker,
            config,
            *(a.format(hmac=our_token.hmac) for a in args),
            "--show-hmac",
        ),
    )


def _assert_same_normalised(pair: Pair, *, newline: bool = False) -> None:
    """``newline``: ours ends the renew/expire line, Kafka's printf does not."""
    assert pair.kafka.returncode == pair.ours.returncode == 0, pair
    kafka = normalised(pair.kafka.stdout) + ("\n" if newline else "")
    assert normalised(pair.ours.stdout) == kafka, pair
    assert pair.ours.stderr == "", pair


def test_create_renew_expire_describe_match_kafka(kafka_tools: KafkaTools, logins: Logins) -> None:
    tools, broker = kafka_tools, kafka_tools.broker
    owner, renewer = f"User:{logins.owner_name}", f"User:{logins.renewer_name}"
    # KIP-373: the super user creates a token for another owner.
    create = ["--create", "--max-life-time-period", "3600000", "--owner-principal", owner]
    create += ["--renewer-principal", renewer]
    pair = _tokens(tools, logins.admin, *create)
    _assert_same_normalised(pair)
    assert pair.kafka.stdout.startswith(
        f"Calling create token operation with renewers :[{renewer}] , "
        "max-life-time-period :3600000\nCreated delegation token with tokenId : "
    )
    tokens = created(pair.kafka), created(pair.ours)

    pair = _each(
        tools,
        logins.renewer,
        tokens,
        "--renew",
        "--hmac",
        "{hmac}",
        "--renew-time-period",
        "600000",
    )
    _assert_same_normalised(pair, newline=True)
    # Kafka's printf has no newline; ours has, and the date's offset.
    assert re.fullmatch(
        f"Calling renew token operation with hmac :{_HMAC} , renew-time-period :600000\n"
        f"Completed renew operation. New expiry date : {_DATE}",
        pair.kafka.stdout,
    ), pair
    assert re.fullmatch(
        f"Calling renew token operation with hmac :{_HMAC} , renew-time-period :600000\n"
        f"Completed renew operation. New expiry date : {_DATE}{_OFFSET}\n",
        pair.ours.stdout,
    ), pair

    pair = _each(
        tools,
        logins.owner,
        tokens,
        "--expire",
        "--hmac",
        "{hmac}",
        "--expiry-time-period",
        "300000",
    )
    _assert_same_normalised(pair, newline=True)
    assert pair.ours.stdout.startswith(
        f"Calling expire token operation with hmac :{tokens[1].hmac} , expire-time-period :300000\n"
    )

    # Both tokens, each tool describing both: nothing to normalise.
    describe = ("--describe", "--owner-principal", owner)
    # A KRaft broker answers from its metadata cache, which takes the expiry just
    # written a moment later: the two tools, run one after the other, may see it
    # on either side of that moment. Asked again until both see the same.
    for _ in range(5):
        pair = _tokens(tools, logins.renewer, *describe)
        assert pair.kafka.returncode == pair.ours.returncode == 0, pair
        assert "Total number of tokens : 2\n" in pair.kafka.stdout, pair
        # Ours hides HMACs unless asked (docs/compatibility.md) and keeps the column.
        ours_stdout = kafka_dates(pair.ours.stdout)
        if ours_stdout == _ROW.sub(rf"\1 {_HIDDEN_COLUMN}", pair.kafka.stdout):
            break
        time.sleep(0.5)
    assert ours_stdout == _ROW.sub(rf"\1 {_HIDDEN_COLUMN}", pair.kafka.stdout), pair
    shown = ours("delegation-tokens", broker, logins.renewer, *describe, "--show-hmac")
    assert (shown.returncode, kafka_dates(shown.stdout)) == (0, pair.kafka.stdout), shown

    # Without --owner-principal, Kafka 3.5+ sends an empty owner list and lists
    # nothing; ours lists what the caller may see. The brokers allow everyone
    # where no ACL exists, so that is every token on the shared broker: this
    # test's two are among them, row for row.
    pair = Pair.run(
        lambda: _kafka(tools, logins.owner, "--describe"),
        lambda: ours("delegation-tokens", broker, logins.owner, "--describe", "--show-hmac"),
    )
    kafka, mine = pair.kafka, pair.ours
    assert kafka.returncode == mine.returncode == 0, pair
    banner = "Calling describe token operation for current user.\n"
    assert kafka.stdout == f"{banner}Total number of tokens : 0\n{HEADER}\n", kafka
    assert mine.stdout.startswith(banner), mine

    def rows(stdout: str) -> list[str]:
        return [line for line in stdout.splitlines()[1:] if f" {owner} " in line]

    ours_rows = rows(mine.stdout)
    assert ours_rows == rows(shown.stdout), mine
    assert len(ours_rows) == 2, mine


def _assert_same_failure(
    pair: Pair, name: str, message: str, fix: str, hmac: str | None = None
) -> None:
    """Kafka's tool prints ``e.getMessage()``, then the stack trace; ours that one line,
    then, deliberately (docs/compatibility.md), how to fix it in parentheses.
    Both print the banner first (Kafka's admin client logs in lazily)."""
    assert pair.kafka.returncode == pair.ours.returncode == 1, pair
    line = f"{KAFKA_ERRORS}{name}: {message}"
    assert kafka_failure(pair.kafka) == (name, message), pair
    kafka_lines = pair.kafka.stderr.splitlines()
    trace = kafka_lines.index(f"java.util.concurrent.ExecutionException: {line}")
    assert kafka_lines[trace - 1] == line, pair
    assert pair.ours.stderr == f"{PROG}: error: {line} ({fix})\n", pair
    banner = pair.kafka.stdout if hmac is None else pair.kafka.stdout.replace(hmac, "[hidden]")
    assert pair.ours.stdout == banner != "", pair


def test_errors_are_kafkas_exception_lines(
    kafka_tools: KafkaTools, logins: Logins, tmp_path: Path
) -> None:
    tools, broker = kafka_tools, kafka_tools.broker
    unknown = base64.b64encode(secrets.token_bytes(64)).decode()
    for action, period in (
        ("--renew", "--renew-time-period"),
        ("--expire", "--expiry-time-period"),
    ):
        _assert_same_failure(
            _tokens(tools, logins.owner, action, "--hmac", unknown, period, "-1"),
            "DelegationTokenNotFoundException",
            "Delegation Token is not found on server.",
            NOT_FOUND_FIX,
            hmac=unknown,
        )

    _assert_same_failure(
        _tokens(
            tools,
            logins.owner,
            "--create",
            "--max-life-time-period",
            "-1",
            "--renewer-principal",
            "Group:ops",
        ),
        "InvalidPrincipalTypeException",
        "Supplied principalType is not supported.",
        PRINCIPAL_TYPE_FIX,
    )

    token = created(
        ours("delegation-tokens", broker, logins.owner, "--create", "--max-life-time-period", "-1")
    )
    _assert_same_failure(
        _tokens(
            tools, logins.stranger, "--renew", "--hmac", token.hmac, "--renew-time-period", "-1"
        ),
        "DelegationTokenOwnerMismatchException",
        "Specified Principal is not valid Owner/Renewer.",
        MISMATCH_FIX,
        hmac=token.hmac,
    )

    # KIP-48: no token may be created over a token-authenticated connection.
    as_token = broker.client_properties(
        tmp_path / "token.properties", token.token_id, token.hmac, token=True
    )
    _assert_same_failure(
        _tokens(tools, as_token, "--create", "--max-life-time-period", "-1"),
        "UnsupportedByAuthenticationException",
        "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on "
        "delegation token authenticated channels.",
        TOKEN_LOGIN_FIX,
    )

    # Deliberate (docs/compatibility.md): a bad --hmac is a usage error here,
    # found before anything is printed; Kafka's tool decodes it after its banner.
    pair = _tokens(
        tools, logins.owner, "--renew", "--hmac", "not-base64!", "--renew-time-period", "1"
    )
    assert (pair.kafka.returncode, pair.ours.returncode) == (1, 2), pair
    assert (
        pair.kafka.stdout
        == "Calling renew token operation with hmac :not-base64! , renew-time-period :1\n"
    ), pair
    assert pair.kafka.stderr.startswith("Illegal base64 character 2d\n"), pair
    assert (pair.ours.stdout, pair.ours.stderr) == (
        "",
        f"{PROG}: error: --hmac is not valid base64\n",
    ), pair

    wrong = broker.client_properties(
        tmp_path / "wrong.properties", logins.owner_name, "wrong-password"
    )
    _assert_same_failure(
        _tokens(tools, wrong, "--create", "--max-life-time-period", "-1"),
        "SaslAuthenticationException",
        "Authentication failed during authentication due to invalid credentials with SASL "
        "mechanism SCRAM-SHA-256",
        SASL_FIX.format(config=wrong),
    )
