"""CreateAcls, DeleteAcls and DescribeAcls: what Kafka accepts and how it refuses the rest."""

from __future__ import annotations

import pytest

from sasl_scram.authz import AclCreation
from sasl_scram.authz import AclFilterFields
from sasl_scram.authz import Authorizer
from sasl_scram.authz import MalformedAclRequest
from sasl_scram.authz import PatternType
from sasl_scram.authz import ResourceType
from sasl_scram.authz import check_create_acls
from sasl_scram.authz import check_delete_filters
from sasl_scram.authz import check_describe_filter
from sasl_scram.kafka import ErrorCode
from tests.sasl_scram.authz.helpers import PREFIXED as PREFIXED_PATTERN
from tests.sasl_scram.authz.helpers import Op
from tests.sasl_scram.authz.helpers import allow
from tests.sasl_scram.authz.helpers import deny

# Wire codes.
TOPIC, CLUSTER, ANY, MATCH, LITERAL, PREFIXED = 2, 4, 1, 2, 3, 4
READ, ALLOW, DENY = 3, 3, 2


def creation(
    rtype: int = TOPIC,
    name: str = "t",
    pattern: int = LITERAL,
    principal: str = "User:alice",
    op: int = READ,
    permission: int = ALLOW,
) -> AclCreation:
    return AclCreation(rtype, name, pattern, principal, "*", op, permission)


INVALID = ErrorCode.INVALID_REQUEST
REFUSED_CREATIONS = {
    "CLUSTER with another name": (
        creation(CLUSTER, "c"),
        "The only valid name for the CLUSTER resource is kafka-cluster",
    ),
    "CLUSTER with an empty name": (
        creation(CLUSTER, ""),
        "The only valid name for the CLUSTER resource is kafka-cluster",
    ),
    "an empty name": (creation(name=""), "Invalid empty resource name"),
    "a resource type Kafka does not know": (creation(rtype=9), "Invalid resourceType UNKNOWN"),
    "a pattern type Kafka does not know": (creation(pattern=7), "Invalid patternType UNKNOWN"),
    "an operation Kafka does not know": (creation(op=20), "Invalid operation UNKNOWN"),
    "a permission Kafka does not know": (creation(permission=5), "Invalid permissionType UNKNOWN"),
}


@pytest.mark.parametrize(
    ("bad", "message"), REFUSED_CREATIONS.values(), ids=REFUSED_CREATIONS.keys()
)
def test_a_refused_creation_answers_invalid_request_alone(bad: AclCreation, message: str) -> None:
    good = creation(name="u", pattern=PREFIXED, op=7, permission=DENY)
    results = check_create_acls([good, bad], version=3)
    assert results[0].error is ErrorCode.NONE and results[0].message is None
    assert results[0].binding == deny("u", Op.ALTER, pattern=PREFIXED_PATTERN)
    assert (results[1].binding, results[1].error, results[1].message) == (None, INVALID, message)


def test_a_good_creation_carries_its_binding() -> None:
    (result,) = check_create_acls([creation()], version=1)
    assert result.binding == allow("t", Op.READ)


@pytest.mark.parametrize(
    "bad",
    [
        creation(rtype=ANY),
        creation(pattern=ANY),
        creation(pattern=MATCH),
        creation(op=ANY),
        creation(permission=ANY),
    ],
)
def test_a_filter_value_fails_every_creation_with_unknown_server_error(bad: AclCreation) -> None:
    # CreateAclsRequest.aclBinding's constructors throw inside the handler.
    results = check_create_acls([creation(), bad], version=3)
    assert [(r.binding, r.error, r.message) for r in results] == [
        (None, ErrorCode.UNKNOWN_SERVER_ERROR, None)
    ] * 2


@pytest.mark.parametrize(
    ("creations", "version", "problem"),
    [
        ([creation(rtype=0)], 3, "unknown elements"),
        ([creation(pattern=0)], 3, "unknown elements"),
        ([creation(op=0)], 3, "unknown elements"),
        ([creation(permission=0)], 3, "unknown elements"),
        ([creation(), creation(pattern=PREFIXED)], 0, "Version 0 only supports literal"),
    ],
)
def test_what_does_not_parse_closes_the_connection(
    creations: list[AclCreation], version: int, problem: str
) -> None:
    with pytest.raises(MalformedAclRequest, match=problem):
        check_create_acls(creations, version)


def test_zookeeper_mode_wraps_its_refusals_and_refuses_slashes_and_bad_principals() -> None:
    results = check_create_acls(
        [
            creation(name="a/b"),
            creation(rtype=9),
            creation(name="x", principal="alice"),
            creation(name="x", principal="User:bob"),
            creation(name="y"),
            creation(CLUSTER, "c"),
        ],
        version=3,
        zookeeper=True,
    )
    assert [(r.error, r.message) for r in results] == [
        (INVALID, "Failed to create ACL"),
        (INVALID, "Failed to create ACL"),
        # One node per pattern: a principal without Type: fails its neighbours too.
        (ErrorCode.UNKNOWN_SERVER_ERROR, None),
        (ErrorCode.UNKNOWN_SERVER_ERROR, None),
        (ErrorCode.NONE, None),
        (INVALID, "The only valid name for the CLUSTER resource is kafka-cluster"),
    ]
    # KRaft refuses neither: the controller checks no principal or name text.
    kraft = check_create_acls([creation(name="a/b", principal="alice")], version=3)
    assert kraft[0].error is ErrorCode.NONE


def fields(
    rtype: int = ANY, pattern: int = ANY, op: int = ANY, permission: int = ANY
) -> AclFilterFields:
    return AclFilterFields(rtype, None, pattern, None, None, op, permission)


def test_delete_filters_refused_by_the_controller() -> None:
    results = check_delete_filters(
        [fields(), fields(rtype=9), fields(pattern=7), fields(op=20), fields(permission=5)],
        version=2,
    )
    assert [(r.error, r.message) for r in results] == [
        (ErrorCode.NONE, None),
        (INVALID, "Unknown patternFilter."),
        (INVALID, "Unknown patternFilter."),
        (INVALID, "Unknown entryFilter."),
        (INVALID, "Unknown entryFilter."),
    ]
    zookeeper = check_delete_filters([fields(rtype=9)], version=2, zookeeper=True)
    assert zookeeper[0].error is ErrorCode.NONE
    assert not Authorizer([allow("t", Op.READ)]).acls(zookeeper[0].filter)


def test_version_0_reads_an_any_pattern_filter_as_literal() -> None:
    (result,) = check_delete_filters([fields()], version=0)
    assert result.filter.pattern_filter.pattern_type is PatternType.LITERAL
    described = check_describe_filter(fields(rtype=TOPIC), version=0)
    assert described.pattern_filter.pattern_type is PatternType.LITERAL
    assert described.pattern_filter.resource_type is ResourceType.TOPIC
    with pytest.raises(MalformedAclRequest, match="version 0 supports only LITERAL and ANY"):
        check_describe_filter(fields(pattern=MATCH), version=0)


@pytest.mark.parametrize(
    "bad", [fields(rtype=0), fields(pattern=0), fields(op=0), fields(permission=0)]
)
def test_a_filter_with_a_code_0_closes_the_connection(bad: AclFilterFields) -> None:
    with pytest.raises(MalformedAclRequest, match="UNKNOWN elements"):
        check_describe_filter(bad, version=1)
    with pytest.raises(MalformedAclRequest, match="UNKNOWN elements"):
        check_delete_filters([fields(), bad], version=1)
