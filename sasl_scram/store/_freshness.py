"""How long a store's local copy may be trusted without its backend, and when to fail closed.

Shared by the credential cache and ``tokenauth``'s token mirrors. A broker
keeps serving its ``CredentialCache`` and ``TokenCache`` for as long as
ZooKeeper is away; we serve for ``max_staleness`` seconds after the connection
was lost (``scram.store.max.staleness.ms``), then refuse until a full resync.
``max_staleness=inf`` is Kafka's behaviour, as an explicit choice.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field

__all__ = ["DEFAULT_MAX_STALENESS", "MAX_STALENESS_KEY", "Freshness", "parse_max_staleness"]

# Ours, not Kafka's (a broker has no staleness limit).
DEFAULT_MAX_STALENESS = 60.0

#: The server.properties key for ``max_staleness``, in milliseconds; ``-1``
#: is Kafka's behaviour (never fail closed), only ever as an explicit choice.
MAX_STALENESS_KEY = "scram.store.max.staleness.ms"


def parse_max_staleness(text: str) -> float:
    """Seconds from ``scram.store.max.staleness.ms``: ``0`` or more ms, or ``-1`` for never.

    Raises:
        ValueError: anything else; the message names the key.
    """
    try:
        ms = int(text.strip())
    except ValueError:
        raise ValueError(
            f"{MAX_STALENESS_KEY} must be milliseconds (or -1: never fail closed), got {text!r}"
        ) from None
    if ms == -1:
        return float("inf")
    if ms < 0:
        raise ValueError(f"{MAX_STALENESS_KEY} must be 0 or more, or -1 (never), got {ms}")
    return ms / 1000


@dataclass(eq=False, repr=False, kw_only=True)
class Freshness:
    """The staleness clock of one store's local copy, plus its closed flag.

    Built with keywords only, from the first five attributes.

    Attributes:
        max_staleness: Seconds to keep answering after the connection is lost.
        monotonic: The clock (``time.monotonic`` in production).
        closed_error: Raised by :meth:`check_usable` once closed.
        unavailable: Raised by :meth:`check_usable` when too stale.
        what: What is refused, for the messages (``"credential store"``).
        unhealthy: Whether a read must call :meth:`check_usable` first.
    """

    max_staleness: float
    monotonic: Callable[[], float]
    closed_error: type[Exception]
    unavailable: type[Exception]
    what: str
    # True whenever a read must call check_usable(): keeps the hot path
    # to one attribute test while everything is fine.
    unhealthy: bool = field(default=False, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _disconnected_at: float | None = field(default=None, init=False, repr=False)
    _closed: bool = field(default=False, init=False, repr=False)

    def check_usable(self) -> None:
        """Raise unless the local copy may answer.

        Raises:
            closed_error: the store is closed.
            unavailable: disconnected for longer than ``max_staleness``.
        """
        if self._closed:
            raise self.closed_error(f"the {self.what} is closed")
        if self.expired():
            raise self.unavailable(
                f"{self.what} unreachable for more than {self.max_staleness:g} s; failing closed"
            )

    def expired(self) -> bool:
        """Whether the copy is now too stale to answer."""
        since = self._disconnected_at
        return since is not None and self.monotonic() - since > self.max_staleness

    @property
    def disconnected(self) -> bool:
        return self._disconnected_at is not None

    def mark_disconnected(self) -> bool:
        """Start the staleness clock (kept from the first loss until a resync).

        Returns whether it was running already.
        """
        with self._lock:
            started = self._disconnected_at is None
            if started:
                self._disconnected_at = self.monotonic()
            self.unhealthy = True
        return not started

    def mark_fresh(self) -> float | None:
        """A full resync completed: stop the clock; returns how long it ran, if it did."""
        with self._lock:
            since, self._disconnected_at = self._disconnected_at, None
            self.unhealthy = self._closed
        return None if since is None else max(0.0, self.monotonic() - since)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self.unhealthy = True
