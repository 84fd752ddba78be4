"""The one poll-until helper of the tests and of ``bench/soak.py``.

A test that waits for something another thread or process does (a store
following a change, a server coming back, a session expiring) polls for it
with a deadline instead of sleeping a fixed time: it ends as soon as the
condition holds, and a loaded machine only makes it slower, not flaky.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["wait_until"]


def wait_until(
    predicate: Callable[[], object], timeout: float = 5.0, interval: float = 0.02
) -> float | None:
    """Call ``predicate`` every ``interval`` seconds until it returns something true.

    Returns:
        The seconds it took (``0.0`` counts: test the result with
        ``is not None``), or ``None`` once ``timeout`` seconds have passed
        without it holding (the predicate is tried one last time at the
        deadline).
    """
    started = time.monotonic()
    while True:
        if predicate():
            return time.monotonic() - started
        if time.monotonic() - started > timeout:
            return None
        time.sleep(interval)
