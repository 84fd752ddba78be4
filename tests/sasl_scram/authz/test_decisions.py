"""Every rule of StandardAuthorizer's one decision, one row each (``StandardAuthorizerData``).

A row: the ACLs, the settings, who asks from where, the action, then the answer,
the rule that decided and which of the row's ACLs it names (``None``: none).
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

import pytest

from sasl_scram.authz import AclBinding
from sasl_scram.authz import AclOperation
from sasl_scram.authz import Action
from sasl_scram.authz import Authorizer
from sasl_scram.authz import RuleKind
from sasl_scram.config import KafkaPrincipal
from tests.sasl_scram.authz.helpers import CLUSTER
from tests.sasl_scram.authz.helpers import GROUP
from tests.sasl_scram.authz.helpers import PREFIXED
from tests.sasl_scram.authz.helpers import Op
from tests.sasl_scram.authz.helpers import allow
from tests.sasl_scram.authz.helpers import ask
from tests.sasl_scram.authz.helpers import deny

ALICE = "User:alice"
HOST = "10.0.0.5"
ACL = RuleKind.MATCHING_ACL
NO_ACL = RuleKind.NO_ACL
NO_MATCH = RuleKind.NO_MATCHING_ACL


@dataclass(frozen=True)
class Row:
    acls: list[AclBinding]
    action: Action
    allowed: bool
    rule: RuleKind
    named: int | None = None
    principal: str = ALICE
    host: str = HOST
    allow_everyone: bool = False
    super_users: list[str] = field(default_factory=list)


ROWS = {
    # allow.everyone.if.no.acl.found decides only where no ACL names the resource.
    "no ACLs: denied by default": Row([], ask(Op.READ, "t"), False, NO_ACL),
    "no ACLs, allow.everyone: allowed": Row(
        [], ask(Op.READ, "t"), True, NO_ACL, allow_everyone=True
    ),
    "an ACL on another name only: default": Row(
        [allow("u", Op.READ)], ask(Op.READ, "t"), False, NO_ACL
    ),
    "an ACL on another name, allow.everyone": Row(
        [allow("u", Op.READ)], ask(Op.READ, "t"), True, NO_ACL, allow_everyone=True
    ),
    "allow.everyone: one ALLOW for bob shuts alice out": Row(
        [allow("t", Op.READ, "User:bob")], ask(Op.READ, "t"), False, NO_MATCH, allow_everyone=True
    ),
    "allow.everyone: alice's own WRITE shuts her out of READ": Row(
        [allow("t", Op.WRITE)], ask(Op.READ, "t"), False, NO_MATCH, allow_everyone=True
    ),
    "allow.everyone: a prefix ACL for bob counts": Row(
        [allow("t", Op.READ, "User:bob", pattern=PREFIXED)],
        ask(Op.READ, "topic"),
        False,
        NO_MATCH,
        allow_everyone=True,
    ),
    "allow.everyone: a * ACL for bob counts": Row(
        [allow("*", Op.READ, "User:bob")], ask(Op.READ, "t"), False, NO_MATCH, allow_everyone=True
    ),
    "allow.everyone: a DENY for bob on a prefix counts": Row(
        [deny("t", Op.ALL, "User:bob", pattern=PREFIXED)],
        ask(Op.READ, "t1"),
        False,
        NO_MATCH,
        allow_everyone=True,
    ),
    # Literal, prefixed and * patterns.
    "literal ALLOW": Row([allow("t", Op.READ)], ask(Op.READ, "t"), True, ACL, 0),
    "names compare exactly": Row([allow("Orders", Op.READ)], ask(Op.READ, "orders"), False, NO_ACL),
    "a literal name that is a prefix does not match": Row(
        [allow("ord", Op.READ)], ask(Op.READ, "orders"), False, NO_ACL
    ),
    "prefixed ALLOW": Row(
        [allow("ord", Op.READ, pattern=PREFIXED)], ask(Op.READ, "orders"), True, ACL, 0
    ),
    "a prefix equal to the name matches": Row(
        [allow("orders", Op.READ, pattern=PREFIXED)], ask(Op.READ, "orders"), True, ACL, 0
    ),
    "a prefix longer than the name does not": Row(
        [allow("orders-x", Op.READ, pattern=PREFIXED)], ask(Op.READ, "orders"), False, NO_ACL
    ),
    "DENY on a prefix beats ALLOW on the literal": Row(
        [allow("orders", Op.READ), deny("ord", Op.READ, pattern=PREFIXED)],
        ask(Op.READ, "orders"),
        False,
        ACL,
        1,
    ),
    "DENY on the literal beats ALLOW on a prefix": Row(
        [allow("ord", Op.READ, pattern=PREFIXED), deny("orders", Op.READ)],
        ask(Op.READ, "orders"),
        False,
        ACL,
        1,
    ),
    "* literal ALLOW applies to every name": Row(
        [allow("*", Op.READ)], ask(Op.READ, "x"), True, ACL, 0
    ),
    "DENY on * literal beats ALLOW on the literal": Row(
        [allow("t", Op.READ), deny("*", Op.READ)], ask(Op.READ, "t"), False, ACL, 1
    ),
    "PREFIXED * is the text *, not a wildcard": Row(
        [allow("*", Op.READ, pattern=PREFIXED)], ask(Op.READ, "orders"), False, NO_ACL
    ),
    "PREFIXED * matches a group named *x": Row(
        [allow("*", Op.READ, rtype=GROUP, pattern=PREFIXED)],
        ask(Op.READ, "*x", GROUP),
        True,
        ACL,
        0,
    ),
    "* literal does not apply to a group named *x (Kafka's walk)": Row(
        [allow("*", Op.READ, rtype=GROUP)], ask(Op.READ, "*x", GROUP), False, NO_ACL
    ),
    "* literal applies to the group named *": Row(
        [allow("*", Op.READ, rtype=GROUP)], ask(Op.READ, "*", GROUP), True, ACL, 0
    ),
    "types do not mix: a GROUP ACL is not a TOPIC ACL": Row(
        [allow("orders", Op.READ, rtype=GROUP)], ask(Op.READ, "orders"), False, NO_ACL
    ),
    # Principals.
    "User:* ALLOW covers alice": Row(
        [allow("t", Op.READ, "User:*")], ask(Op.READ, "t"), True, ACL, 0
    ),
    "User:* DENY beats alice's ALLOW": Row(
        [allow("t", Op.READ), deny("t", Op.READ, "User:*")], ask(Op.READ, "t"), False, ACL, 1
    ),
    "Group:* is no wildcard": Row(
        [allow("t", Op.READ, "Group:*")], ask(Op.READ, "t"), False, NO_MATCH, principal="Group:devs"
    ),
    "the principal type counts": Row(
        [allow("t", Op.READ, "Group:alice")], ask(Op.READ, "t"), False, NO_MATCH
    ),
    "principals are case-sensitive": Row(
        [allow("t", Op.READ, "User:Alice")], ask(Op.READ, "t"), False, NO_MATCH
    ),
    "ANONYMOUS is denied by default": Row(
        [], ask(Op.READ, "t"), False, NO_ACL, principal="User:ANONYMOUS"
    ),
    "ANONYMOUS matches User:*": Row(
        [allow("t", Op.READ, "User:*")], ask(Op.READ, "t"), True, ACL, 0, principal="User:ANONYMOUS"
    ),
    # Hosts.
    "the exact host matches": Row(
        [allow("t", Op.READ, host=HOST)], ask(Op.READ, "t"), True, ACL, 0
    ),
    "another host does not": Row(
        [allow("t", Op.READ, host="10.0.0.6")], ask(Op.READ, "t"), False, NO_MATCH
    ),
    "a DENY for another host does not deny": Row(
        [allow("t", Op.READ), deny("t", Op.READ, host="10.0.0.9")], ask(Op.READ, "t"), True, ACL, 0
    ),
    "an IPv6 host must be written as Java prints it": Row(
        [allow("t", Op.READ, host="::1")],
        ask(Op.READ, "t"),
        False,
        NO_MATCH,
        host="0:0:0:0:0:0:0:1",
    ),
    # Operations: ALL, and the ones an ALLOW implies.
    "READ implies DESCRIBE": Row([allow("t", Op.READ)], ask(Op.DESCRIBE, "t"), True, ACL, 0),
    "WRITE implies DESCRIBE": Row([allow("t", Op.WRITE)], ask(Op.DESCRIBE, "t"), True, ACL, 0),
    "DELETE implies DESCRIBE": Row([allow("t", Op.DELETE)], ask(Op.DESCRIBE, "t"), True, ACL, 0),
    "ALTER implies DESCRIBE": Row([allow("t", Op.ALTER)], ask(Op.DESCRIBE, "t"), True, ACL, 0),
    "CREATE does not imply DESCRIBE": Row(
        [allow("t", Op.CREATE)], ask(Op.DESCRIBE, "t"), False, NO_MATCH
    ),
    "DESCRIBE does not imply READ": Row(
        [allow("t", Op.DESCRIBE)], ask(Op.READ, "t"), False, NO_MATCH
    ),
    "ALTER_CONFIGS implies DESCRIBE_CONFIGS": Row(
        [allow("t", Op.ALTER_CONFIGS)], ask(Op.DESCRIBE_CONFIGS, "t"), True, ACL, 0
    ),
    "DESCRIBE_CONFIGS does not imply ALTER_CONFIGS": Row(
        [allow("t", Op.DESCRIBE_CONFIGS)], ask(Op.ALTER_CONFIGS, "t"), False, NO_MATCH
    ),
    "ALTER_CONFIGS does not imply DESCRIBE": Row(
        [allow("t", Op.ALTER_CONFIGS)], ask(Op.DESCRIBE, "t"), False, NO_MATCH
    ),
    "DENY READ does not deny the DESCRIBE READ implies": Row(
        [allow("t", Op.READ), deny("t", Op.READ)], ask(Op.DESCRIBE, "t"), True, ACL, 0
    ),
    "DENY ALTER_CONFIGS does not deny DESCRIBE_CONFIGS": Row(
        [allow("t", Op.ALTER_CONFIGS), deny("t", Op.ALTER_CONFIGS)],
        ask(Op.DESCRIBE_CONFIGS, "t"),
        True,
        ACL,
        0,
    ),
    "DENY ALL denies DESCRIBE": Row(
        [allow("t", Op.READ), deny("t", Op.ALL)], ask(Op.DESCRIBE, "t"), False, ACL, 1
    ),
    "ALLOW ALL grants every operation": Row(
        [allow("kafka-cluster", Op.ALL, rtype=CLUSTER)],
        ask(Op.CLUSTER_ACTION, "kafka-cluster", CLUSTER),
        True,
        ACL,
        0,
    ),
    "IDEMPOTENT_WRITE on the cluster": Row(
        [allow("kafka-cluster", Op.IDEMPOTENT_WRITE, rtype=CLUSTER)],
        ask(Op.IDEMPOTENT_WRITE, "kafka-cluster", CLUSTER),
        True,
        ACL,
        0,
    ),
    # Super users.
    "a super user is allowed despite a DENY": Row(
        [deny("t", Op.ALL, "User:*")],
        ask(Op.READ, "t"),
        True,
        RuleKind.SUPER_USER,
        super_users=[ALICE],
    ),
    "super users match exactly (case)": Row(
        [], ask(Op.READ, "t"), False, NO_ACL, super_users=["User:Alice"]
    ),
    "super users match Type:Name (type)": Row(
        [], ask(Op.READ, "t"), False, NO_ACL, principal="Group:alice", super_users=[ALICE]
    ),
    # Which ACL is named: the first DENY met, else the last ALLOW, in Kafka's walk.
    "of a literal and a * ALLOW, * (met last) is named": Row(
        [allow("t", Op.READ), allow("*", Op.READ)], ask(Op.READ, "t"), True, ACL, 1
    ),
    "on the name *, of a LITERAL and a PREFIXED * ALLOW, the PREFIXED (met last) is named": Row(
        [allow("*", Op.READ, pattern=PREFIXED), allow("*", Op.READ)],
        ask(Op.READ, "*"),
        True,
        ACL,
        0,
    ),
    "on the name *, of a LITERAL and a PREFIXED * DENY, the LITERAL (met first) is named": Row(
        [deny("*", Op.READ, pattern=PREFIXED), deny("*", Op.READ)],
        ask(Op.READ, "*"),
        False,
        ACL,
        1,
    ),
    "of a literal and a prefix DENY, the literal (met first) is named": Row(
        [deny("ord", Op.READ, pattern=PREFIXED), deny("orders", Op.READ)],
        ask(Op.READ, "orders"),
        False,
        ACL,
        1,
    ),
}


@pytest.mark.parametrize("row", ROWS.values(), ids=ROWS.keys())
def test_one_decision(row: Row) -> None:
    authorizer = Authorizer(
        row.acls, super_users=row.super_users, allow_everyone_if_no_acl_found=row.allow_everyone
    )
    principal = KafkaPrincipal.parse(row.principal)
    decision = authorizer.authorize(principal, row.host, row.action)
    assert (decision.allowed, decision.rule) == (row.allowed, row.rule)
    assert decision.acl == (None if row.named is None else row.acls[row.named])


def test_the_table_covers_every_rule_kind_and_enough_rows() -> None:
    assert len(ROWS) >= 40
    assert {row.rule for row in ROWS.values()} == set(RuleKind)


@pytest.mark.parametrize("op", [Op.READ, Op.WRITE, Op.DELETE, Op.ALTER, Op.DESCRIBE])
def test_each_operation_that_implies_describe_allows_it(op: AclOperation) -> None:
    authorizer = Authorizer([allow("t", op)])
    decision = authorizer.authorize(KafkaPrincipal.user("alice"), HOST, ask(Op.DESCRIBE, "t"))
    assert decision.allowed


@pytest.mark.parametrize(
    "op", [o for o in AclOperation if o not in (Op.UNKNOWN, Op.ANY, Op.ALL, Op.DESCRIBE)]
)
def test_a_deny_of_one_operation_never_denies_describe(op: AclOperation) -> None:
    authorizer = Authorizer([allow("t", Op.DESCRIBE), deny("t", op)])
    decision = authorizer.authorize(KafkaPrincipal.user("alice"), HOST, ask(Op.DESCRIBE, "t"))
    assert decision.allowed
