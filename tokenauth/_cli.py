"""``kafka-scram delegation-tokens``: kafka-delegation-tokens.sh's flags and output.

Differences from Kafka's tool, on purpose (docs/tokens.md):

* ``--describe`` without ``--owner-principal`` lists every token the caller
  may see, as Kafka's tool did up to 3.4 (since 3.5 it sends an empty owner
  list, which returns none; docs/compatibility.md);
* HMACs are printed by ``--create`` (that is what was asked for) but hidden in
  ``--describe`` and in the renew/expire banners unless ``--show-hmac`` is given;
  ``--hmac -`` reads the HMAC from standard input (no echo on a terminal);
* dates carry their UTC offset, and renew/expire end their line.
"""

from __future__ import annotations

import argparse
import binascii
import datetime
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any
from typing import TextIO

from sasl_scram import KafkaPrincipal
from sasl_scram import ScramError
from sasl_scram.admin import KafkaConnectionError
from sasl_scram.cli import LOGIN_FIXES
from sasl_scram.cli import READ_SECRET
from sasl_scram.cli import CommandError
from sasl_scram.cli import CommandUsageError
from sasl_scram.cli import add_command
from sasl_scram.cli import read_secret
from sasl_scram.config import ClientConfig
from sasl_scram.config import bootstrap_servers
from sasl_scram.integrations import Cause
from sasl_scram.kafka import ErrorCode
from tokenauth._client import DelegationTokenClient
from tokenauth._client import TokenRequestError
from tokenauth._client import kafka_exception_text
from tokenauth._errors import TokenError
from tokenauth._token import DelegationToken
from tokenauth._token import hmac_base64

__all__ = ["register"]

_ROW = "\n{:<15} {:<30} {:<15} {:<15} {:<25} {:<15} {:<15} {:<15}\n"
_HIDDEN = "[hidden]"


EPILOG = """examples:
  kafka-scram delegation-tokens --bootstrap-server 127.0.0.1:9092 \\
      --command-config alice.properties --create --max-life-time-period -1
  kafka-scram delegation-tokens --bootstrap-server 127.0.0.1:9092 \\
      --command-config alice.properties --describe
  kafka-scram delegation-tokens --bootstrap-server 127.0.0.1:9092 \\
      --command-config alice.properties --renew --hmac - --renew-time-period -1"""


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    parser = add_command(
        subparsers,
        "delegation-tokens",
        _run,
        summary="create, renew, expire and describe delegation tokens "
        "(like kafka-delegation-tokens)",
        description="KIP-48 delegation tokens over the Kafka protocol.",
        epilog=EPILOG,
    )
    parser.add_argument(
        "--bootstrap-server",
        dest="bootstrap_server",
        required=True,
        metavar="HOST:PORT",
        help="the broker (or kafka-scram serve) to talk to",
    )
    parser.add_argument(
        "--command-config",
        dest="command_config",
        required=True,
        metavar="FILE",
        help="client properties to log in with (security.protocol, sasl.mechanism, "
        "sasl.jaas.config); tokens cannot be created with a token login",
    )
    for action, what in _ACTIONS.items():
        parser.add_argument(f"--{action}", action="store_true", help=what)
    parser.add_argument(
        "--owner-principal",
        dest="owner",
        action="append",
        default=[],
        metavar="PRINCIPAL",
        help="with --create: create the token for this owner (e.g. User:alice); with "
        "--describe: only this owner's tokens (repeatable)",
    )
    parser.add_argument(
        "--renewer-principal",
        dest="renewers",
        action="append",
        default=[],
        metavar="PRINCIPAL",
        help="with --create: a principal allowed to renew the token (repeatable)",
    )
    parser.add_argument(
        "--max-life-time-period",
        dest="max_life",
        type=int,
        metavar="MS",
        help="with --create: the token's longest life in ms (-1: the server's maximum)",
    )
    parser.add_argument(
        "--renew-time-period",
        dest="renew_period",
        type=int,
        metavar="MS",
        help="with --renew: extend the expiry by this many ms (-1: the server's default)",
    )
    parser.add_argument(
        "--expiry-time-period",
        dest="expiry_period",
        type=int,
        metavar="MS",
        help="with --expire: expire in this many ms (-1: now)",
    )
    parser.add_argument(
        "--hmac",
        metavar="BASE64",
        help="with --renew or --expire: the token's HMAC, as --create printed it "
        "('-' reads it from standard input: a prompt without echo on a terminal, "
        "so it stays out of shell history and ps)",
    )
    parser.add_argument(
        "--show-hmac", action="store_true", help="print HMACs in --describe and the banners"
    )


_ACTIONS = {
    "create": "create a token (needs --max-life-time-period)",
    "renew": "renew a token (needs --hmac and --renew-time-period)",
    "expire": "expire a token (needs --hmac and --expiry-time-period)",
    "describe": "list tokens (all the caller may see, or --owner-principal's)",
}


def _principals(values: Sequence[str], flag: str) -> list[KafkaPrincipal]:
    try:
        return [KafkaPrincipal.parse(v.strip()) for v in values]
    except ValueError as exc:
        raise CommandUsageError(f"{flag}: {exc}") from None


