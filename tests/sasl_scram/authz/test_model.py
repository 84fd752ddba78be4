"""The ACL model: Kafka's enumerations, constructors, ``matches`` and ``toString``s."""

from __future__ import annotations

import pytest

from sasl_scram.authz import AccessControlEntry
from sasl_scram.authz import AccessControlEntryFilter
from sasl_scram.authz import AclBinding
from sasl_scram.authz import AclBindingFilter
from sasl_scram.authz import AclOperation
from sasl_scram.authz import AclPermissionType
from sasl_scram.authz import AuthzError
from sasl_scram.authz import PatternType
from sasl_scram.authz import ResourcePattern
from sasl_scram.authz import ResourcePatternFilter
from sasl_scram.authz import ResourceType
from sasl_scram.authz import acl_line
from sasl_scram.authz import acls_listing
from tests.sasl_scram.authz.helpers import GROUP
from tests.sasl_scram.authz.helpers import LITERAL
from tests.sasl_scram.authz.helpers import PREFIXED
from tests.sasl_scram.authz.helpers import TOPIC
from tests.sasl_scram.authz.helpers import Op
from tests.sasl_scram.authz.helpers import allow
from tests.sasl_scram.authz.helpers import deny


def test_the_wire_codes_are_kafkas() -> None:
    assert {t.name: t.code for t in ResourceType} == {
        "UNKNOWN": 0,
        "ANY": 1,
        "TOPIC": 2,
        "GROUP": 3,
        "CLUSTER": 4,
        "TRANSACTIONAL_ID": 5,
        "DELEGATION_TOKEN": 6,
        "USER": 7,
    }
    assert {p.name: p.code for p in PatternType} == {
        "UNKNOWN": 0,
        "ANY": 1,
        "MATCH": 2,
        "LITERAL": 3,
        "PREFIXED": 4,
    }
    assert [o.name for o in AclOperation] == [
        "UNKNOWN",
        "ANY",
        "ALL",
        "READ",
        "WRITE",
        "CREATE",
        "DELETE",
        "ALTER",
        "DESCRIBE",
        "CLUSTER_ACTION",
        "DESCRIBE_CONFIGS",
        "ALTER_CONFIGS",
        "IDEMPOTENT_WRITE",
        "CREATE_TOKENS",
        "DESCRIBE_TOKENS",
    ]
    assert [o.code for o in AclOperation] == list(range(15))
    assert {p.name: p.code for p in AclPermissionType} == {
        "UNKNOWN": 0,
        "ANY": 1,
        "DENY": 2,
        "ALLOW": 3,
    }


def test_names_as_kafka_prints_and_reads_them() -> None:
    # toString is the constant; paths and JSON use SecurityUtils' PascalCase.
    assert (
        str(ResourceType.TRANSACTIONAL_ID)
        == f"{ResourceType.TRANSACTIONAL_ID}"
        == ("TRANSACTIONAL_ID")
    )
    assert ResourceType.TRANSACTIONAL_ID.display_name == "TransactionalId"
    assert AclOperation.IDEMPOTENT_WRITE.display_name == "IdempotentWrite"
    assert AclPermissionType.ALLOW.display_name == "Allow"
    assert AclOperation.from_display_name("IdempotentWrite") is AclOperation.IDEMPOTENT_WRITE
    assert AclOperation.from_display_name("idempotentwrite") is AclOperation.IDEMPOTENT_WRITE
    assert AclOperation.from_display_name("IDEMPOTENT_WRITE") is AclOperation.UNKNOWN
    # fromString: the constant in any case, except PatternType's, which is exact.
    assert ResourceType.from_string("topic") is ResourceType.TOPIC
    assert AclOperation.from_string("Idempotent_Write") is AclOperation.IDEMPOTENT_WRITE
    assert PatternType.from_string("PREFIXED") is PatternType.PREFIXED
    assert PatternType.from_string("Prefixed") is PatternType.UNKNOWN
    assert ResourceType.from_code(9) is ResourceType.UNKNOWN
    assert AclOperation.from_code(3) is AclOperation.READ


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda: ResourcePattern(ResourceType.ANY, "t", LITERAL), "type must not be ANY"),
        (lambda: ResourcePattern(TOPIC, "t", PatternType.MATCH), "must not be MATCH"),
        (lambda: ResourcePattern(TOPIC, "t", PatternType.ANY), "must not be ANY"),
        (
            lambda: AccessControlEntry("User:a", "*", AclOperation.ANY, AclPermissionType.ALLOW),
            "operation must not be ANY",
        ),
        (
            lambda: AccessControlEntry("User:a", "*", Op.READ, AclPermissionType.ANY),
            "permission type must not be ANY",
        ),
    ],
)
def test_constructors_refuse_what_kafkas_refuse(make: object, problem: str) -> None:
    with pytest.raises(AuthzError, match=problem):
        make()  # type: ignore[operator]


