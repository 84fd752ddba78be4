"""Properties of the decisions and formats, over random ACL sets.

Resource names are names as clients use them, from a small alphabet (``a``,
``b``, ``-``) so that literals and prefixes meet, with the wildcard ``*``.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sasl_scram.authz import AccessControlEntry
from sasl_scram.authz import AclBinding
from sasl_scram.authz import AclBindingFilter
from sasl_scram.authz import AclPermissionType
from sasl_scram.authz import Action
from sasl_scram.authz import Authorizer
from sasl_scram.authz import PatternType
from sasl_scram.authz import ResourcePattern
from sasl_scram.authz import ResourcePatternFilter
from sasl_scram.authz import ResourceType
from sasl_scram.authz import change_node
from sasl_scram.authz import decode_acl_node
from sasl_scram.authz import decode_change
from sasl_scram.authz import encode_acl_node
from sasl_scram.config import KafkaPrincipal
from tests.sasl_scram.authz.helpers import ALLOW
from tests.sasl_scram.authz.helpers import DENY
from tests.sasl_scram.authz.helpers import GROUP
from tests.sasl_scram.authz.helpers import LITERAL
from tests.sasl_scram.authz.helpers import PREFIXED
from tests.sasl_scram.authz.helpers import TOPIC
from tests.sasl_scram.authz.helpers import Op
from tests.sasl_scram.authz.helpers import acl
from tests.sasl_scram.authz.reference import reference_decision

# Half the time one of a few names, so that ACLs and questions often name the same.
NAMES = st.sampled_from(["*", "a", "ab", "a-b"]) | st.text(alphabet="ab-*", min_size=1, max_size=3)
OPERATIONS = st.sampled_from(
    [
        Op.ALL,
        Op.READ,
        Op.WRITE,
        Op.DELETE,
        Op.ALTER,
        Op.DESCRIBE,
        Op.DESCRIBE_CONFIGS,
        Op.ALTER_CONFIGS,
        Op.CREATE,
    ]
)
BINDINGS = st.builds(
    acl,
    st.sampled_from([ALLOW, DENY]),
    NAMES,
    OPERATIONS,
    st.sampled_from(["User:alice", "User:bob", "User:*", "Group:alice"]),
    host=st.sampled_from(["*", "10.0.0.1", "10.0.0.2"]),
    rtype=st.sampled_from([TOPIC, GROUP]),
    pattern=st.sampled_from([LITERAL, PREFIXED]),
)
ACL_SETS = st.lists(BINDINGS, max_size=10)
PRINCIPALS = st.sampled_from(
    [KafkaPrincipal.user("alice"), KafkaPrincipal.user("bob"), KafkaPrincipal("Group", "alice")]
)
HOSTS = st.sampled_from(["10.0.0.1", "10.0.0.2"])
ACTIONS = st.builds(
    Action.on,
    OPERATIONS.filter(lambda op: op is not Op.ALL),
    st.sampled_from([TOPIC, GROUP]),
    NAMES,
)


@given(ACL_SETS, PRINCIPALS | st.just(KafkaPrincipal.user("*")), HOSTS, ACTIONS, st.booleans())
def test_the_index_decides_and_names_the_acl_as_the_reference(
    acls: list[AclBinding],
    principal: KafkaPrincipal,
    host: str,
    action: Action,
    everyone: bool,
) -> None:
    authz = Authorizer(acls, allow_everyone_if_no_acl_found=everyone)
    rtype = action.resource.resource_type
    of_type = authz.acls(
        AclBindingFilter(
            ResourcePatternFilter(rtype, None, PatternType.ANY), AclBindingFilter.ANY.entry_filter
        )
    )
    expected = reference_decision(
        of_type, principal, host, action, allow_everyone_if_no_acl_found=everyone
    )
    assert authz.authorize(principal, host, action) == expected


# ACLs that all may answer alice's READ from 10.0.0.1, on a few names, so that several
# match at once and which one is named is what is tested.
FEW_NAMES = st.sampled_from(["*", "*a", "a", "ab", "a-"])
MATCHING = st.builds(
    acl,
    st.sampled_from([ALLOW, ALLOW, DENY]),
    FEW_NAMES,
    st.sampled_from([Op.READ, Op.ALL]),
    st.sampled_from(["User:alice", "User:*"]),
    host=st.sampled_from(["*", "10.0.0.1"]),
    pattern=st.sampled_from([LITERAL, PREFIXED]),
)


@given(st.lists(MATCHING, max_size=8), FEW_NAMES, st.booleans())
def test_of_several_matching_acls_the_index_names_the_references(
    acls: list[AclBinding], name: str, everyone: bool
) -> None:
    authz = Authorizer(acls, allow_everyone_if_no_acl_found=everyone)
    alice, action = KafkaPrincipal.user("alice"), Action.on(Op.READ, TOPIC, name)
    expected = reference_decision(
        authz.acls(), alice, "10.0.0.1", action, allow_everyone_if_no_acl_found=everyone
    )
    assert authz.authorize(alice, "10.0.0.1", action) == expected


@given(ACL_SETS, BINDINGS, PRINCIPALS, HOSTS, ACTIONS)
def test_adding_an_allow_never_denies_what_was_allowed(
    acls: list[AclBinding],
    extra: AclBinding,
    principal: KafkaPrincipal,
    host: str,
    action: Action,
) -> None:
    # Only with allow.everyone.if.no.acl.found off: with it on, the first ACL on a
    # resource shuts out everyone it does not name (test_decisions.py).
    extra = AclBinding(extra.pattern, _with_permission(extra.entry, ALLOW))
    before = Authorizer(acls).authorize(principal, host, action)
    after = Authorizer([*acls, extra]).authorize(principal, host, action)
    assert after.allowed or not before.allowed


@given(ACL_SETS, BINDINGS, PRINCIPALS, HOSTS, ACTIONS, st.booleans())
def test_adding_a_deny_never_allows_what_was_denied(
    acls: list[AclBinding],
    extra: AclBinding,
    principal: KafkaPrincipal,
    host: str,
    action: Action,
    everyone: bool,
) -> None:
    extra = AclBinding(extra.pattern, _with_permission(extra.entry, DENY))
    before = Authorizer(acls, allow_everyone_if_no_acl_found=everyone)
    after = before.add([extra])
    assert before.authorize(principal, host, action).allowed or not (
        after.authorize(principal, host, action).allowed
    )


def _with_permission(
    entry: AccessControlEntry, permission: AclPermissionType
) -> AccessControlEntry:
    return AccessControlEntry(entry.principal, entry.host, entry.operation, permission)


@given(ACL_SETS, ACL_SETS, PRINCIPALS, HOSTS, ACTIONS)
def test_changes_equal_a_rebuild(
    first: list[AclBinding],
    second: list[AclBinding],
    principal: KafkaPrincipal,
    host: str,
    action: Action,
) -> None:
    grown = Authorizer(first).add(second)
    built = Authorizer([*first, *second])
    assert grown.acls() == built.acls()
    assert grown.authorize(principal, host, action) == built.authorize(principal, host, action)
    shrunk = built.remove(second)
    rebuilt = Authorizer(set(first) - set(second))
    assert shrunk.acls() == rebuilt.acls()
    assert shrunk.authorize(principal, host, action) == rebuilt.authorize(principal, host, action)


@given(ACL_SETS, PRINCIPALS, HOSTS, ACTIONS)
def test_a_super_user_is_always_allowed(
    acls: list[AclBinding], principal: KafkaPrincipal, host: str, action: Action
) -> None:
    authz = Authorizer(acls, super_users=[str(principal)])
    assert authz.authorize(principal, host, action).allowed


TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
ENTRIES = st.lists(
    st.builds(
        AccessControlEntry,
        st.builds(lambda name: f"User:{name}", TEXT),
        TEXT,
        OPERATIONS,
        st.sampled_from([ALLOW, DENY]),
    ),
    max_size=6,
)


@given(ENTRIES, st.booleans())
def test_acl_nodes_read_back_what_was_written(entries: list[AccessControlEntry], old: bool) -> None:
    assert decode_acl_node(encode_acl_node(entries, before_3_8=old)) == tuple(
        dict.fromkeys(entries)
    )


@given(st.sampled_from(list(ResourceType)[2:]), TEXT, st.sampled_from([LITERAL, PREFIXED]))
def test_change_nodes_read_back_what_was_written(
    rtype: ResourceType, name: str, pattern: PatternType
) -> None:
    resource = ResourcePattern(rtype, name, pattern)
    path, data = change_node(resource)
    assert decode_change(path + "0000000001", data) == resource