def _check(args: argparse.Namespace) -> str:
    actions = [a for a in ("create", "renew", "expire", "describe") if getattr(args, a)]
    if len(actions) != 1:
        raise CommandUsageError(
            "Command must include exactly one action: --create, --renew, --expire or --describe"
        )
    action = actions[0]
    forbidden = {
        "create": ("hmac", "renew_period", "expiry_period"),
        "renew": ("renewers", "max_life", "expiry_period", "owner"),
        "expire": ("renew_period", "max_life", "renewers", "owner"),
        "describe": ("renew_period", "max_life", "hmac", "expiry_period", "renewers"),
    }[action]
    flag = {
        "hmac": "--hmac",
        "renew_period": "--renew-time-period",
        "expiry_period": "--expiry-time-period",
        "renewers": "--renewer-principal",
        "max_life": "--max-life-time-period",
        "owner": "--owner-principal",
    }
    for name in forbidden:
        # Given at all, 0 included: Kafka's tool asks joptsimple's options.has().
        if getattr(args, name) not in (None, []):
            raise CommandUsageError(f"Option {flag[name]} can't be used with --{action}")
    required = {
        "create": ("max_life",),
        "renew": ("hmac", "renew_period"),
        "expire": ("hmac", "expiry_period"),
        "describe": (),
    }[action]
    for name in required:
        if getattr(args, name) is None:
            raise CommandUsageError(f"Missing required argument {flag[name]} for --{action}")
    return action


# DelegationTokenCommand declares the periods ofType(classOf[java.lang.Long]) and the
# RPCs carry them as int64 (CreateDelegationTokenRequest.MaxLifetimeMs, ...).
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_PERIODS = {
    "max_life": "--max-life-time-period",
    "renew_period": "--renew-time-period",
    "expiry_period": "--expiry-time-period",
}


def _check_periods(args: argparse.Namespace) -> None:
    """A period Kafka could not read is the user's error, found before the banner."""
    for name, flag in _PERIODS.items():
        value = getattr(args, name)
        if value is None or _LONG_MIN <= value <= _LONG_MAX:
            continue
        text = str(value)
        # Thousands of digits on one error line would hide the line's point.
        digits = len(text.lstrip("-"))
        got = f"'{text}'" if len(text) <= 30 else f"'{text[:20]}…' ({digits} digits)"
        raise CommandUsageError(
            f"{flag}: expected a whole number of milliseconds that fits a Java long "
            f"({_LONG_MIN} to {_LONG_MAX}), got {got}"
        )


def _date(ms: int) -> str:
    # Kafka's SimpleDateFormat("yyyy-MM-dd'T'HH:mm") in the JVM default time zone,
    # which the reader cannot tell: the same local time, with its UTC offset
    # (ISO 8601, e.g. 2026-11-28T06:22+01:00).
    local = datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC).astimezone()
    return local.isoformat(timespec="minutes")


def _list(principals: Sequence[KafkaPrincipal]) -> str:
    return "[" + ", ".join(str(p) for p in principals) + "]"


def _table(tokens: Sequence[DelegationToken], show_hmac: bool) -> str:
    rows = [
        _ROW.format(
            "TOKENID",
            "HMAC",
            "OWNER",
            "REQUESTER",
            "RENEWERS",
            "ISSUEDATE",
            "EXPIRYDATE",
            "MAXDATE",
        )
    ]
    for t in tokens:
        i = t.info
        rows.append(
            _ROW.format(
                i.token_id,
                t.hmac_base64 if show_hmac else _HIDDEN,
                str(i.owner),
                str(i.token_requester),
                _list(i.renewers),
                _date(i.issue_timestamp_ms),
                _date(i.expiry_timestamp_ms),
                _date(i.max_timestamp_ms),
            )
        )
    return "".join(rows)


Connect = Callable[[], DelegationTokenClient]


def _create(args: argparse.Namespace, connect: Connect, stdout: TextIO) -> None:
    renewers = _principals(args.renewers, "--renewer-principal")
    owners = _principals(args.owner, "--owner-principal")
    print(
        f"Calling create token operation with renewers :{_list(renewers)} , "
        f"max-life-time-period :{args.max_life}",
        file=stdout,
    )
    with connect() as client:
        token = client.create_token(renewers, args.max_life, owners[0] if owners else None)
    print(f"Created delegation token with tokenId : {token.token_id}", file=stdout)
    stdout.write(_table([token], show_hmac=True))


def _renew_or_expire(args: argparse.Namespace, connect: Connect, stdout: TextIO) -> None:
    hmac = _hmac(args.hmac)
    shown = hmac_base64(hmac) if args.show_hmac else _HIDDEN
    # Kafka's banner says "expire-time-period" for --expiry-time-period.
    action, period_name, period = (
        ("renew", "renew-time-period", args.renew_period)
        if args.renew
        else ("expire", "expire-time-period", args.expiry_period)
    )
    print(
        f"Calling {action} token operation with hmac :{shown} , {period_name} :{period}",
        file=stdout,
    )
    with connect() as client:
        if args.renew:
            expiry = client.renew_token(hmac, period)
        else:
            expiry = client.expire_token(hmac, period)
    # Kafka prints this with printf and no newline, so a shell prompt follows on
    # the same line; ours ends it (docs/compatibility.md).
    print(f"Completed {action} operation. New expiry date : {_date(expiry)}", file=stdout)