def test_unknown_is_accepted_by_the_constructors_and_flagged() -> None:
    pattern = ResourcePattern(ResourceType.UNKNOWN, "t", LITERAL)
    entry = AccessControlEntry("User:a", "*", AclOperation.UNKNOWN, AclPermissionType.ALLOW)
    assert pattern.is_unknown and entry.is_unknown
    assert AclBinding(pattern, entry).is_unknown
    assert not allow("t", Op.READ).is_unknown


def test_to_strings_are_kafkas() -> None:
    binding = allow("t", Op.READ)
    assert (
        str(binding.pattern) == "ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)"
    )
    assert (
        str(binding.entry) == "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)"
    )
    assert str(binding) == (
        "(pattern=ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL), "
        "entry=(principal=User:alice, host=*, operation=READ, permissionType=ALLOW))"
    )
    assert str(AclBindingFilter.ANY) == (
        "(patternFilter=ResourcePattern(resourceType=ANY, name=<any>, patternType=ANY), "
        "entryFilter=(principal=<any>, host=<any>, operation=ANY, permissionType=ANY))"
    )


def test_the_kafka_acls_texts() -> None:
    binding = allow("t", Op.READ)
    assert acl_line(binding) == (
        "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW) on "
        "ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)"
    )
    listing = acls_listing(binding.pattern, [binding.entry, deny("t", Op.WRITE, "User:*").entry])
    assert listing == (
        "Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t, "
        "patternType=LITERAL)`: \n"
        " \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)\n"
        "\t(principal=User:*, host=*, operation=WRITE, permissionType=DENY) \n"
    )


STORED = {
    "literal orders": allow("orders", Op.READ),
    "literal *": allow("*", Op.READ),
    "prefixed ord": deny("ord", Op.WRITE, pattern=PREFIXED),
    "prefixed *": allow("*", Op.READ, "User:*", pattern=PREFIXED),
    "group orders": allow("orders", Op.READ, rtype=GROUP, host="10.0.0.1"),
}


def pattern_filter(rtype: ResourceType, name: str | None, pattern: PatternType) -> AclBindingFilter:
    return AclBindingFilter(
        ResourcePatternFilter(rtype, name, pattern), AccessControlEntryFilter.ANY
    )


def entry_filter(
    principal: str | None, host: str | None, op: AclOperation, permission: AclPermissionType
) -> AclBindingFilter:
    return AclBindingFilter(
        ResourcePatternFilter.ANY, AccessControlEntryFilter(principal, host, op, permission)
    )


FILTERS = {
    "ANY matches all": (AclBindingFilter.ANY, set(STORED)),
    "type TOPIC": (
        pattern_filter(TOPIC, None, PatternType.ANY),
        set(STORED) - {"group orders"},
    ),
    "ANY pattern compares the name exactly": (
        pattern_filter(ResourceType.ANY, "orders", PatternType.ANY),
        {"literal orders", "group orders"},
    ),
    "a * name finds only the * ACLs": (
        pattern_filter(TOPIC, "*", PatternType.ANY),
        {"literal *", "prefixed *"},
    ),
    "LITERAL * finds only the literal *": (pattern_filter(TOPIC, "*", LITERAL), {"literal *"}),
    "PREFIXED compares the stored prefix exactly": (
        pattern_filter(TOPIC, "orders", PREFIXED),
        set(),
    ),
    "MATCH finds what applies to a name": (
        pattern_filter(TOPIC, "orders", PatternType.MATCH),
        {"literal orders", "literal *", "prefixed ord"},
    ),
    "MATCH on *x finds the PREFIXED * and the literal *": (
        pattern_filter(TOPIC, "*x", PatternType.MATCH),
        {"literal *", "prefixed *"},
    ),
    "MATCH without a name finds all": (
        pattern_filter(ResourceType.ANY, None, PatternType.MATCH),
        set(STORED),
    ),
    "a User:* filter is not a wildcard": (
        entry_filter("User:*", None, AclOperation.ANY, AclPermissionType.ANY),
        {"prefixed *"},
    ),
    "host and permission": (
        entry_filter(None, "10.0.0.1", AclOperation.ANY, AclPermissionType.ALLOW),
        {"group orders"},
    ),
    "operation": (entry_filter(None, None, Op.WRITE, AclPermissionType.ANY), {"prefixed ord"}),
    "UNKNOWN matches nothing": (
        pattern_filter(ResourceType.UNKNOWN, None, PatternType.ANY),
        set(),
    ),
}


@pytest.mark.parametrize(("acl_filter", "found"), FILTERS.values(), ids=FILTERS.keys())
def test_filters_match_as_describe_and_delete_acls_do(
    acl_filter: AclBindingFilter, found: set[str]
) -> None:
    assert {name for name, binding in STORED.items() if acl_filter.matches(binding)} == found
