"""Authentication and idle deadlines for every connection, on one timer.

Kafka's broker keeps its connections in access order (``Selector``'s idle
expiry manager) and closes the oldest once it has been quiet for
``connections.max.idle.ms``; it never schedules a timer per connection. The
same shape here: because every connection gets the same timeouts, deadlines
come in the order connections are added or touched, so two ordered maps and a
single timer for the earliest deadline cover them all. Adding, touching and
removing a connection are O(1) dictionary operations, where a timer per
connection cost a handle, a heap push and a cancel: about 7 us of every
short-lived login.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["ConnectionDeadlines"]

C = TypeVar("C", bound=Hashable)


class ConnectionDeadlines(Generic[C]):
    """Closes connections that do not authenticate in time or stay idle too long.

    Args:
        loop: The loop that runs the timer.
        auth_timeout_s: Time from :meth:`connected` to :meth:`authenticated`.
        idle_timeout_s: Quiet time allowed after authentication.
        on_auth_timeout: Called with a connection that did not authenticate in time.
        on_idle: Called with a connection quiet for too long; returns False if it
            is busy (a request in progress), which counts as activity.
        clock: Monotonic seconds, injectable for tests.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        auth_timeout_s: float,
        idle_timeout_s: float,
        on_auth_timeout: Callable[[C], None],
        on_idle: Callable[[C], bool],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._loop = loop
        self._auth_timeout = auth_timeout_s
        self._idle_timeout = idle_timeout_s
        self._on_auth_timeout = on_auth_timeout
        self._on_idle = on_idle
        self._clock = clock
        # connection -> authentication deadline, in deadline order.
        self._pending: OrderedDict[C, float] = OrderedDict()
        # connection -> last activity, least recently active first.
        self._idle: OrderedDict[C, float] = OrderedDict()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0

    def __len__(self) -> int:
        return len(self._pending) + len(self._idle)

    def connected(self, conn: C, now: float) -> None:
        """Start the authentication deadline of a new connection."""
        deadline = now + self._auth_timeout
        self._pending[conn] = deadline
        if self._timer is None or deadline < self._timer_at:
            self._arm(deadline)

    def authenticated(self, conn: C, now: float) -> None:
        """The connection logged in: from now on it may only be idle so long."""
        self._pending.pop(conn, None)
        self._idle[conn] = now
        self._idle.move_to_end(conn)
        deadline = now + self._idle_timeout
        if self._timer is None or deadline < self._timer_at:
            self._arm(deadline)

    def touch(self, conn: C, now: float) -> None:
        """Activity on an authenticated connection."""
        idle = self._idle
        if conn in idle:
            idle[conn] = now
            idle.move_to_end(conn)

    def remove(self, conn: C) -> None:
        """The connection is gone; a timer left for it fires harmlessly."""
        self._pending.pop(conn, None)
        self._idle.pop(conn, None)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._pending.clear()
        self._idle.clear()

    def _arm(self, at: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = at
        self._timer = self._loop.call_later(max(at - self._clock(), 0.0), self._expire)

    def _expire(self) -> None:
        self._timer = None
        now = self._clock()
        pending = self._pending
        while pending:
            conn, deadline = next(iter(pending.items()))
            if deadline > now:
                break
            del pending[conn]
            self._on_auth_timeout(conn)
        idle = self._idle
        while idle:
            conn, last = next(iter(idle.items()))
            if last + self._idle_timeout > now:
                break
            del idle[conn]
            if not self._on_idle(conn):
                idle[conn] = now  # busy: that is activity
        heads = []
        if pending:
            heads.append(next(iter(pending.values())))
        if idle:
            heads.append(next(iter(idle.values())) + self._idle_timeout)
        if heads:
            self._arm(min(heads))
