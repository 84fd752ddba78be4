"""One contract, every backend: KIP-554 semantics and the lookup/listener contract.

Runs unchanged against the in-memory, SQLite and ZooKeeper (eager and lazy,
real server) stores; expected codes and messages are Kafka's
(``ZkAdminManager``, docs/kafka-facts.md §7).
"""

from __future__ import annotations

import time

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SCRAM_SHA_512
from sasl_scram import ScramCredential
from sasl_scram import ScramMechanism
from sasl_scram.kafka import ErrorCode
from sasl_scram.store import AlterResult
from sasl_scram.store import CredentialInfo
from sasl_scram.store import CredentialStore
from sasl_scram.store import DecoyIterationsSource
from sasl_scram.store import ScramDeletion
from sasl_scram.store import ScramUpsertion
from sasl_scram.store import UserDescription
from tests.support.polling import wait_until

from .conftest import StoreFactory

SALT = b"fixed-salt-for-tests"


def ups(
    user: str,
    mech: ScramMechanism = SCRAM_SHA_256,
    iterations: int = 4096,
    password: str = "secret",  # noqa: S107 - test data
) -> ScramUpsertion:
    return ScramUpsertion.from_password(user, mech, password, iterations, salt=SALT)


def raw_ups(user: str, mech: int, iterations: int = 4096) -> ScramUpsertion:
    return ScramUpsertion(user, mech, iterations, b"salt", b"x" * 32)


def dele(user: str, mech: ScramMechanism | int = SCRAM_SHA_256) -> ScramDeletion:
    return ScramDeletion(user, mech if isinstance(mech, int) else mech.type_byte)


def ok(user: str) -> AlterResult:
    return AlterResult(user)


def test_store_satisfies_protocol(store: CredentialStore) -> None:
    assert isinstance(store, CredentialStore)


def test_unknown_user_has_no_credential(store: CredentialStore) -> None:
    assert store.lookup("nobody", SCRAM_SHA_256) is None
    assert store.describe().results == ()


def test_upsert_then_lookup_returns_kafka_credential(store: CredentialStore) -> None:
    assert store.alter([], [ups("alice", iterations=8192)]) == [ok("alice")]
    expected = ScramCredential.from_password(SCRAM_SHA_256, "secret", iterations=8192, salt=SALT)
    assert store.lookup("alice", SCRAM_SHA_256) == expected
    assert store.lookup("alice", SCRAM_SHA_512) is None


def test_first_credential_creates_and_last_removes_user(store: CredentialStore) -> None:
    store.alter([], [ups("alice"), ups("alice", SCRAM_SHA_512, 8192)])
    assert store.describe().results == (
        UserDescription(
            "alice", (CredentialInfo(SCRAM_SHA_256, 4096), CredentialInfo(SCRAM_SHA_512, 8192))
        ),
    )
    assert store.alter([dele("alice", SCRAM_SHA_256)], []) == [ok("alice")]
    assert store.lookup("alice", SCRAM_SHA_256) is None
    assert store.lookup("alice", SCRAM_SHA_512) is not None
    assert store.alter([dele("alice", SCRAM_SHA_512)], []) == [ok("alice")]
    assert store.describe().results == ()
    assert store.describe(["alice"]).results[0].error == ErrorCode.RESOURCE_NOT_FOUND


def test_upsert_replaces(store: CredentialStore) -> None:
    store.alter([], [ups("alice", password="one")])
    store.alter([], [ups("alice", password="two", iterations=5000)])
    expected = ScramCredential.from_password(SCRAM_SHA_256, "two", iterations=5000, salt=SALT)
    assert store.lookup("alice", SCRAM_SHA_256) == expected


