"""A failure budget per user name and per source address, as a sans-IO TTL cache.

Kafka slows guessing only per connection (``connection.failed.authentication.delay.ms``,
KIP-306): a thousand concurrent connections guess a thousand times faster than
one. Here every failed login also counts against the name it claimed and the
address it came from, for ``window`` seconds. Past ``budget`` failures in a
window, the verdicts of further logins against that name or from that address
(right or wrong password, known or unknown name) are released at most one per
``interval`` seconds per name and per address, whatever the concurrency. The
caller holds each verdict for the time :meth:`FailureBudget.hold` returns, with
the same error and the same close as any wrong password, so the budget tells a
guesser nothing about a name or a password (docs/security.md).

Memory is bounded: each of the two tables keeps at most ``max_entries`` entries
of three numbers, keyed by the name's or address's hash (a claimed name may be
as long as a frame), oldest window evicted first.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["BudgetPolicy", "FailureBudget"]

# An entry: [window end, failures in the window, earliest next release].
_END, _FAILURES, _NEXT = range(3)


class _Table:
    """Entries by key hash, in window-start order (dict insertion order)."""

    __slots__ = ("entries", "max_entries")

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self.entries: dict[int, list[float]] = {}

    def live(self, key: int, now: float) -> list[float] | None:
        entry = self.entries.get(key)
        if entry is not None and entry[_END] <= now:
            del self.entries[key]
            return None
        return entry

    def purge(self, now: float) -> None:
        """Drop the expired windows at the head (the oldest first)."""
        entries = self.entries
        while entries:
            oldest = next(iter(entries))
            if entries[oldest][_END] > now:
                return
            del entries[oldest]

    def add(self, key: int, now: float, window: float) -> list[float]:
        entries = self.entries
        # Expired windows first, then the oldest window, while the table is full.
        while entries:
            oldest = next(iter(entries))
            if entries[oldest][_END] > now and len(entries) < self.max_entries:
                break
            del entries[oldest]
        entry = entries[key] = [now + window, 0.0, 0.0]
        return entry


@dataclass(frozen=True, slots=True)
class BudgetPolicy:
    """The numbers of a failure budget.

    Attributes:
        budget: Failures allowed per name and per address within ``window_s``
            before verdicts are paced.
        window_s: How long a failure counts.
        interval_s: Past the budget, the least time between two released
            verdicts of one name or one address.
        max_entries: The most entries of each table (names, addresses).
        max_hold_s: The longest a verdict is held: past it, attempts queue no
            further (the login's own deadline ends them first).
    """

    budget: int
    window_s: float
    interval_s: float
    max_entries: int
    max_hold_s: float


class FailureBudget:
    """Failed logins per claimed name and per source address, within a window.

    Args:
        policy: The budget's numbers.
        clock: Monotonic seconds (a ``FakeClock`` in tests).
    """

    def __init__(self, policy: BudgetPolicy, clock: Callable[[], float] = time.monotonic) -> None:
        self.budget = policy.budget
        self._window = policy.window_s
        self._interval = policy.interval_s
        self._max_hold = policy.max_hold_s
        self._clock = clock
        self._users = _Table(policy.max_entries)
        self._addresses = _Table(policy.max_entries)
        #: Verdicts held past the budget so far.
        self.slowed = 0

    def __len__(self) -> int:
        return len(self._users.entries) + len(self._addresses.entries)

    def idle(self) -> bool:
        """No failure counts at the moment: no verdict can be past the budget."""
        return not (self._users.entries or self._addresses.entries)

    def _keys(self, user: str | None, address: str | None) -> list[tuple[_Table, int]]:
        keys: list[tuple[_Table, int]] = []
        if user is not None:
            keys.append((self._users, hash(user)))
        if address is not None:
            keys.append((self._addresses, hash(address)))
        return keys

    def hold(self, user: str | None, address: str | None) -> float | None:
        """Seconds to hold this login's verdict past the budget (0.0 at the head of
        the queue); ``None`` within it.

        Called once per verdict, success or failure, before :meth:`failed`.
        """
        if self.idle():
            return None  # nobody failed lately: the usual case costs one check
        now = self._clock()
        # Expired windows go as verdicts come, so that the tables empty, and
        # successes cost one check again, once an attack is over.
        self._users.purge(now)
        self._addresses.purge(now)
        over = [
            entry
            for table, key in self._keys(user, address)
            if (entry := table.live(key, now)) is not None and entry[_FAILURES] >= self.budget
        ]
        if not over:
            return None
        release = max(now, *(entry[_NEXT] for entry in over))
        release = min(release, now + self._max_hold)
        for entry in over:
            # The queue never reaches past the longest hold: later attempts
            # meet their login deadline before any verdict.
            entry[_NEXT] = min(max(entry[_NEXT], release) + self._interval, now + self._max_hold)
        self.slowed += 1
        return release - now

    def failed(self, user: str | None, address: str | None) -> None:
        """Count one failed login against its claimed name and its address."""
        now = self._clock()
        for table, key in self._keys(user, address):
            entry = table.live(key, now) or table.add(key, now, self._window)
            entry[_FAILURES] += 1
