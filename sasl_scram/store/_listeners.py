"""Change listeners shared by the backends."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable

__all__ = ["ListenerSet"]

_log = logging.getLogger("sasl_scram.store")


class ListenerSet:
    """Thread-safe set of ``listener(user)`` callbacks; one failing listener never
    stops the others or the store."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: tuple[Callable[[str], None], ...] = ()

    def add(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """Register ``listener``; returns a function that removes it (idempotent)."""
        with self._lock:
            self._listeners = (*self._listeners, listener)

        def remove() -> None:
            with self._lock:
                remaining = list(self._listeners)
                if listener in remaining:
                    remaining.remove(listener)
                self._listeners = tuple(remaining)

        return remove

    def notify(self, users: Iterable[str]) -> None:
        """Call every listener for every user, logging (never raising) failures."""
        listeners = self._listeners
        if not listeners:
            return
        for user in users:
            for listener in listeners:
                try:
                    listener(user)
                except Exception:
                    _log.exception("credential change listener failed")
