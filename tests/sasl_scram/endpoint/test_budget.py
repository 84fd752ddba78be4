"""The failure budget per (name, address) pair, per name and per address (sans-IO,
on a fake clock)."""

from __future__ import annotations

import sys

from sasl_scram.endpoint.login._budget import BudgetPolicy
from sasl_scram.endpoint.login._budget import FailureBudget
from tests.support.clock import FakeClock


def budget(
    clock: FakeClock[float], max_entries: int = 100, per_user: int = 10, per_address: int = 10
) -> FailureBudget:
    policy = BudgetPolicy(
        per_pair=3,
        per_user=per_user,
        per_address=per_address,
        window_s=60.0,
        interval_s=1.0,
        max_entries=max_entries,
        max_hold_s=30.0,
    )
    return FailureBudget(policy, clock=clock)


def fail(b: FailureBudget, user: str | None, address: str | None, times: int = 1) -> None:
    for _ in range(times):
        b.verdict(user, address, failed=True)


def hold(b: FailureBudget, user: str | None, address: str | None) -> float | None:
    """The hold of a success (which counts nowhere)."""
    return b.verdict(user, address, failed=False)


def test_within_the_budget_nothing_is_held() -> None:
    clock = FakeClock(100.0)
    b = budget(clock)
    for _ in range(3):
        assert b.verdict("alice", "10.0.0.1", failed=True) is None
    assert b.slowed == 0


def test_past_the_budget_the_pairs_verdicts_leave_one_per_interval() -> None:
    clock = FakeClock(100.0)
    b = budget(clock)
    fail(b, "alice", "10.0.0.1", 3)
    # Concurrent attempts at one instant queue up, one interval apart, success or not.
    holds = [b.verdict("alice", "10.0.0.1", failed=i % 2 == 0) for i in range(4)]
    assert holds == [0.0, 1.0, 2.0, 3.0]
    assert b.slowed == 4


def test_a_guesser_slows_neither_other_names_at_its_address_nor_its_name_elsewhere() -> None:
    clock = FakeClock(100.0)
    b = budget(clock)
    fail(b, "alice", "10.0.0.1", 3)
    assert hold(b, "alice", "10.0.0.1") == 0.0  # the pair is paced
    assert hold(b, "bob", "10.0.0.1") is None  # another user behind the same address
    assert hold(b, "alice", "10.0.0.2") is None  # alice from elsewhere
    assert b.slowed == 1


def test_many_concurrent_guesses_at_one_pair_never_pace_the_name_or_the_address() -> None:
    clock = FakeClock(100.0)
    # What one pair can count in a window: its 3, a queue of 30 s, then one a
    # second for the 60 s of the window (BudgetPolicy.one_pair_most).
    b = budget(clock, per_user=94, per_address=94)
    assert b.policy.one_pair_most() == 93
    # A thousand held connections: the queue is full at 30 s, later guesses get
    # no verdict before their deadline and count against neither threshold.
    fail(b, "alice", "10.0.0.1", 1000)
    assert hold(b, "bob", "10.0.0.1") is None
    assert hold(b, "alice", "10.0.0.2") is None
    # A minute of guessing: one verdict a second goes out, and is counted.
    for _ in range(59):
        clock.advance(1.0)
        fail(b, "alice", "10.0.0.1", 100)
    assert hold(b, "bob", "10.0.0.1") is None
    assert hold(b, "alice", "10.0.0.2") is None
    assert (entry := b._addresses.entries.get(hash("10.0.0.1"))) is not None
    assert entry[1] == 3 + 30 + 59
    # Were the guesses held past their deadline counted, bob would be paced:
    # a wave of a thousand first guesses over half a second counts the three,
    # then those whose turn is within the 30 s of the longest hold.
    clock = FakeClock(100.0)
    b = budget(clock, per_user=1000, per_address=1000)
    for _ in range(1000):
        clock.advance(0.0005)
        fail(b, "alice", "10.0.0.1")
    assert (entry := b._addresses.entries.get(hash("10.0.0.1"))) is not None
    assert entry[1] == 3 + 31


def test_a_name_guessed_from_many_addresses_is_paced_everywhere() -> None:
    clock = FakeClock(100.0)
    b = budget(clock)
    # Five addresses, two guesses each: every pair within its budget, the name at 10.
    for i in range(5):
        fail(b, "alice", f"10.0.{i}.1", 2)
    assert hold(b, "alice", "10.9.9.9") == 0.0
    assert hold(b, "alice", "10.9.9.8") == 1.0
    assert hold(b, "bob", "10.0.0.1") is None


