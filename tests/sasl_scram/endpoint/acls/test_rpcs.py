"""CreateAcls, DescribeAcls and DeleteAcls at the edge, on a store in memory."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

import pytest

from sasl_scram import ScramMechanism
from sasl_scram._server import ScramSession
from sasl_scram.authz import AclBinding
from sasl_scram.authz import AclBindingFilter
from sasl_scram.authz import Authorizer
from sasl_scram.config import KafkaPrincipal
from sasl_scram.endpoint._extension import CloseRequest
from sasl_scram.endpoint._extension import RequestContext
from sasl_scram.endpoint.acls import AclRpcs
from sasl_scram.endpoint.acls import EdgeAcls
from sasl_scram.frontdoor.authorization import Decided
from sasl_scram.store import AclBindingDeleteResult
from sasl_scram.store import AclCreateResult
from sasl_scram.store import AclDeleteResult

TOPIC, CLUSTER = 2, 4
LITERAL, PREFIXED, MATCH, ANY = 3, 4, 2, 1
READ, ALTER, DESCRIBE, ALL = 3, 7, 8, 2
ALLOW, DENY = 3, 2


class MemoryAcls:
    """An :class:`~sasl_scram.store.AclStore` in a variable (the real ones are
    tested against SQLite and ZooKeeper)."""

    def __init__(self) -> None:
        self.authorizer = Authorizer()

    def acls(self) -> Authorizer:
        return self.authorizer

    def describe_acls(
        self, filter: AclBindingFilter = AclBindingFilter.ANY
    ) -> tuple[AclBinding, ...]:
        return self.authorizer.acls(filter)

    def create_acls(self, bindings: Sequence[AclBinding]) -> list[AclCreateResult]:
        self.authorizer = self.authorizer.add(bindings)
        return [AclCreateResult(b) for b in bindings]

    def delete_acls(self, filters: Sequence[AclBindingFilter]) -> list[AclDeleteResult]:
        self.authorizer, matched = self.authorizer.delete(filters)
        return [
            AclDeleteResult(f, tuple(AclBindingDeleteResult(b) for b in found))
            for f, found in zip(filters, matched, strict=True)
        ]

    def add_listener(self, listener: Callable[[str], None]) -> Callable[[], None]:
        return lambda: None

    def close(self) -> None:
        pass


def context(user: str) -> RequestContext:
    session = ScramSession(ScramMechanism.SCRAM_SHA_256, user, user, False, None)
    return RequestContext(
        principal=KafkaPrincipal.user(user),
        session=session,
        security_protocol="SASL_PLAINTEXT",
        listener_name="SASL_PLAINTEXT",
        super_user=False,
        client_id="kafka-acls",
        connection_id="c1",
        client_host="127.0.0.1",
    )


def creation(name: str, principal: str = "User:bob", pattern: int = LITERAL) -> dict[str, Any]:
    return {
        "resource_type": TOPIC,
        "resource_name": name,
        "resource_pattern_type": pattern,
        "principal": principal,
        "host": "*",
        "operation": READ,
        "permission_type": ALLOW,
    }


def everything(**given: Any) -> dict[str, Any]:
    return {"resource_type_filter": ANY, "resource_name_filter": None, "pattern_type_filter": ANY,
            "principal_filter": None, "host_filter": None, "operation": ANY,
            "permission_type": ANY, **given}  # fmt: skip


@pytest.fixture
def rpcs() -> tuple[AclRpcs, MemoryAcls, list[Decided]]:
    store = MemoryAcls()
    audited: list[Decided] = []
    acls = EdgeAcls(store, super_users=["User:admin"])
    return AclRpcs(store, acls, audit=audited.append), store, audited


def run(coroutine: Any) -> dict[str, Any]:
    result: dict[str, Any] = asyncio.run(coroutine)
    return result


def test_a_super_user_creates_lists_and_deletes(rpcs: Any) -> None:
    handlers, store, audited = rpcs
    admin = context("admin")
    created = run(
        handlers.create(
            admin, 3, {"creations": [creation("orders"), creation("pay", pattern=PREFIXED)]}
        )
    )
    assert [r["error_code"] for r in created["results"]] == [0, 0]
    assert len(store.authorizer) == 2
    listed = run(handlers.describe(admin, 3, everything()))
    assert listed["error_code"] == 0
    assert {(r["resource_name"], r["pattern_type"]) for r in listed["resources"]} == {
        ("orders", LITERAL), ("pay", PREFIXED),
    }  # fmt: skip
    deleted = run(
        handlers.delete(
            admin,
            3,
            {"filters": [everything(resource_name_filter="orders", pattern_type_filter=MATCH)]},
        )
    )
    [result] = deleted["filter_results"]
    assert result["error_code"] == 0
    assert [m["resource_name"] for m in result["matching_acls"]] == ["orders"]
    assert [b.pattern.name for b in store.authorizer.acls()] == ["pay"]
    assert all(d.decision.allowed and d.request.endswith("Acls") for d in audited)


def test_a_plain_user_is_refused_with_cluster_authorization_failed(rpcs: Any) -> None:
    handlers, store, audited = rpcs
    bob = context("bob")
    created = run(handlers.create(bob, 3, {"creations": [creation("orders")]}))
    assert created["results"] == [
        {"error_code": 31, "error_message": "Cluster authorization failed."}
    ]
    assert len(store.authorizer) == 0
    assert run(handlers.describe(bob, 3, everything()))["error_code"] == 31
    deleted = run(handlers.delete(bob, 3, {"filters": [everything()]}))
    assert deleted["filter_results"][0]["error_code"] == 31
    assert [d.decision.allowed for d in audited] == [False, False, False]


def test_an_acl_created_decides_the_next_request(rpcs: Any) -> None:
    handlers, _, _ = rpcs
    admin = context("admin")
    grant = creation("kafka-cluster", "User:bob")
    grant.update(resource_type=CLUSTER, operation=DESCRIBE)
    run(handlers.create(admin, 3, {"creations": [grant]}))
    assert run(handlers.describe(context("bob"), 3, everything()))["error_code"] == 0


def test_kafkas_checks_on_each_creation(rpcs: Any) -> None:
    handlers, _, _ = rpcs
    bad = creation("kafka-cluster-2")
    bad["resource_type"] = CLUSTER
    answer = run(handlers.create(context("admin"), 3, {"creations": [bad, creation("ok")]}))
    assert [r["error_code"] for r in answer["results"]] == [42, 0]
    assert (
        "The only valid name for the CLUSTER resource is kafka-cluster"
        in (answer["results"][0]["error_message"])
    )


def test_a_request_kafka_cannot_parse_closes_the_connection(rpcs: Any) -> None:
    handlers, _, _ = rpcs
    with pytest.raises(CloseRequest, match="UNKNOWN"):
        run(handlers.describe(context("admin"), 3, everything(operation=0)))
