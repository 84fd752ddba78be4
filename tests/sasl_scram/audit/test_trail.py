"""The audit line: Kafka's authorizer shape, and values that cannot forge a line."""

from __future__ import annotations

import logging
import re

import pytest

from sasl_scram import KafkaPrincipal
from sasl_scram.audit import AUDIT_LOGGER_NAME
from sasl_scram.audit import audit
from sasl_scram.audit import audit_event
from sasl_scram.audit import audit_message
from sasl_scram.audit import escape
from sasl_scram.audit import request_name
from sasl_scram.kafka import ApiKey

ALICE = KafkaPrincipal("User", "alice")
#: The fields of a line, in AclAuthorizer.logAuditMessage's order, each value
#: without a space.
LINE = re.compile(
    r"Principal = (?P<principal>\S+) is (?P<result>Allowed|Denied) Operation = (?P<op>\S+)"
    r" from host = (?P<host>\S+) on resource = (?P<resource>\S+) for request = (?P<request>\S+)"
    r"(?: with (?P<details>.*))?"
)


def test_the_line_has_kafkas_authorizer_shape() -> None:
    line = audit_message(
        ALICE,
        False,
        "Alter",
        "127.0.0.1",
        ("User", "bob"),
        request_name(ApiKey.ALTER_USER_SCRAM_CREDENTIALS),
        [("mechanism", "SCRAM-SHA-256")],
    )
    assert line == (
        "Principal = User:alice is Denied Operation = Alter from host = 127.0.0.1 on "
        "resource = User:LITERAL:bob for request = AlterUserScramCredentials "
        "with mechanism = SCRAM-SHA-256"
    )


@pytest.mark.parametrize(
    ("key", "name"),
    [
        (ApiKey.ALTER_USER_SCRAM_CREDENTIALS, "AlterUserScramCredentials"),
        (ApiKey.CREATE_DELEGATION_TOKEN, "CreateDelegationToken"),
        (ApiKey.DESCRIBE_CLIENT_QUOTAS, "DescribeClientQuotas"),
        (9999, "9999"),
    ],
)
def test_request_names_are_kafkas(key: int, name: str) -> None:
    assert request_name(key) == name


FORGERIES = [
    "bob\nPrincipal = User:admin is Allowed Operation = Alter",
    "bob is Allowed Operation = Alter from host = 10.0.0.1",
    "bob\r\u2028\u2029\x85\x1b[2K\u202e\t\x00 is Allowed ",
    "x on resource = User:LITERAL:admin for request = Metadata",
    "back\\slash\\x0a",
]


@pytest.mark.parametrize("name", FORGERIES)
def test_a_name_cannot_forge_a_line_or_a_field(name: str) -> None:
    mallory = KafkaPrincipal("User", name)
    line = audit_message(
        mallory, False, "Alter", "127.0.0.1", ("User", name), "AlterUserScramCredentials",
        [("owner", name)],
    )  # fmt: skip
    assert line.isprintable()
    assert line.count(" is ") == 1
    assert line.count(" Operation = ") == 1
    assert line.count(" on resource = ") == 1
    match = LINE.fullmatch(line)
    assert match is not None, line
    assert match["result"] == "Denied"
    assert match["principal"] == "User:" + escape(name)
    assert match["resource"] == "User:LITERAL:" + escape(name)
    assert match["details"] == "owner = " + escape(name)


@pytest.mark.parametrize("name", FORGERIES)
def test_escaping_is_reversible(name: str) -> None:
    # Two names never print alike: the escape of the backslash makes it unambiguous.
    escaped = escape(name)
    assert escaped.encode("ascii", "backslashreplace").decode("unicode_escape") == name


def test_escape_leaves_plain_names_alone() -> None:
    assert escape("alice.smith@example.com") == "alice.smith@example.com"
    assert escape("Zoë-用户") == "Zoë-用户"


def test_audit_logs_info_on_its_own_logger(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=AUDIT_LOGGER_NAME):
        audit(ALICE, True, "CreateTokens", "::1", ("User", "alice"), "CreateDelegationToken")
        audit_event("TokenExpired", ("DelegationToken", "id-1"), [("owner", "User:bob\n")])
    records = [r for r in caplog.records if r.name == AUDIT_LOGGER_NAME]
    assert [r.levelno for r in records] == [logging.INFO, logging.INFO]
    assert records[0].getMessage() == (
        "Principal = User:alice is Allowed Operation = CreateTokens from host = ::1 on "
        "resource = User:LITERAL:alice for request = CreateDelegationToken"
    )
    assert records[1].getMessage() == (
        "Event = TokenExpired on resource = DelegationToken:LITERAL:id-1 with owner = User:bob\\x0a"
    )


def test_an_unknown_host_says_so() -> None:
    line = audit_message(ALICE, False, "Describe", "", ("Cluster", "kafka-cluster"), "X")
    assert " from host = unknown " in line
