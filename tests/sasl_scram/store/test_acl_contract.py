"""One ACL contract, every backend: 3.9 ``AclAuthorizer``'s CreateAcls and DeleteAcls,
the snapshot, listeners, and two stores on one backend following each other.

Runs unchanged against the in-memory, SQLite and ZooKeeper (real server) stores.
"""

from __future__ import annotations

import pytest

from sasl_scram.authz import WILDCARD_RESOURCE
from sasl_scram.authz import AccessControlEntry
from sasl_scram.authz import AccessControlEntryFilter
from sasl_scram.authz import AclBinding
from sasl_scram.authz import AclBindingFilter
from sasl_scram.authz import AclPermissionType
from sasl_scram.authz import PatternType
from sasl_scram.authz import ResourcePattern
from sasl_scram.authz import ResourcePatternFilter
from sasl_scram.authz import ResourceType
from sasl_scram.config import KafkaPrincipal
from sasl_scram.kafka import ErrorCode
from sasl_scram.store import AclBindingDeleteResult
from sasl_scram.store import AclCreateResult
from sasl_scram.store import AclDeleteResult
from sasl_scram.store import AclStore
from sasl_scram.store import AclStoreError
from tests.sasl_scram.authz.helpers import CLUSTER
from tests.sasl_scram.authz.helpers import GROUP
from tests.sasl_scram.authz.helpers import PREFIXED
from tests.sasl_scram.authz.helpers import TOPIC
from tests.sasl_scram.authz.helpers import Op
from tests.sasl_scram.authz.helpers import allow
from tests.sasl_scram.authz.helpers import ask
from tests.sasl_scram.authz.helpers import deny
from tests.support.polling import wait_until

from .conftest import AclStoreFactory

ALICE = KafkaPrincipal("User", "alice")
#: How long another store may take to show a change (the brief's "within a second").
WITHIN = 1.0


def any_pattern(
    name: str | None = None, rtype: ResourceType = ResourceType.ANY
) -> AclBindingFilter:
    return AclBindingFilter(
        ResourcePatternFilter(rtype, name, PatternType.ANY), AccessControlEntryFilter.ANY
    )


def match(name: str, rtype: ResourceType = TOPIC) -> AclBindingFilter:
    return AclBindingFilter(
        ResourcePatternFilter(rtype, name, PatternType.MATCH), AccessControlEntryFilter.ANY
    )


def ok(*bindings: AclBinding) -> list[AclCreateResult]:
    return [AclCreateResult(b) for b in bindings]


def test_every_backend_is_an_acl_store(acl_store: AclStore) -> None:
    assert isinstance(acl_store, AclStore)
    assert len(acl_store.acls()) == 0
    assert acl_store.describe_acls() == ()


def test_created_acls_are_listed_in_kafkas_order_and_decide(acl_store: AclStore) -> None:
    read = allow("orders", Op.READ)
    bob = allow("orders", Op.READ, "User:bob")
    prefixed = deny("ord", Op.WRITE, pattern=PREFIXED)
    group = allow("g", Op.READ, rtype=GROUP)
    assert acl_store.create_acls([read, bob, prefixed, group]) == ok(read, bob, prefixed, group)
    # StandardAcl order: type, then name in reverse, then pattern type, ...
    assert acl_store.describe_acls() == (read, bob, prefixed, group)
    assert acl_store.acls().bindings == {read, bob, prefixed, group}
    assert acl_store.acls().authorize(ALICE, "10.0.0.1", ask(Op.READ, "orders")).allowed
    assert not acl_store.acls().authorize(ALICE, "10.0.0.1", ask(Op.WRITE, "orders")).allowed
    assert acl_store.describe_acls(match("orders-eu")) == (prefixed,)


def test_creating_an_existing_acl_succeeds_and_stores_it_once(acl_store: AclStore) -> None:
    read = allow("orders", Op.READ)
    heard: list[str] = []
    acl_store.create_acls([read])
    remove = acl_store.add_listener(heard.append)
    try:
        assert acl_store.create_acls([read, read]) == ok(read, read)
        assert acl_store.describe_acls() == (read,)
        assert heard == []  # nothing changed, nothing announced
    finally:
        remove()


def test_what_acl_authorizer_refuses_is_refused_per_binding(acl_store: AclStore) -> None:
    good = allow("orders", Op.READ)
    cluster = allow("other-cluster", Op.ALTER, rtype=CLUSTER)
    empty = allow("", Op.READ)
    slash = allow("a/b", Op.READ)
    unknown = AclBinding(
        ResourcePattern(TOPIC, "t", PREFIXED),
        AccessControlEntry("User:a", "*", Op.UNKNOWN, AclPermissionType.ALLOW),
    )
    assert acl_store.create_acls([good, cluster, empty, slash, unknown]) == [
        AclCreateResult(good),
        AclCreateResult(
            cluster,
            ErrorCode.INVALID_REQUEST,
            "The only valid name for the CLUSTER resource is kafka-cluster",
        ),
        AclCreateResult(empty, ErrorCode.INVALID_REQUEST, "Invalid empty resource name"),
        AclCreateResult(slash, ErrorCode.INVALID_REQUEST, "Failed to create ACL"),
        AclCreateResult(unknown, ErrorCode.INVALID_REQUEST, "Failed to create ACL"),
    ]
    assert acl_store.describe_acls() == (good,)


