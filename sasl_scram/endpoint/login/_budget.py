"""A failure budget per (name, address) pair, per name and per address: sans-IO TTL caches.

Kafka slows guessing only per connection (``connection.failed.authentication.delay.ms``,
KIP-306): a thousand concurrent connections guess a thousand times faster than
one. Here every failed login also counts, for ``window`` seconds, against the
pair of the name it claimed and the address it came from, against the name
alone and against the address alone. Past a table's threshold, the verdicts of
further logins of that pair, name or address (right or wrong password, known
or unknown name) are released at most one per ``interval`` seconds each,
whatever the concurrency. The caller holds each verdict for the time
:meth:`FailureBudget.verdict` returns, with the same error and the same close
as any wrong password, so the budget tells a guesser nothing about a name or a
password (docs/security.md).

The pair's threshold is low: a guesser at one address slows only the names it
tries from there, not another user behind the same address, nor the name it
tries from anywhere else. The name's and the address's are much higher: they
stop guessing spread over many addresses (one name) or many names (one
address), and an attacker must make that many failures, each a verdict he
waited for, to slow a name or an address for everyone. A guess whose verdict
is never released (held until its login deadline) told the guesser nothing
and counts nowhere, so that concurrent connections held at one pair's turn
cannot push the name or the address past their thresholds.

Memory is bounded: each of the three tables keeps at most ``max_entries``
entries of three numbers, keyed by a hash (a claimed name may be as long as a
frame), oldest window evicted first.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["BudgetPolicy", "FailureBudget"]

# An entry: [window end, failures in the window, earliest next release].
_END, _FAILURES, _NEXT = range(3)
# A verdict with no turn within the longest hold.
_NO_TURN = float("inf")


class _Table:
    """Entries by key hash, in window-start order (dict insertion order), and the
    failures within a window past which their verdicts are paced."""

    __slots__ = ("entries", "limit", "max_entries")

    def __init__(self, limit: int, max_entries: int) -> None:
        self.limit = limit
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
        per_pair: Failures allowed per (name, address) pair within ``window_s``
            before that pair's verdicts are paced.
        per_user: Failures allowed per name, from all addresses, before that
            name's verdicts are paced everywhere (0: never).
        per_address: Failures allowed per address, at all names, before that
            address's verdicts are paced for every name (0: never).
        window_s: How long a failure counts.
        interval_s: Past a threshold, the least time between two released
            verdicts of one pair, one name or one address.
        max_entries: The most entries of each table (pairs, names, addresses).
        max_hold_s: The longest a verdict is held: past it, attempts queue no
            further (the login's own deadline ends them first).
    """

    per_pair: int
    per_user: int
    per_address: int
    window_s: float
    interval_s: float
    max_entries: int
    max_hold_s: float

    def one_pair_most(self) -> int:
        """The most failures one pair counts against its name and its address in a
        window: its own threshold at once, then a queue of ``max_hold_s`` and one
        verdict per interval. A name's or an address's threshold at or below it
        lets one guesser at one address slow that name or address for everyone."""
        return self.per_pair + math.ceil((self.window_s + self.max_hold_s) / self.interval_s)


class FailureBudget:
    """Failed logins per (name, address) pair, per name and per address, within a window.

    Args:
        policy: The budget's numbers.
        clock: Monotonic seconds (a ``FakeClock`` in tests).
    """

    def __init__(self, policy: BudgetPolicy, clock: Callable[[], float] = time.monotonic) -> None:
        self.policy = policy
        self._window = policy.window_s
        self._interval = policy.interval_s
        self._max_hold = policy.max_hold_s
        self._clock = clock
        self._pairs = _Table(policy.per_pair, policy.max_entries)
        # A threshold of 0 turns its table off: it never holds an entry.
        self._users = _Table(policy.per_user, policy.max_entries if policy.per_user else 0)
        self._addresses = _Table(
            policy.per_address, policy.max_entries if policy.per_address else 0
        )
        self._tables = (self._pairs, self._users, self._addresses)
        #: Verdicts held past the budget so far.
        self.slowed = 0

    def __len__(self) -> int:
        return sum(len(table.entries) for table in self._tables)

    def idle(self) -> bool:
        """No failure counts at the moment: no verdict can be past the budget."""
        return not (self._pairs.entries or self._users.entries or self._addresses.entries)

    def _keys(self, user: str | None, address: str | None) -> list[tuple[_Table, int]]:
        keys = [(self._pairs, hash((user, address)))]
        if user is not None and self._users.max_entries:
            keys.append((self._users, hash(user)))
        if address is not None and self._addresses.max_entries:
            keys.append((self._addresses, hash(address)))
        return keys

    def verdict(self, user: str | None, address: str | None, failed: bool) -> float | None:
        """Seconds to hold this login's verdict past the budget (0.0 at the head of
        the queue); ``None`` within it. A failure counts, unless its verdict has
        no turn within the longest hold, so never goes out.

        Args:
            user: The name the login claimed (``None``: it got no further).
            address: The client's address.
            failed: Whether the login failed (a success counts nowhere).
        """
        if self.idle() and not failed:
            return None  # nobody failed lately: the usual case costs one check
        now = self._clock()
        keys = self._keys(user, address)
        turn = self._turn(keys, now)
        if failed and turn != _NO_TURN:
            for table, key in keys:
                entry = table.live(key, now) or table.add(key, now, self._window)
                entry[_FAILURES] += 1
        if turn is None:
            return None
        self.slowed += 1
        return self._max_hold if turn == _NO_TURN else turn - now

    def _turn(self, keys: list[tuple[_Table, int]], now: float) -> float | None:
        """When this verdict may go out: ``None`` within every threshold, else its
        turn in the queue of each entry past its threshold (``_NO_TURN``: none
        within the longest hold)."""
        # Expired windows go as verdicts come, so that the tables empty, and
        # successes cost one check again, once an attack is over.
        for table in self._tables:
            table.purge(now)
        over = [
            entry
            for table, key in keys
            if (entry := table.live(key, now)) is not None and entry[_FAILURES] >= table.limit
        ]
        if not over:
            return None
        turn = max(now, *(entry[_NEXT] for entry in over))
        if turn >= now + self._max_hold:
            # The queue never reaches past the longest hold: this attempt meets
            # its login deadline before any verdict, and takes no turn.
            return _NO_TURN
        for entry in over:
            entry[_NEXT] = turn + self._interval
        return turn