def _describe(args: argparse.Namespace, connect: Connect, stdout: TextIO) -> None:
    owners = _principals(args.owner, "--owner-principal")
    if owners:
        print(f"Calling describe token operation for owners: {_list(owners)}", file=stdout)
    else:
        print("Calling describe token operation for current user.", file=stdout)
    with connect() as client:
        tokens = client.describe_tokens(owners or None)
    stdout.write(f"Total number of tokens : {len(tokens)}")
    stdout.write(_table(tokens, args.show_hmac))


_RUN = {"create": _create, "renew": _renew_or_expire, "expire": _renew_or_expire}


def _hmac(text: str) -> bytes:
    try:
        return binascii.a2b_base64(text.encode("ascii"), strict_mode=True)
    except (binascii.Error, UnicodeEncodeError):
        raise CommandUsageError("--hmac is not valid base64") from None


# How to fix each refusal, printed after Kafka's own words (what DelegationTokenCommand
# prints: the exception Errors.forCode gives). One table for every subcommand, by
# Kafka's error code; {config} is the --command-config file, {owner} the
# --owner-principal. Who may do what: KafkaApis' delegation token handlers (KIP-48,
# KIP-373 for another owner's tokens).
_FIXES: dict[ErrorCode | Cause, str] = {
    ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED: (
        "the server has no delegation.token.secret.key: set it, the same secret on every "
        "broker (in KRaft mode on every controller too) or in the --config file of "
        "kafka-scram serve, and restart"
    ),
    ErrorCode.DELEGATION_TOKEN_NOT_FOUND: (
        "no live token has this HMAC: it is mistyped, or its token expired and was removed; "
        "--describe --show-hmac lists the live tokens with their HMACs"
    ),
    ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH: (
        "only the token's owner or one of its renewers may renew or expire it, a super user "
        "included: log in as one of them"
    ),
    ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED: (
        "log in with the user's own credentials, not a token: in the --command-config file, "
        "a sasl.jaas.config without tokenauth=true, over SASL_PLAINTEXT or SASL_SSL"
    ),
    ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED: (
        "creating a token for {owner} needs a super user (super.users); a Kafka broker with "
        "an authorizer can instead grant the CreateTokens ACL on {owner}: kafka-acls --add "
        "--allow-principal <you> --operation CreateTokens --user-principal {owner} "
        "(kafka-scram serve decides token requests on super.users only, never on ACLs)"
    ),
    ErrorCode.DELEGATION_TOKEN_EXPIRED: (
        "the token has expired and cannot be renewed: create a new one with --create"
    ),
    ErrorCode.INVALID_PRINCIPAL_TYPE: (
        "a token's renewers are users: give each --renewer-principal as User:<name>"
    ),
    **LOGIN_FIXES,
}


def _error_text(exc: Exception, args: argparse.Namespace) -> str:
    """Kafka's tool prints the failure's ``getMessage()``: the exception's
    class and message (``org.apache.kafka.common.errors.<Exception>: ...``);
    we keep those words first and add how to fix it, in parentheses."""
    if isinstance(exc, TokenRequestError):
        text, code = exc.kafka_message, exc.error_code
    elif isinstance(exc, KafkaConnectionError) and exc.kafka_error is not None:
        text, code = kafka_exception_text(exc.kafka_error, str(exc)), exc.kafka_error
    else:
        return str(exc)  # not Kafka's answer: ours (unreachable, bad configuration)
    try:
        fix = _FIXES.get(ErrorCode(code))
    except ValueError:  # a code newer than our table: Kafka's words alone
        fix = None
    if fix is None:
        return text
    owners = _principals(args.owner[:1], "--owner-principal")
    owner = str(owners[0]) if owners else "another owner"
    config = f"the --command-config file {args.command_config}"
    return f"{text} ({fix.format(config=config, owner=owner)})"


def _run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    action = _check(args)
    # Usage errors first, before anything is printed.
    _check_periods(args)
    _principals(args.owner, "--owner-principal")
    _principals(args.renewers, "--renewer-principal")
    try:
        bootstrap_servers(args.bootstrap_server)
    except ValueError as exc:
        raise CommandUsageError(f"--bootstrap-server: {exc}") from None
    if args.hmac == READ_SECRET:
        args.hmac = read_secret(stdin, "HMAC: ", what="HMAC")
    if args.hmac is not None:
        _hmac(args.hmac)
    try:
        config = ClientConfig.from_file(args.command_config)
        # Kafka's admin client logs in at its first request, after the tool has
        # printed its banner: a failed login still shows the banner, in both.
        _RUN.get(action, _describe)(
            args, lambda: DelegationTokenClient.connect(config, args.bootstrap_server), stdout
        )
    except (ScramError, TokenError) as exc:
        raise CommandError(_error_text(exc, args)) from None
    return 0