def test_an_address_spraying_many_names_is_paced_for_every_name() -> None:
    clock = FakeClock(100.0)
    b = budget(clock)
    for i in range(10):
        fail(b, f"user-{i}", "10.0.0.9")
    assert hold(b, "someone-new", "10.0.0.9") == 0.0
    assert hold(b, "someone-else", "10.0.0.9") == 1.0
    # Another address is not paced, nor the names from it.
    assert hold(b, "user-1", "10.0.0.8") is None


def test_a_threshold_of_zero_turns_its_table_off() -> None:
    clock = FakeClock(100.0)
    b = budget(clock, per_user=0, per_address=0)
    for i in range(50):
        fail(b, "alice", f"10.0.{i}.1", 2)
        fail(b, f"user-{i}", "10.0.0.9", 2)
    assert hold(b, "alice", "10.9.9.9") is None
    assert hold(b, "someone-new", "10.0.0.9") is None
    assert len(b) == 100  # the pairs only


def test_a_known_or_unknown_name_is_paced_alike() -> None:
    clock = FakeClock(100.0)
    b = budget(clock)
    for name in ("alice", "nobody-here"):
        fail(b, name, "10.0.0.1", 3)
    assert [hold(b, "alice", "10.0.0.1") for _ in range(2)] == [0.0, 1.0]
    assert [hold(b, "nobody-here", "10.0.0.1") for _ in range(2)] == [0.0, 1.0]


def test_a_login_without_a_name_counts_against_its_address() -> None:
    clock = FakeClock(100.0)
    b = budget(clock)
    fail(b, None, "10.0.0.1", 3)
    assert hold(b, None, "10.0.0.1") == 0.0
    fail(b, None, "10.0.0.1", 7)
    assert hold(b, "alice", "10.0.0.1") is not None


def test_the_window_forgets() -> None:
    clock = FakeClock(100.0)
    b = budget(clock)
    fail(b, "alice", None, 3)
    assert hold(b, "alice", None) == 0.0
    assert hold(b, "alice", None) == 1.0
    clock.advance(60.0)
    assert hold(b, "alice", None) is None
    assert hold(b, "alice", None) is None


def test_the_queue_never_reaches_past_the_longest_hold() -> None:
    clock = FakeClock(100.0)
    b = budget(clock)
    fail(b, "alice", None, 3)
    holds = [hold(b, "alice", None) for _ in range(100)]
    assert max(h for h in holds if h is not None) == 30.0 and None not in holds
    # Five seconds later the queue has drained by five.
    clock.advance(5.0)
    assert hold(b, "alice", None) == 25.0


def test_tables_are_bounded_and_drop_the_oldest_window() -> None:
    clock = FakeClock(100.0)
    b = budget(clock, max_entries=50)
    fail(b, "alice", "10.0.0.1", 3)
    for i in range(10_000):
        clock.advance(0.001)
        fail(b, "x" * 1000 + str(i), f"10.1.{i // 256}.{i % 256}")
    assert len(b) == 150
    # alice's windows were the oldest: they went first.
    assert hold(b, "alice", "10.0.0.1") is None
    # Entries are keyed by hash, not by the name: each is a few numbers, not 1 kB.
    tables = (b._pairs, b._users, b._addresses)
    size = sum(sys.getsizeof(e) for t in tables for e in t.entries.values())
    assert size < 150 * 120


def test_expired_entries_are_dropped_before_live_ones() -> None:
    clock = FakeClock(100.0)
    b = budget(clock, max_entries=2)
    fail(b, "old", None, 3)
    clock.advance(61.0)
    fail(b, "alice", None, 3)
    fail(b, "bob", None)
    assert hold(b, "alice", None) == 0.0
    assert hold(b, "alice", None) == 1.0


def test_expired_windows_go_with_any_verdict_so_the_budget_idles_again() -> None:
    clock = FakeClock(100.0)
    b = budget(clock)
    for i in range(3):
        fail(b, f"user-{i}", "10.0.0.1")
    assert not b.idle()
    clock.advance(60.0)
    # Another name from another address: the old windows go all the same.
    assert hold(b, "bob", "10.0.0.2") is None
    assert b.idle() and len(b) == 0
