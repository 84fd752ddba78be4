"""The Authorizer beyond one decision: changes, settings, authorizeByResourceType,
KIP-430's bit fields, audit lines and host addresses."""

from __future__ import annotations

import pytest

from sasl_scram.authz import AclBinding
from sasl_scram.authz import AclBindingFilter
from sasl_scram.authz import AclOperation
from sasl_scram.authz import Action
from sasl_scram.authz import AuditLevel
from sasl_scram.authz import Authorizer
from sasl_scram.authz import AuthzError
from sasl_scram.authz import Decision
from sasl_scram.authz import PatternType
from sasl_scram.authz import ResourcePattern
from sasl_scram.authz import ResourceType
from sasl_scram.authz import RuleKind
from sasl_scram.authz import audit_level
from sasl_scram.authz import audit_message
from sasl_scram.authz import authorization_error
from sasl_scram.authz import java_host_address
from sasl_scram.authz import parse_super_users
from sasl_scram.authz import supported_operations
from sasl_scram.config import KafkaPrincipal
from sasl_scram.kafka import ErrorCode
from tests.sasl_scram.authz.helpers import CLUSTER
from tests.sasl_scram.authz.helpers import GROUP
from tests.sasl_scram.authz.helpers import PREFIXED
from tests.sasl_scram.authz.helpers import TOPIC
from tests.sasl_scram.authz.helpers import Op
from tests.sasl_scram.authz.helpers import allow
from tests.sasl_scram.authz.helpers import ask
from tests.sasl_scram.authz.helpers import deny

ALICE = KafkaPrincipal.user("alice")
HOST = "10.0.0.1"


def test_changes_make_new_authorizers_and_leave_the_old_one_alone() -> None:
    empty = Authorizer()
    one = empty.add([allow("t", Op.READ)])
    assert (len(empty), len(one)) == (0, 1)
    assert not empty.authorize(ALICE, HOST, ask(Op.READ, "t")).allowed
    assert one.authorize(ALICE, HOST, ask(Op.READ, "t")).allowed
    # An ACL already stored is stored once; removing one that is not there is no change.
    assert one.add([allow("t", Op.READ)]).bindings == one.bindings
    assert one.remove([allow("u", Op.READ)]).bindings == one.bindings
    assert len(one.remove([allow("t", Op.READ)])) == 0
    assert one.acls() == (allow("t", Op.READ),)


def test_delete_lists_an_acl_under_each_filter_that_matches_it() -> None:
    authz = Authorizer(
        [allow("t", Op.READ), allow("u", Op.WRITE), allow("g", Op.READ, rtype=GROUP)]
    )
    topics = AclBindingFilter(
        ResourcePattern(TOPIC, "t", PatternType.LITERAL)
        .to_filter()
        .__class__(TOPIC, None, PatternType.ANY),
        AclBindingFilter.ANY.entry_filter,
    )
    reads = allow("t", Op.READ).to_filter()
    after, deleted = authz.delete([topics, reads])
    assert deleted == ((allow("u", Op.WRITE), allow("t", Op.READ)), (allow("t", Op.READ),))
    assert after.acls() == (allow("g", Op.READ, rtype=GROUP),)


def test_acls_come_in_kafkas_order() -> None:
    acls = [
        allow("a", Op.READ),
        allow("b", Op.WRITE),
        allow("b", Op.READ),
        allow("b", Op.READ, pattern=PREFIXED),
        allow("a", Op.READ, rtype=GROUP),
    ]
    # Type, then name in reverse, then pattern type, then operation.
    assert Authorizer(acls).acls() == (acls[2], acls[1], acls[3], acls[0], acls[4])


def test_settings() -> None:
    authz = Authorizer([deny("t", Op.ALL, "User:*")])
    boss = authz.with_settings(super_users=["User:alice"])
    assert boss.authorize(ALICE, HOST, ask(Op.READ, "t")).rule is RuleKind.SUPER_USER
    assert not authz.authorize(ALICE, HOST, ask(Op.READ, "t")).allowed
    open_by_default = authz.with_settings(allow_everyone_if_no_acl_found=True)
    assert open_by_default.authorize(ALICE, HOST, ask(Op.READ, "u")).allowed
    assert open_by_default.super_users == frozenset() and open_by_default.bindings == authz.bindings
    assert parse_super_users(" User:a ; ;User:b;") == {"User:a", "User:b"}
    with pytest.raises(AuthzError, match="'alice' is not Type:Name"):
        parse_super_users("User:a;alice")
    with pytest.raises(AuthzError, match="is not Type:Name"):
        Authorizer(super_users=["admin"])


