"""Kafka's own answers, replayed: StandardAuthorizer 3.9.2 and 4.4.0 on random ACL sets.

``vectors/standard_authorizer.json`` holds what Kafka's classes answered
(``vectors/generate.py`` ran ``AuthorizerVectors.java`` against each version):
each decision and the ACL its audit line names, ``authorizeByResourceType``,
``AclBindingFilter.matches``, the order ``acls`` lists and the ``toString``s.
Resource names are names as clients use them, drawn from ``a``, ``b`` and ``-``
so that literals and prefixes meet, and the wildcard ``*``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sasl_scram.authz import AccessControlEntry
from sasl_scram.authz import AccessControlEntryFilter
from sasl_scram.authz import AclBinding
from sasl_scram.authz import AclBindingFilter
from sasl_scram.authz import AclOperation
from sasl_scram.authz import AclPermissionType
from sasl_scram.authz import Action
from sasl_scram.authz import Authorizer
from sasl_scram.authz import Decision
from sasl_scram.authz import PatternType
from sasl_scram.authz import ResourcePattern
from sasl_scram.authz import ResourcePatternFilter
from sasl_scram.authz import ResourceType
from sasl_scram.authz import parse_super_users
from sasl_scram.config import KafkaPrincipal

VECTORS = json.loads((Path(__file__).parent / "vectors" / "standard_authorizer.json").read_text())
CASES: list[dict[str, Any]] = VECTORS["cases"]


def binding(fields: list[str]) -> AclBinding:
    rtype, name, pattern, principal, host, op, permission = fields
    return AclBinding(
        ResourcePattern(ResourceType[rtype], name, PatternType[pattern]),
        AccessControlEntry(principal, host, AclOperation[op], AclPermissionType[permission]),
    )


def authorizer(case: dict[str, Any]) -> Authorizer:
    return Authorizer(
        (binding(fields) for fields in case["acls"]),
        super_users=parse_super_users(case["super_users"]),
        allow_everyone_if_no_acl_found=case["allow_everyone"],
    )


def expected(decision: Decision, acls: list[AclBinding]) -> str:
    """Our decision in the vectors' words."""
    result = "ALLOWED" if decision.allowed else "DENIED"
    if decision.acl is not None:
        return f"{result} acl:{acls.index(decision.acl)}"
    return f"{result} {decision.rule_text()}"


def test_the_vectors_cover_every_kind_of_answer() -> None:
    for version in ("3.9.2", "4.4.0"):
        answers = [a["kafka"][version] for c in CASES for a in c["asks"]]
        assert len(answers) == 4000
        kinds = {answer.split(" ")[-1].partition(":")[0] for answer in answers}
        expected = {"SuperUser", "DefaultAllow", "DefaultDeny", "acl"}
        # 4.x fails the questions of a session principal User:* (below).
        assert kinds == (expected | {"ERROR"} if version == "4.4.0" else expected)
        assert sum(answer.endswith(("acl:0", "acl:1", "acl:2")) for answer in answers) > 100
        assert sum(answer.startswith("ALLOWED acl") for answer in answers) > 100


@pytest.mark.parametrize("version", ["3.9.2", "4.4.0"])
@pytest.mark.parametrize("index", range(0, len(CASES), 20))
def test_decisions_and_the_acl_they_name_are_kafkas(version: str, index: int) -> None:
    for case in CASES[index : index + 20]:
        acls = [binding(fields) for fields in case["acls"]]
        authz = authorizer(case)
        for ask in case["asks"]:
            ptype, pname, host, op, rtype, name = ask["q"]
            principal = KafkaPrincipal(ptype, pname)
            action = Action.on(AclOperation[op], ResourceType[rtype], name)
            kafka = ask["kafka"][version]
            if kafka == "ERROR:IllegalArgumentException":
                # Kafka 4.x builds Set.of(principal, User:*), which refuses a duplicate.
                assert version == "4.4.0" and str(principal) == "User:*"
                continue
            decision = authz.authorize(principal, host, action)
            assert expected(decision, acls) == kafka, (case, ask)


@pytest.mark.parametrize("version", ["3.9.2", "4.4.0"])
def test_authorize_by_resource_type_is_kafkas(version: str) -> None:
    compared = 0
    for case in CASES:
        authz = authorizer(case)
        for question in case["by_type"]:
            ptype, pname, host, op, rtype = question["q"]
            answer = authz.authorize_by_resource_type(
                KafkaPrincipal(ptype, pname), host, AclOperation[op], ResourceType[rtype]
            )
            assert ("ALLOWED" if answer.allowed else "DENIED") == question["kafka"][version]
            compared += 1
    assert compared == 800


def acl_filter(fields: list[str | None]) -> AclBindingFilter:
    rtype, name, pattern, principal, host, op, permission = fields
    assert rtype is not None and pattern is not None and op is not None
    assert permission is not None
    return AclBindingFilter(
        ResourcePatternFilter(ResourceType[rtype], name, PatternType[pattern]),
        AccessControlEntryFilter(principal, host, AclOperation[op], AclPermissionType[permission]),
    )


def test_filter_matching_is_kafkas() -> None:
    matched = 0
    for case in CASES:
        acls = [binding(fields) for fields in case["acls"]]
        for f in case["filters"]:
            found = "".join("1" if acl_filter(f["q"]).matches(b) else "0" for b in acls) or "-"
            assert found == f["kafka"]["3.9.2"] == f["kafka"]["4.4.0"], (case["acls"], f)
            matched += found.count("1")
    assert matched > 500


def test_to_strings_are_kafkas() -> None:
    printed = 0
    for case in CASES:
        if case["text"] is None:
            continue
        ours = [text for fields in case["acls"] for text in _texts(binding(fields))]
        ours.append(str(AclBindingFilter.ANY))
        assert ours == case["text"]["3.9.2"] == case["text"]["4.4.0"]
        printed += len(ours)
    assert printed > 100


def _texts(b: AclBinding) -> list[str]:
    return [str(b), str(b.to_filter())]


def test_acls_are_listed_in_kafkas_order() -> None:
    listed = 0
    for case in CASES:
        acls = [binding(fields) for fields in case["acls"]]
        expected = [acls[i] for i in case["order"]["3.9.2"]]
        assert case["order"]["4.4.0"] == case["order"]["3.9.2"]
        assert list(authorizer(case).acls()) == expected
        listed += len(expected)
    assert listed > 2000
