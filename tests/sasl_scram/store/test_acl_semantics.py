"""The ACL semantics every store shares (``sasl_scram/store/_acls.py``), without I/O:
pattern keys, which patterns a delete reaches, the snapshot, failures, and a
Hypothesis model of CreateAcls and DeleteAcls over the in-memory store."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sasl_scram.authz import AccessControlEntry
from sasl_scram.authz import AccessControlEntryFilter
from sasl_scram.authz import AclBinding
from sasl_scram.authz import AclBindingFilter
from sasl_scram.authz import AclOperation
from sasl_scram.authz import AclPermissionType
from sasl_scram.authz import Authorizer
from sasl_scram.authz import PatternType
from sasl_scram.authz import ResourcePattern
from sasl_scram.authz import ResourcePatternFilter
from sasl_scram.authz import ResourceType
from sasl_scram.kafka import ErrorCode
from sasl_scram.store import InMemoryAclStore
from sasl_scram.store._acls import AclSnapshot
from sasl_scram.store._acls import AclUpdateFailed
from sasl_scram.store._acls import Change
from sasl_scram.store._acls import delete_targets
from sasl_scram.store._acls import parse_pattern_key
from sasl_scram.store._acls import pattern_key
from tests.sasl_scram.authz.helpers import GROUP
from tests.sasl_scram.authz.helpers import LITERAL
from tests.sasl_scram.authz.helpers import PREFIXED
from tests.sasl_scram.authz.helpers import TOPIC
from tests.sasl_scram.authz.helpers import Op
from tests.sasl_scram.authz.helpers import allow


def pattern_filter(rtype: ResourceType, name: str | None, ptype: PatternType) -> AclBindingFilter:
    return AclBindingFilter(ResourcePatternFilter(rtype, name, ptype), AccessControlEntryFilter.ANY)


@pytest.mark.parametrize("name", ["orders", "a:b:c", "", "*", "ü/ß", "TOPIC:LITERAL:x"])
@pytest.mark.parametrize("ptype", [LITERAL, PREFIXED])
def test_a_pattern_key_reads_back_as_its_pattern(name: str, ptype: PatternType) -> None:
    pattern = ResourcePattern(ResourceType.TRANSACTIONAL_ID, name, ptype)
    assert parse_pattern_key(pattern_key(pattern)) == pattern
    assert pattern_key(pattern) == f"TRANSACTIONAL_ID:{ptype.name}:{name}"


@pytest.mark.parametrize(
    "key", ["", "TOPIC", "TOPIC:LITERAL", "Topic:LITERAL:x", "ANY:LITERAL:x", "TOPIC:MATCH:x"]
)
def test_a_key_that_names_no_pattern_is_refused(key: str) -> None:
    with pytest.raises(ValueError, match="names no resource pattern"):
        parse_pattern_key(key)


def test_a_delete_reaches_held_patterns_and_those_an_exact_filter_names() -> None:
    held = [ResourcePattern(TOPIC, "orders", LITERAL), ResourcePattern(GROUP, "g", PREFIXED)]
    filters = [
        pattern_filter(TOPIC, "payments", PatternType.ANY),  # both pattern types, unheld
        pattern_filter(TOPIC, "orders", PatternType.MATCH),  # not exact: held ones only
        pattern_filter(GROUP, "g", PREFIXED),
        pattern_filter(ResourceType.ANY, None, PatternType.ANY),
    ]
    assert delete_targets(filters, held) == {
        ResourcePattern(TOPIC, "orders", LITERAL): [1, 3],
        ResourcePattern(GROUP, "g", PREFIXED): [2, 3],
        ResourcePattern(TOPIC, "payments", LITERAL): [0, 3],
        ResourcePattern(TOPIC, "payments", PREFIXED): [0, 3],
    }


def test_the_snapshot_reports_what_changed_and_swaps_whole() -> None:
    snapshot = AclSnapshot()
    orders = ResourcePattern(TOPIC, "orders", LITERAL)
    read = allow("orders", Op.READ).entry
    write = allow("orders", Op.WRITE).entry
    before = snapshot.authorizer
    assert snapshot.apply({orders: frozenset({read})}) == [orders]
    assert snapshot.apply({orders: frozenset({read})}) == []
    assert before.bindings == frozenset()  # the old snapshot is untouched
    assert snapshot.replace_all({orders: frozenset({write})}) == [orders]
    assert snapshot.authorizer.bindings == {AclBinding(orders, write)}
    assert snapshot.apply({orders: frozenset()}) == [orders]
    assert snapshot.patterns() == [] and len(snapshot) == 0


class _Failing(InMemoryAclStore):
    """A store whose every update fails before it reads anything (ZooKeeper away)."""

    def _update(self, pattern: ResourcePattern, change: Change) -> bool:
        raise AclUpdateFailed("ACL store unavailable; the change was not applied: test")


def test_a_failed_update_answers_every_binding_of_its_pattern() -> None:
    store = _Failing()
    results = store.create_acls([allow("orders", Op.READ), allow("orders", Op.WRITE)])
    assert {(r.error, r.message) for r in results} == {
        (ErrorCode.UNKNOWN_SERVER_ERROR, "ACL store unavailable; the change was not applied: test")
    }


def test_a_delete_that_could_not_read_says_so_rather_than_nothing_matched() -> None:
    store = _Failing()
    exact = pattern_filter(TOPIC, "orders", LITERAL)
    (result,) = store.delete_acls([exact])
    assert result.matches == ()
    assert result.error == ErrorCode.UNKNOWN_SERVER_ERROR


# -- a model: CreateAcls and DeleteAcls against plain sets -----------------------------

_names = st.sampled_from(["a", "ab", "b", "*"])
_entries = st.builds(
    AccessControlEntry,
    st.sampled_from(["User:alice", "User:bob", "User:*"]),
    st.sampled_from(["*", "10.0.0.1"]),
    st.sampled_from([AclOperation.READ, AclOperation.WRITE, AclOperation.ALL]),
    st.sampled_from([AclPermissionType.ALLOW, AclPermissionType.DENY]),
)
_bindings = st.builds(
    AclBinding,
    st.builds(
        ResourcePattern,
        st.sampled_from([TOPIC, GROUP]),
        _names,
        st.sampled_from([LITERAL, PREFIXED]),
    ),
    _entries,
)
_filters = st.builds(
    AclBindingFilter,
    st.builds(
        ResourcePatternFilter,
        st.sampled_from([TOPIC, GROUP, ResourceType.ANY]),
        st.one_of(st.none(), _names),
        st.sampled_from([LITERAL, PREFIXED, PatternType.ANY, PatternType.MATCH]),
    ),
    st.builds(
        AccessControlEntryFilter,
        st.one_of(st.none(), st.just("User:alice")),
        st.none(),
        st.sampled_from([AclOperation.ANY, AclOperation.READ]),
        st.sampled_from([AclPermissionType.ANY, AclPermissionType.DENY]),
    ),
)
_steps = st.lists(
    st.one_of(
        st.tuples(st.just("create"), st.lists(_bindings, max_size=5)),
        st.tuples(st.just("delete"), st.lists(_filters, max_size=3)),
    ),
    max_size=8,
)


@given(_steps)
def test_creates_and_deletes_match_a_model_of_acl_authorizer(steps: list[tuple[str, list]]) -> None:  # type: ignore[type-arg]
    store = InMemoryAclStore()
    model: set[AclBinding] = set()
    for action, items in steps:
        if action == "create":
            assert all(r.error == ErrorCode.NONE for r in store.create_acls(items))
            model |= set(items)
        else:
            results = store.delete_acls(items)
            expected: dict[int, set[AclBinding]] = {i: set() for i in range(len(items))}
            for binding in model:
                first = next((i for i, f in enumerate(items) if f.matches(binding)), None)
                if first is not None:
                    expected[first].add(binding)
            assert [set(r.deleted) for r in results] == [expected[i] for i in range(len(items))]
            assert all(r.deleted == Authorizer(r.deleted).acls() for r in results)
            model -= set().union(*expected.values())
        assert store.acls().bindings == model
