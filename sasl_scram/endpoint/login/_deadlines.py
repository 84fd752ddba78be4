"""Authentication and idle deadlines for every connection, on one timer.

Kafka's broker keeps its connections in access order (``Selector``'s idle
expiry manager) and closes the oldest once it has been quiet for
``connections.max.idle.ms``; it never schedules a timer per connection. The
same shape here: because every connection gets the same timeouts, deadlines
come in the order connections are added or touched, so two insertion-ordered
dicts and a single timer for the earliest deadline cover them all. Adding, touching and
removing a connection are O(1) dictionary operations, where a timer per
connection cost a handle, a heap push and a cancel: about 7 us of every
short-lived login.

That one timer is kept off the event loop, in :class:`ThreadAlarm`. Any timer
on the loop gives its every sleep a timeout, and a timed ``epoll_wait`` arms
and cancels a kernel timer each time: at one client, where the loop sleeps
five times per login, that cost about 3.5 us of server CPU per login
(docs/performance.md). The alarm's thread
sleeps until the earliest deadline and then queues the expiry on the loop;
it is re-armed only when the earliest deadline moves, about once per
timeout.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from collections.abc import Hashable
from typing import Generic
from typing import Protocol
from typing import TypeVar

__all__ = ["Alarm", "ConnectionDeadlines", "ThreadAlarm"]

C = TypeVar("C", bound=Hashable)


class Alarm(Protocol):
    """A one-shot wake-up: its callback runs on the loop once the delay has passed."""

    def set(self, delay_s: float) -> None:
        """Fire ``delay_s`` seconds from now, replacing any earlier setting."""

    def close(self) -> None:
        """Never fire again."""


class ThreadAlarm:
    """An :class:`Alarm` whose waiting happens in a helper thread, so the event
    loop keeps no timer and sleeps without a timeout.

    The thread starts at the first :meth:`set`. Firing queues ``callback`` with
    ``call_soon_threadsafe``: it always runs on the loop, never in the thread.
    A firing can overlap a new :meth:`set`, so the callback must tolerate
    being called early or twice (:meth:`ConnectionDeadlines._expire` checks
    every deadline against the clock).
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        callback: Callable[[], None],
        name: str = "kafka-scram-deadlines",
    ) -> None:
        self._loop = loop
        self._callback = callback
        self._name = name
        self._cond = threading.Condition()
        self._due: float | None = None  # time.monotonic() to fire at
        self._closed = False
        self._worker: threading.Thread | None = None

    def set(self, delay_s: float) -> None:
        with self._cond:
            if self._closed:
                return
            self._due = time.monotonic() + delay_s
            if self._worker is None or not self._worker.is_alive():
                # First use, or the thread ended (its loop was closed once): a
                # deadline that never fires would leave connections open forever.
                self._worker = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._worker.start()
            else:
                self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
            thread = self._worker
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)

    def _run(self) -> None:
        with self._cond:
            while not self._closed:
                due = self._due
                if due is None:
                    self._cond.wait()
                    continue
                delay = due - time.monotonic()
                if delay > 0:
                    self._cond.wait(delay)
                    continue
                self._due = None
                try:
                    self._loop.call_soon_threadsafe(self._callback)
                except RuntimeError:  # the loop is closed: nothing left to expire
                    return


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
        alarm: Makes the alarm that calls the expiry back; a
            :class:`ThreadAlarm` on ``loop`` unless given (tests count its uses).
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        auth_timeout_s: float,
        idle_timeout_s: float,
        on_auth_timeout: Callable[[C], None],
        on_idle: Callable[[C], bool],
        clock: Callable[[], float] = time.monotonic,
        alarm: Callable[[Callable[[], None]], Alarm] | None = None,
    ) -> None:
        self._auth_timeout = auth_timeout_s
        self._idle_timeout = idle_timeout_s
        self._on_auth_timeout = on_auth_timeout
        self._on_idle = on_idle
        self._clock = clock
        # Plain dicts, ordered by insertion: "move to the end" is a delete and
        # an insert. Compiled, dict operations are direct calls, where an
        # OrderedDict's pop and move_to_end are Python method lookups.
        # connection -> authentication deadline, in deadline order.
        self._pending: dict[C, float] = {}
        # connection -> last activity, least recently active first.
        self._idle: dict[C, float] = {}
        self._alarm: Alarm = (
            alarm(self._expire) if alarm is not None else ThreadAlarm(loop, self._expire)
        )
        # Whether the alarm is set, and for when (on ``clock``).
        self._armed = False
        self._timer_at = 0.0

    def __len__(self) -> int:
        return len(self._pending) + len(self._idle)

    def connected(self, conn: C, now: float) -> None:
        """Start the authentication deadline of a new connection."""
        deadline = now + self._auth_timeout
        self._pending[conn] = deadline
        if not self._armed or deadline < self._timer_at:
            self._arm(deadline)

    def authenticated(self, conn: C, now: float) -> None:
        """The connection logged in: from now on it may only be idle so long."""
        self._pending.pop(conn, None)
        idle = self._idle
        idle.pop(conn, None)
        idle[conn] = now
        deadline = now + self._idle_timeout
        if not self._armed or deadline < self._timer_at:
            self._arm(deadline)

    def touch(self, conn: C, now: float) -> None:
        """Activity on an authenticated connection."""
        idle = self._idle
        if conn in idle:
            del idle[conn]
            idle[conn] = now

    def remove(self, conn: C) -> None:
        """The connection is gone; a timer left for it fires harmlessly."""
        self._pending.pop(conn, None)
        self._idle.pop(conn, None)

    def close(self) -> None:
        self._alarm.close()
        self._armed = False
        self._pending.clear()
        self._idle.clear()

    def _arm(self, at: float) -> None:
        self._armed = True
        self._timer_at = at
        self._alarm.set(max(at - self._clock(), 0.0))

    def _expire(self) -> None:
        self._armed = False
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