@pytest.mark.parametrize(
    ("upsertion", "code", "message"),
    [
        (raw_ups("", 1), ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
        (raw_ups("u", 0), ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
        (raw_ups("u", 3), ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
        (raw_ups("u", 1, 4095), ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"),
        (raw_ups("u", 2, 16385), ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"),
    ],
)
def test_upsertion_validation(
    store: CredentialStore, upsertion: ScramUpsertion, code: ErrorCode, message: str
) -> None:
    assert store.alter([], [upsertion]) == [AlterResult(upsertion.user, code, message)]
    assert store.describe().results == ()


def test_iteration_bounds_are_inclusive(store: CredentialStore) -> None:
    assert store.alter([], [raw_ups("a", 1, 4096), raw_ups("b", 2, 16384)]) == [ok("a"), ok("b")]


@pytest.mark.parametrize(
    ("deletion", "code", "message"),
    [
        (dele("", 1), ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
        (dele("u", 0), ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
        (
            dele("u", 1),
            ErrorCode.RESOURCE_NOT_FOUND,
            "Attempt to delete a user credential that does not exist",
        ),
    ],
)
def test_deletion_errors(
    store: CredentialStore, deletion: ScramDeletion, code: ErrorCode, message: str
) -> None:
    assert store.alter([deletion], []) == [AlterResult(deletion.user, code, message)]


def test_upsertion_error_overrides_deletion_error(store: CredentialStore) -> None:
    results = store.alter([dele("u", 0)], [raw_ups("u", 1, 10)])
    assert results == [AlterResult("u", ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations")]


DUP = "A user credential cannot be altered twice in the same request"


def test_alter_same_thing_twice_like_kafka(store: CredentialStore) -> None:
    # AlterUserScramCredentialsRequestTest.testAlterSameThingTwice
    store.alter([], [ups("u1"), ups("u2")])
    results = store.alter([dele("u1"), dele("u1")], [ups("u2"), ups("u2")])
    assert sorted(results, key=lambda r: r.user) == [
        AlterResult("u1", ErrorCode.DUPLICATE_RESOURCE, DUP),
        AlterResult("u2", ErrorCode.DUPLICATE_RESOURCE, DUP),
    ]
    results = store.alter([dele("u1"), dele("u2")], [ups("u1"), ups("u2")])
    assert sorted(results, key=lambda r: r.user) == [
        AlterResult("u1", ErrorCode.DUPLICATE_RESOURCE, DUP),
        AlterResult("u2", ErrorCode.DUPLICATE_RESOURCE, DUP),
    ]
    assert store.lookup("u1", SCRAM_SHA_256) is not None


def test_different_mechanisms_of_one_user_in_one_request(store: CredentialStore) -> None:
    # ZooKeeper mode allows deleting one mechanism and upserting the other.
    store.alter([], [ups("u")])
    assert store.alter([dele("u", SCRAM_SHA_256)], [ups("u", SCRAM_SHA_512)]) == [ok("u")]
    assert store.lookup("u", SCRAM_SHA_256) is None
    assert store.lookup("u", SCRAM_SHA_512) is not None


def test_per_user_atomicity(store: CredentialStore) -> None:
    store.alter([], [ups("bob", SCRAM_SHA_512)])
    # carol's missing deletion fails all of carol's request, and nobody else's.
    results = store.alter(
        [dele("carol", SCRAM_SHA_512), dele("bob", SCRAM_SHA_512)],
        [ups("carol"), ups("dave"), raw_ups("", 1)],
    )
    assert results == [
        AlterResult("", ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
        AlterResult(
            "carol",
            ErrorCode.RESOURCE_NOT_FOUND,
            "Attempt to delete a user credential that does not exist",
        ),
        ok("bob"),
        ok("dave"),
    ]
    assert store.lookup("carol", SCRAM_SHA_256) is None
    assert store.lookup("bob", SCRAM_SHA_512) is None
    assert store.lookup("dave", SCRAM_SHA_256) is not None


def test_result_order_is_kafkas(store: CredentialStore) -> None:
    store.alter([], [ups("ok2")])
    results = store.alter(
        [dele("nf"), dele("dup"), dele("dup"), dele("ok2")],
        [ups("ok1"), raw_ups("bad", 9)],
    )
    assert [r.user for r in results] == ["bad", "dup", "nf", "ok2", "ok1"]


def test_describe_specific_users(store: CredentialStore) -> None:
    store.alter([], [ups("alice", SCRAM_SHA_512, 8192), ups("alice", SCRAM_SHA_256)])
    result = store.describe(["zed", "alice", "alice", "", "bob"])
    assert result.error == ErrorCode.NONE
    assert result.results == (
        UserDescription(
            "zed",
            (),
            ErrorCode.RESOURCE_NOT_FOUND,
            "Attempt to describe a user credential that does not exist: zed",
        ),
        UserDescription(
            "alice",
            (),
            ErrorCode.DUPLICATE_RESOURCE,
            "Cannot describe SCRAM credentials for the same user twice in a single request: alice",
        ),
        UserDescription("", (), ErrorCode.RESOURCE_NOT_FOUND, "Username must not be empty"),
        UserDescription(
            "bob",
            (),
            ErrorCode.RESOURCE_NOT_FOUND,
            "Attempt to describe a user credential that does not exist: bob",
        ),
    )
    assert store.describe(["alice"]).results == (
        UserDescription(
            "alice", (CredentialInfo(SCRAM_SHA_256, 4096), CredentialInfo(SCRAM_SHA_512, 8192))
        ),
    )


def test_describe_all_sorted_like_java(store: CredentialStore) -> None:
    names = ["bob", "Alice", "alice", "User:x y", "é", "\U0001f600", "\uffff"]
    store.alter([], [ups(n) for n in names])
    described = [d.user for d in store.describe().results]
    # Java compares UTF-16 code units: U+1F600 (D83D DE00) sorts before U+FFFF.
    assert described == ["Alice", "User:x y", "alice", "bob", "é", "\U0001f600", "\uffff"]
    assert store.describe([]).results == store.describe(None).results


def test_names_that_need_sanitizing(store: CredentialStore) -> None:
    for name in ["User:alice", "a b", "a*b", "a+b", "~", "<default>", "CN=x,O=y/z%"]:
        assert store.alter([], [ups(name)]) == [ok(name)]
        assert store.lookup(name, SCRAM_SHA_256) is not None
    assert store.lookup("a%20b", SCRAM_SHA_256) is None


def test_listener_and_unsubscribe(store: CredentialStore) -> None:
    seen: list[str] = []
    remove = store.add_listener(seen.append)
    store.alter([], [ups("alice")])
    assert wait_until(lambda: "alice" in seen) is not None
    remove()
    store.alter([], [ups("bob")])
    time.sleep(0.1)
    assert "bob" not in seen


def test_failing_listener_does_not_break_store(store: CredentialStore) -> None:
    def boom(user: str) -> None:
        raise RuntimeError("listener bug")

    store.add_listener(boom)
    assert store.alter([], [ups("alice")]) == [ok("alice")]
    assert store.lookup("alice", SCRAM_SHA_256) is not None


def test_second_instance_sees_changes(store_factory: StoreFactory) -> None:
    first, second = store_factory(), store_factory()
    first.alter([], [ups("alice")])
    assert wait_until(lambda: second.lookup("alice", SCRAM_SHA_256) is not None) is not None
    second.alter([dele("alice")], [])
    assert wait_until(lambda: first.lookup("alice", SCRAM_SHA_256) is None) is not None
    assert first.describe().results == ()


def test_closed_store_refuses_alterations(store_factory: StoreFactory) -> None:
    store = store_factory()
    store.close()
    from sasl_scram.store import CredentialStoreError

    with pytest.raises(CredentialStoreError):
        store.alter([], [ups("alice")])


# -- the iteration count an unknown user's decoy shows ----------------------------------


def _common(store: CredentialStore, users: list[str], mech: ScramMechanism) -> int | None:
    """The store's most common count for ``mech``, once ``users`` were looked up (a
    lazy store counts the users it holds: those that logged in)."""
    for user in users:
        store.lookup(user, mech)
    assert isinstance(store, DecoyIterationsSource)
    return store.common_iterations(mech)


def _settles(
    store: CredentialStore, users: list[str], mech: ScramMechanism, expected: int | None
) -> None:
    """At once, except where a change notification still has to arrive: a lazy
    store drops the users it names and holds them again at their next lookup."""
    assert wait_until(lambda: _common(store, users, mech) == expected) is not None, expected


def test_common_iterations_follow_every_change(store_factory: StoreFactory) -> None:
    store, other = store_factory(), store_factory()
    users = ["a", "b", "c", "d", "e"]
    _settles(store, users, SCRAM_SHA_256, None)  # no user: the caller's default
    store.alter([], [raw_ups("a", 1, 8192), raw_ups("b", 1, 8192), raw_ups("c", 1, 5000)])
    store.alter([], [raw_ups("d", 2, 4096), raw_ups("a", 2, 10000)])
    _settles(store, users, SCRAM_SHA_256, 8192)
    # A tie goes to the higher count, the same answer in every process.
    _settles(store, users, SCRAM_SHA_512, 10000)
    # Replaced and deleted credentials leave the histogram; new ones enter it.
    store.alter([], [raw_ups("b", 1, 5000), raw_ups("e", 1, 5000)])
    _settles(store, users, SCRAM_SHA_256, 5000)
    store.alter([dele("b"), dele("c"), dele("e")], [])
    _settles(store, users, SCRAM_SHA_256, 8192)
    store.alter([dele("a", SCRAM_SHA_512)], [])
    _settles(store, users, SCRAM_SHA_512, 4096)
    # Another process's view follows the changes it is told about.
    _settles(other, users, SCRAM_SHA_256, 8192)
    _settles(other, users, SCRAM_SHA_512, 4096)
    store.alter([dele("a")], [])
    _settles(other, users, SCRAM_SHA_256, None)
