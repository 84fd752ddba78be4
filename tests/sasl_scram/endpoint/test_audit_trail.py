"""The KIP-554 handlers write the audit trail: one line per credential an
alteration names, and one per refused request; never a salt or a salted password."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SCRAM_SHA_512
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import RemoteScramAdmin
from sasl_scram.admin import SaslCredentials
from sasl_scram.audit import AUDIT_LOGGER_NAME
from sasl_scram.endpoint import RequestContext
from sasl_scram.endpoint.login._handlers import alter_scram
from sasl_scram.endpoint.login._handlers import describe_client_quotas
from sasl_scram.endpoint.login._handlers import describe_scram
from sasl_scram.store import InMemoryCredentialStore
from sasl_scram.store import ScramUpsertion
from tests.support.endpoint_harness import ADMIN
from tests.support.endpoint_harness import ALICE
from tests.support.endpoint_harness import RunningEndpoint
from tests.support.request_context import request_context

SALT = b"salt-bytes-never-logged"
SALTED = b"salted-password-never-logged"


def _ctx(user: str, super_user: bool) -> RequestContext:
    return request_context(user, super_user=super_user)


def _alteration(user: str) -> dict[str, Any]:
    return {
        "deletions": [{"name": "carol", "mechanism": SCRAM_SHA_512.type_byte}],
        "upsertions": [
            {
                "name": user,
                "mechanism": SCRAM_SHA_256.type_byte,
                "iterations": 8192,
                "salt": SALT,
                "salted_password": SALTED,
            }
        ],
    }


def _audit_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == AUDIT_LOGGER_NAME]


def test_a_change_is_one_allowed_line_per_credential(caplog: pytest.LogCaptureFixture) -> None:
    store = InMemoryCredentialStore()
    with caplog.at_level(logging.INFO, logger=AUDIT_LOGGER_NAME):
        asyncio.run(alter_scram(store, _ctx("admin", True), 0, _alteration("bob")))
    assert _audit_lines(caplog) == [
        "Principal = User:admin is Allowed Operation = Alter from host = 127.0.0.1 on "
        "resource = User:LITERAL:carol for request = AlterUserScramCredentials with "
        "mechanism = SCRAM-SHA-512, change = delete, result = RESOURCE_NOT_FOUND",
        "Principal = User:admin is Allowed Operation = Alter from host = 127.0.0.1 on "
        "resource = User:LITERAL:bob for request = AlterUserScramCredentials with "
        "mechanism = SCRAM-SHA-256, change = upsert, iterations = 8192, result = NONE",
    ]
    assert all(r.levelno == logging.INFO for r in caplog.records if r.name == AUDIT_LOGGER_NAME)
    assert store.describe(["bob"]).results[0].credentials


def test_a_refused_change_names_who_and_whose(caplog: pytest.LogCaptureFixture) -> None:
    store = InMemoryCredentialStore()
    with caplog.at_level(logging.INFO, logger=AUDIT_LOGGER_NAME):
        asyncio.run(alter_scram(store, _ctx("alice", False), 0, _alteration("bob")))
    lines = _audit_lines(caplog)
    assert lines[1] == (
        "Principal = User:alice is Denied Operation = Alter from host = 127.0.0.1 on "
        "resource = User:LITERAL:bob for request = AlterUserScramCredentials with "
        "mechanism = SCRAM-SHA-256, change = upsert, iterations = 8192"
    )
    assert len(lines) == 2


def test_no_secret_reaches_the_trail(caplog: pytest.LogCaptureFixture) -> None:
    store = InMemoryCredentialStore()
    upsertion = ScramUpsertion.from_password("dave", SCRAM_SHA_256, "pw-never-logged")
    body = {
        "deletions": [],
        "upsertions": [
            {
                "name": "dave",
                "mechanism": SCRAM_SHA_256.type_byte,
                "iterations": upsertion.iterations,
                "salt": upsertion.salt,
                "salted_password": upsertion.salted_password,
            }
        ],
    }
    with caplog.at_level(logging.DEBUG):
        asyncio.run(alter_scram(store, _ctx("admin", True), 0, {**_alteration("bob"), **body}))
        asyncio.run(alter_scram(store, _ctx("alice", False), 0, _alteration("bob")))
    text = caplog.text
    assert _audit_lines(caplog)
    for secret in (SALT, SALTED, upsertion.salt, upsertion.salted_password):
        assert repr(secret) not in text
        assert secret.hex() not in text
    assert "pw-never-logged" not in text


def test_a_forged_user_name_stays_on_its_line(caplog: pytest.LogCaptureFixture) -> None:
    name = "bob\nPrincipal = User:admin is Allowed Operation = Alter is Allowed "
    store = InMemoryCredentialStore()
    with caplog.at_level(logging.INFO, logger=AUDIT_LOGGER_NAME):
        asyncio.run(alter_scram(store, _ctx(name, False), 0, _alteration(name)))
    lines = _audit_lines(caplog)
    assert lines
    for line in lines:
        assert "\n" not in line
        assert line.count(" is ") == 1
        assert line.startswith("Principal = User:bob\\x0aPrincipal\\x20=")


def test_unknown_mechanisms_are_named_by_their_byte(caplog: pytest.LogCaptureFixture) -> None:
    body = {"deletions": [{"name": "bob", "mechanism": 9}], "upsertions": []}
    with caplog.at_level(logging.INFO, logger=AUDIT_LOGGER_NAME):
        asyncio.run(alter_scram(InMemoryCredentialStore(), _ctx("admin", True), 0, body))
    (line,) = _audit_lines(caplog)
    assert (
        "mechanism = unknown\\x20(9), change = delete, result = UNSUPPORTED_SASL_MECHANISM" in line
    )


def test_refused_describes_are_denied_on_the_cluster(caplog: pytest.LogCaptureFixture) -> None:
    ctx = _ctx("alice", False)
    with caplog.at_level(logging.INFO, logger=AUDIT_LOGGER_NAME):
        asyncio.run(describe_scram(InMemoryCredentialStore(), ctx, 0, {"users": None}))
        asyncio.run(describe_client_quotas(ctx, 0, {"components": [], "strict": False}))
        asyncio.run(describe_scram(InMemoryCredentialStore(), _ctx("admin", True), 0, {}))
    assert _audit_lines(caplog) == [
        "Principal = User:alice is Denied Operation = Describe from host = 127.0.0.1 on "
        "resource = Cluster:LITERAL:kafka-cluster for request = DescribeUserScramCredentials",
        "Principal = User:alice is Denied Operation = DescribeConfigs from host = 127.0.0.1 on "
        "resource = Cluster:LITERAL:kafka-cluster for request = DescribeClientQuotas",
    ]


def test_over_the_wire_the_line_names_the_clients_host(caplog: pytest.LogCaptureFixture) -> None:
    alice = SaslCredentials(SCRAM_SHA_256, *ALICE)
    admin = SaslCredentials(SCRAM_SHA_512, *ADMIN)
    upsertion = ScramUpsertion.from_password("bob", SCRAM_SHA_256, "bob-secret")
    with caplog.at_level(logging.INFO, logger=AUDIT_LOGGER_NAME), RunningEndpoint() as ep:
        with KafkaConnection(ep.bootstrap, alice) as conn:
            RemoteScramAdmin(conn).alter([], [upsertion])
        with KafkaConnection(ep.bootstrap, admin) as conn:
            RemoteScramAdmin(conn).alter([], [upsertion])
    lines = _audit_lines(caplog)
    # Each connection's login is a line of its own (test_login_audit.py), first.
    logins = [line for line in lines if "for request = SaslAuthenticate " in line]
    assert [line.split(" is ")[0] for line in logins] == [
        "Principal = User:alice",
        "Principal = User:admin",
    ]
    assert lines.index(logins[1]) == 2
    assert [line for line in lines if line not in logins] == [
        "Principal = User:alice is Denied Operation = Alter from host = 127.0.0.1 on "
        "resource = User:LITERAL:bob for request = AlterUserScramCredentials with "
        "mechanism = SCRAM-SHA-256, change = upsert, iterations = 4096",
        "Principal = User:admin is Allowed Operation = Alter from host = 127.0.0.1 on "
        "resource = User:LITERAL:bob for request = AlterUserScramCredentials with "
        "mechanism = SCRAM-SHA-256, change = upsert, iterations = 4096, result = NONE",
    ]