@pytest.mark.parametrize(
    ("binding", "problem"),
    [
        (allow("t", Op.READ, "alice"), "no ':' between type and name"),
        (allow("t", Op.UNKNOWN), "unknown elements"),
        (allow("t", Op.READ, rtype=ResourceType.UNKNOWN), "unknown elements"),
    ],
)
def test_acls_no_authorizer_can_hold_are_refused(binding: AclBinding, problem: str) -> None:
    with pytest.raises(AuthzError, match=problem):
        Authorizer([binding])
    with pytest.raises(AuthzError, match=problem):
        Authorizer().add([binding])


def test_an_action_is_on_a_literal_resource() -> None:
    with pytest.raises(AuthzError, match=r"Only literal resources are supported\. Got: PREFIXED"):
        Action(Op.READ, ResourcePattern(TOPIC, "t", PatternType.PREFIXED))


W, D = Op.WRITE, Op.DESCRIBE
BY_TYPE = {
    # (ACLs, allow.everyone, the operation asked, StandardAuthorizer's answer,
    # 3.9 AclAuthorizer's answer)
    "no ACLs": ([], False, W, False, False),
    "no ACLs, allow.everyone": ([], True, W, True, True),
    "an ALLOW on one topic": ([allow("t", W)], False, W, True, True),
    "its literal DENY": ([allow("t", W), deny("t", W)], False, W, False, False),
    "a literal DENY on another name changes nothing": (
        [allow("t", W), deny("u", W)],
        False,
        W,
        True,
        True,
    ),
    "an ALLOW on a prefix under a denied prefix": (
        [allow("ab", W, pattern=PREFIXED), deny("a", W, pattern=PREFIXED)],
        False,
        W,
        False,
        False,
    ),
    "ALLOW on *": ([allow("*", W, "User:*")], False, W, True, True),
    "DENY on * wins": ([allow("t", W), deny("*", Op.ALL)], True, W, False, False),
    "ALL counts": ([allow("t", Op.ALL)], False, W, True, True),
    "implied operations do not count": ([allow("t", Op.READ)], False, D, False, False),
    "allow.everyone: 3.9 allows whatever the ACLs": (
        [allow("hardcode", Op.READ, "User:bob")],
        True,
        W,
        False,
        True,
    ),
    "an implied ALLOW on the name hardcode answers the default's probe": (
        [allow("hardcode", Op.READ)],
        False,
        D,
        True,
        False,
    ),
}


@pytest.mark.parametrize(
    ("acls", "everyone", "op", "standard", "zookeeper"), BY_TYPE.values(), ids=BY_TYPE.keys()
)
def test_authorize_by_resource_type(
    acls: list[AclBinding], everyone: bool, op: AclOperation, standard: bool, zookeeper: bool
) -> None:
    authz = Authorizer(acls, allow_everyone_if_no_acl_found=everyone)
    answer = authz.authorize_by_resource_type(ALICE, HOST, op, TOPIC)
    assert answer.allowed is standard
    assert answer.probe == Action.on(op, TOPIC, "hardcode", reference_count=0, log_if_denied=False)
    assert authz.authorize_by_resource_type_zookeeper(ALICE, HOST, op, TOPIC) is zookeeper


def test_authorize_by_resource_type_refuses_filter_values() -> None:
    authz = Authorizer()
    for op, rtype, problem in [
        (Op.WRITE, ResourceType.ANY, "non-filter resource type"),
        (Op.WRITE, ResourceType.UNKNOWN, "Unknown resource type"),
        (Op.ANY, TOPIC, "non-filter operation type"),
        (Op.UNKNOWN, TOPIC, "Unknown operation type"),
    ]:
        with pytest.raises(AuthzError, match=problem):
            authz.authorize_by_resource_type(ALICE, HOST, op, rtype)
    assert Authorizer(super_users=["User:alice"]).authorize_by_resource_type_zookeeper(
        ALICE, HOST, Op.WRITE, TOPIC
    )


