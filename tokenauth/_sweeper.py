"""The expiry sweeper: calls :meth:`TokenManager.sweep` every check interval.

Kafka schedules ``expireTokens`` on the active controller with initial delay 0
and period ``delegation.token.expiry.check.interval.ms``. Any of our
processes may run a sweeper; removals are idempotent, so several sweepers
over one store are harmless (just redundant).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from tokenauth._manager import TokenManager
from tokenauth._manager import wall_clock_ms

__all__ = ["ExpirySweeper"]

_log = logging.getLogger("tokenauth.sweeper")

# Upper bound on one sleep, so a clock that jumps is noticed reasonably soon.
_MAX_WAIT_S = 60.0


class ExpirySweeper:
    """Run the sweep on a schedule driven by an injected clock.

    :meth:`poll` is the whole policy (sweep when due, then schedule the next
    one an interval later) and can be driven by hand in tests;
    :meth:`start` runs it on a daemon thread.

    Args:
        manager: The manager whose store is swept.
        interval_ms: The period; the manager's ``expiry_check_interval_ms`` by default.
        clock_ms: Epoch milliseconds.
    """

    def __init__(
        self,
        manager: TokenManager,
        *,
        interval_ms: int | None = None,
        clock_ms: Callable[[], int] = wall_clock_ms,
    ) -> None:
        self._manager = manager
        self._interval_ms = (
            interval_ms if interval_ms is not None else manager.config.expiry_check_interval_ms
        )
        if self._interval_ms < 1:
            raise ValueError("interval_ms must be at least 1")
        self._clock_ms = clock_ms
        self._next_due: int | None = None  # initial delay 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.sweeps = 0

    def __repr__(self) -> str:
        return f"ExpirySweeper(interval_ms={self._interval_ms}, sweeps={self.sweeps})"

    @property
    def next_due_ms(self) -> int | None:
        return self._next_due

    def poll(self, now_ms: int | None = None) -> list[str] | None:
        """Sweep if due at ``now_ms``; returns the ids removed, or ``None`` if not due."""
        now = self._clock_ms() if now_ms is None else now_ms
        if self._next_due is not None and now < self._next_due:
            return None
        self._next_due = now + self._interval_ms
        self.sweeps += 1
        try:
            return self._manager.sweep(now)
        except Exception:
            _log.exception("delegation token sweep failed; retrying next interval")
            return []

    def start(self) -> None:
        """Sweep now and then every interval on a daemon thread."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._run, name="tokenauth-expiry-sweeper", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float | None = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _run(self) -> None:
        while not self._stop.is_set():
            self.poll()
            due = self._next_due
            wait_ms = self._interval_ms if due is None else due - self._clock_ms()
            if self._stop.wait(min(max(wait_ms, 1) / 1000.0, _MAX_WAIT_S)):
                return
