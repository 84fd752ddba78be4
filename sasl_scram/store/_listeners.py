"""Change listeners shared by the backends (credential stores and token stores)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from collections.abc import Iterable

__all__ = ["ListenerSet"]

_log = logging.getLogger("sasl_scram.store")


class ListenerSet:
    """Thread-safe set of ``listener(key)`` callbacks; one failing listener never
    stops the others or the store.

    The key is whatever the store's changes are about: a user name for the
    credential stores, a token id for ``tokenauth``'s token stores.

    Args:
        logger: Where a failing listener is logged.
        failure_message: The message logged (with the traceback) when a
            listener raises.
    """

    def __init__(
        self,
        *,
        logger: logging.Logger = _log,
        failure_message: str = "credential change listener failed",
    ) -> None:
        self._lock = threading.Lock()
        self._listeners: tuple[Callable[[str], None], ...] = ()
        self._log = logger
        self._failure_message = failure_message

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

    def notify(self, keys: Iterable[str]) -> None:
        """Call every listener for every key, logging (never raising) failures.

        A listener that also has a ``many(keys)`` method gets one call for the
        whole batch instead (an expiry sweep removes thousands of tokens).
        """
        listeners = self._listeners
        if not listeners:
            return
        keys = list(keys)
        for listener in listeners:
            many = getattr(listener, "many", None)
            if many is not None and len(keys) > 1:
                try:
                    many(keys)
                except Exception:
                    self._log.exception(self._failure_message)
                continue
            for key in keys:
                try:
                    listener(key)
                except Exception:
                    self._log.exception(self._failure_message)