def test_authorized_operations_bit_fields() -> None:
    authz = Authorizer(
        [
            allow("t", Op.READ),
            allow("g", Op.ALL, rtype=GROUP),
            allow("kafka-cluster", Op.ALTER, rtype=CLUSTER),
        ]
    )
    assert authz.authorized_operations(ALICE, HOST, TOPIC, "t") == 0x108  # READ + DESCRIBE
    group_4x = authz.authorized_operations(ALICE, HOST, GROUP, "g")
    group_39 = authz.authorized_operations(ALICE, HOST, GROUP, "g", kafka_3_9=True)
    assert group_4x == sum(1 << op for op in (3, 8, 6, 10, 11))
    assert group_39 == sum(1 << op for op in (3, 8, 6))
    assert authz.authorized_operations(ALICE, HOST, CLUSTER, "kafka-cluster") == (1 << 7) | (1 << 8)
    assert authz.authorized_operations(ALICE, HOST, TOPIC, "other") == 0
    with pytest.raises(AuthzError, match="not a concrete resource type"):
        supported_operations(ResourceType.ANY)


def test_authorization_errors_per_type() -> None:
    assert authorization_error(TOPIC) is ErrorCode.TOPIC_AUTHORIZATION_FAILED
    assert authorization_error(GROUP).value == 30
    assert authorization_error(ResourceType.TRANSACTIONAL_ID).value == 53
    assert authorization_error(ResourceType.DELEGATION_TOKEN).value == 65
    with pytest.raises(AuthzError, match="no authorization error for USER"):
        authorization_error(ResourceType.USER)


def test_audit_lines_as_kafka_writes_them() -> None:
    binding = allow("*", Op.READ, rtype=GROUP)
    action = ask(Op.READ, "*", GROUP)
    decision = Authorizer([binding]).authorize(ALICE, HOST, action)
    # What Kafka 3.9.2 and 4.4.0 wrote on kafka.authorizer.logger for this action.
    acl = (
        "resourceType=GROUP, resourceName=*, patternType=LITERAL, principal=User:alice, "
        "host=*, operation=READ, permissionType=ALLOW"
    )
    line = (
        "Principal = User:alice is Allowed operation = READ from host = 10.0.0.1 on resource = "
        "Group:LITERAL:* for request = Metadata with resourceRefCount = 1 based on rule "
    )
    assert audit_message(ALICE, HOST, action, decision, "Metadata") == (
        f"{line}MatchingAcl(acl=StandardAcl({acl}))"
    )
    assert audit_message(ALICE, HOST, action, decision, "Metadata", record_style=True) == (
        f"{line}MatchingAcl(acl=StandardAcl[{acl}])"
    )
    assert Decision(False, RuleKind.NO_MATCHING_ACL).rule_text() == "DefaultDeny"
    assert Decision(True, RuleKind.NO_ACL).rule_text() == "DefaultAllow"
    assert Decision(True, RuleKind.SUPER_USER).rule_text() == "SuperUser"


def test_audit_levels() -> None:
    allowed, denied = Decision(True, RuleKind.NO_ACL), Decision(False, RuleKind.NO_ACL)
    quiet = Action.on(Op.READ, TOPIC, "t", log_if_allowed=False, log_if_denied=False)
    loud = Action.on(Op.READ, TOPIC, "t")
    assert audit_level(loud, allowed) is AuditLevel.DEBUG
    assert audit_level(loud, denied) is AuditLevel.INFO
    assert audit_level(quiet, allowed) is audit_level(quiet, denied) is AuditLevel.TRACE


@pytest.mark.parametrize(
    ("address", "java"),
    [
        ("10.0.0.5", "10.0.0.5"),
        ("::1", "0:0:0:0:0:0:0:1"),
        ("::ffff:10.0.0.1", "10.0.0.1"),
        ("fe80::1%1", "fe80:0:0:0:0:0:0:1%1"),
        ("2001:DB8::FF00:42:8329", "2001:db8:0:0:0:ff00:42:8329"),
    ],
)
def test_host_addresses_as_java_prints_them(address: str, java: str) -> None:
    assert java_host_address(address) == java


def test_a_host_name_is_not_an_address() -> None:
    with pytest.raises(AuthzError, match="is not an IP address"):
        java_host_address("broker.example")