def test_a_principal_without_a_type_fails_its_whole_pattern(acl_store: AclStore) -> None:
    # AclAuthorizer writes a pattern's new entries as one node; parsing one fails all.
    typeless = allow("orders", Op.READ, "alice")
    same_pattern = allow("orders", Op.WRITE)
    other = allow("payments", Op.READ)
    results = acl_store.create_acls([typeless, same_pattern, other])
    assert [r.error for r in results] == [
        ErrorCode.UNKNOWN_SERVER_ERROR,
        ErrorCode.UNKNOWN_SERVER_ERROR,
        ErrorCode.NONE,
    ]
    assert acl_store.describe_acls() == (other,)


def test_a_delete_lists_each_acl_it_removed_under_the_first_filter(acl_store: AclStore) -> None:
    read = allow("orders", Op.READ)
    write = allow("orders", Op.WRITE)
    prefixed = allow("ord", Op.READ, pattern=PREFIXED)
    keep = allow("payments", Op.READ)
    acl_store.create_acls([read, write, prefixed, keep])
    only_write = AclBindingFilter(
        read.pattern.to_filter(),
        AccessControlEntryFilter(None, None, Op.WRITE, AclPermissionType.ANY),
    )
    nothing = any_pattern("no-such-topic", TOPIC)
    results = acl_store.delete_acls([only_write, match("orders"), nothing])
    assert results == [
        AclDeleteResult(only_write, (AclBindingDeleteResult(write),)),
        AclDeleteResult(
            match("orders"), (AclBindingDeleteResult(read), AclBindingDeleteResult(prefixed))
        ),
        AclDeleteResult(nothing),
    ]
    assert results[1].deleted == (read, prefixed)
    assert acl_store.describe_acls() == (keep,)


def test_any_pattern_filters_compare_names_exactly(acl_store: AclStore) -> None:
    star = allow(WILDCARD_RESOURCE, Op.READ)
    named = allow("orders", Op.READ)
    acl_store.create_acls([star, named])
    assert acl_store.delete_acls([any_pattern(WILDCARD_RESOURCE, TOPIC)])[0].deleted == (star,)
    assert acl_store.describe_acls() == (named,)
    assert acl_store.delete_acls([AclBindingFilter.ANY])[0].deleted == (named,)
    assert len(acl_store.acls()) == 0


def test_listeners_hear_the_pattern_of_each_change(acl_store: AclStore) -> None:
    heard: list[str] = []
    remove = acl_store.add_listener(heard.append)
    try:
        acl_store.create_acls([allow("orders", Op.READ), allow("ord", Op.READ, pattern=PREFIXED)])
        assert wait_until(lambda: len(heard) >= 2, WITHIN) is not None
        assert sorted(heard) == ["TOPIC:LITERAL:orders", "TOPIC:PREFIXED:ord"]
    finally:
        remove()


def test_a_change_by_one_store_reaches_the_other_within_a_second(
    acl_store_factory: AclStoreFactory,
) -> None:
    first, second = acl_store_factory(), acl_store_factory()
    read, prefixed = allow("orders", Op.READ), deny("ord", Op.ALL, pattern=PREFIXED)
    first.create_acls([read, prefixed])
    assert wait_until(lambda: second.acls().bindings == {read, prefixed}, WITHIN) is not None
    assert not second.acls().authorize(ALICE, "10.0.0.1", ask(Op.READ, "orders")).allowed
    second.delete_acls([prefixed.to_filter()])
    assert wait_until(lambda: first.acls().bindings == {read}, WITHIN) is not None
    assert first.acls().authorize(ALICE, "10.0.0.1", ask(Op.READ, "orders")).allowed


def test_a_delete_right_after_another_stores_create_removes_it(
    acl_store_factory: AclStoreFactory,
) -> None:
    # AclAuthorizer.deleteAcls reads the patterns an exact filter names from the store,
    # whether or not this copy has followed them yet.
    first, second = acl_store_factory(), acl_store_factory()
    read = allow("orders", Op.READ)
    first.create_acls([read])
    results = second.delete_acls([any_pattern("orders", TOPIC)])
    assert results[0].deleted == (read,)
    assert wait_until(lambda: len(first.acls()) == 0, WITHIN) is not None


def test_a_closed_store_refuses(acl_store_factory: AclStoreFactory) -> None:
    store = acl_store_factory()
    store.close()
    with pytest.raises(AclStoreError):
        store.acls()
    with pytest.raises(AclStoreError):
        store.create_acls([allow("orders", Op.READ)])
