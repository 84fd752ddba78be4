"""Logging the logins refused because a store is unavailable: rate-limited, no traceback.

During an outage every login is refused (fail closed); a line per refusal
would flood the log, so each kind of outage (credential store, token store)
logs one WARNING, then at most one more every ``interval`` seconds with the
number refused meanwhile.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

__all__ = ["RefusalLog"]


class RefusalLog:
    """One WARNING per ``interval`` per kind of unavailable store.

    Args:
        logger: Where the lines go.
        interval: Seconds between two lines for the same kind.
        monotonic: The clock.
    """

    def __init__(
        self,
        logger: logging.Logger,
        *,
        interval: float = 30.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._log = logger
        self._interval = interval
        self._monotonic = monotonic
        self._lock = threading.Lock()
        # kind -> (time of the last line, refusals since)
        self._last: dict[str, tuple[float, int]] = {}

    def refused(self, conn_id: str, exc: BaseException) -> None:
        """Note one refused login; log it unless a line for its kind is recent."""
        kind = type(exc).__name__
        now = self._monotonic()
        with self._lock:
            last, since = self._last.get(kind, (None, 0))
            if last is not None and now - last < self._interval:
                self._last[kind] = (last, since + 1)
                return
            self._last[kind] = (now, 0)
        more = f" ({since} more refused since the last report)" if since else ""
        self._log.warning("[%s] store unavailable, refusing login: %s%s", conn_id, exc, more)
