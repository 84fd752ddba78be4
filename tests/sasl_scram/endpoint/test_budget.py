"""The failure budget per name and per address (sans-IO, on a fake clock)."""

from __future__ import annotations

import sys

from sasl_scram.endpoint.login._budget import BudgetPolicy
from sasl_scram.endpoint.login._budget import FailureBudget
from tests.support.clock import FakeClock


def budget(clock: FakeClock[float], max_entries: int = 100) -> FailureBudget:
    policy = BudgetPolicy(
        budget=3, window_s=60.0, interval_s=1.0, max_entries=max_entries, max_hold_s=30.0
    )
    return FailureBudget(policy, clock=clock)


def test_within_the_budget_nothing_is_held() -> None:
    clock = FakeClock(100.0)
    b = budget(clock)
    for _ in range(3):
        assert b.hold("alice", "10.0.0.1") is None
        b.failed("alice", "10.0.0.1")
    assert b.slowed == 0


def test_past_the_budget_verdicts_leave_one_per_interval() -> None:
    clock = FakeClock(100.0)
    b = budget(clock)
    for _ in range(3):
        b.failed("alice", "10.0.0.1")
    # Concurrent attempts at one instant queue up, one interval apart.
    holds = [b.hold("alice", f"10.0.1.{i}") for i in range(4)]
    assert holds == [0.0, 1.0, 2.0, 3.0]
    assert b.slowed == 4


def test_the_address_is_paced_whatever_name_it_tries() -> None:
    clock = FakeClock(100.0)
    b = budget(clock)
    for i in range(3):
        b.failed(f"user-{i}", "10.0.0.9")
    assert b.hold("someone-new", "10.0.0.9") == 0.0
    assert b.hold("someone-else", "10.0.0.9") == 1.0
    # Another address and an untouched name are not paced.
    assert b.hold("someone-else", "10.0.0.8") is None


def test_a_known_or_unknown_name_is_paced_alike() -> None:
    clock = FakeClock(100.0)
    b = budget(clock)
    for name in ("alice", "nobody-here"):
        for i in range(3):
            b.failed(name, f"10.0.{i}.1")
    assert [b.hold(n, "10.9.0.1") for n in ("alice", "alice")] == [0.0, 1.0]
    assert [b.hold(n, "10.9.0.2") for n in ("nobody-here", "nobody-here")] == [0.0, 1.0]


def test_the_window_forgets() -> None:
    clock = FakeClock(100.0)
    b = budget(clock)
    for _ in range(3):
        b.failed("alice", None)
    assert b.hold("alice", None) == 0.0
    assert b.hold("alice", None) == 1.0
    clock.advance(60.0)
    assert b.hold("alice", None) is None
    assert b.hold("alice", None) is None


def test_the_queue_never_reaches_past_the_longest_hold() -> None:
    clock = FakeClock(100.0)
    b = budget(clock)
    for _ in range(3):
        b.failed("alice", None)
    holds = [b.hold("alice", None) for _ in range(100)]
    assert max(h for h in holds if h is not None) == 30.0 and None not in holds
    # Five seconds later the queue has drained by five.
    clock.advance(5.0)
    assert b.hold("alice", None) == 25.0


def test_tables_are_bounded_and_drop_the_oldest_window() -> None:
    clock = FakeClock(100.0)
    b = budget(clock, max_entries=50)
    for _ in range(3):
        b.failed("alice", "10.0.0.1")
    for i in range(10_000):
        clock.advance(0.001)
        b.failed("x" * 1000 + str(i), f"10.1.{i // 256}.{i % 256}")
    assert len(b) == 100
    # alice's window was the oldest: it went first.
    assert b.hold("alice", None) is None
    # Entries are keyed by hash, not by the name: each is a few numbers, not 1 kB.
    size = sum(sys.getsizeof(e) for t in (b._users, b._addresses) for e in t.entries.values())
    assert size < 100 * 120


def test_expired_entries_are_dropped_before_live_ones() -> None:
    clock = FakeClock(100.0)
    b = budget(clock, max_entries=2)
    for _ in range(3):
        b.failed("old", None)
    clock.advance(61.0)
    for _ in range(3):
        b.failed("alice", None)
    b.failed("bob", None)
    assert b.hold("alice", None) == 0.0
    assert b.hold("alice", None) == 1.0


def test_expired_windows_go_with_any_verdict_so_the_budget_idles_again() -> None:
    clock = FakeClock(100.0)
    b = budget(clock)
    for i in range(3):
        b.failed(f"user-{i}", "10.0.0.1")
    assert not b.idle()
    clock.advance(60.0)
    # Another name from another address: the old windows go all the same.
    assert b.hold("bob", "10.0.0.2") is None
    assert b.idle() and len(b) == 0
