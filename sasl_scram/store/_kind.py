"""What every store (in memory, SQLite or ZooKeeper; credentials or tokens) names about
itself for its shared base: the words for messages, its two errors, its thread and
logger, and its listeners; and that base (:class:`StoreBase`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import ClassVar

from sasl_scram.store._listeners import ListenerSet

__all__ = ["StoreBase", "StoreKind"]


class StoreKind:
    """The names and errors of one store.

    Args:
        what: The store, for messages (``"credential store"``).
        errors: The store's error (raised once closed) and its fail-closed
            "unavailable" error.
        logger: Its logger.
        thread_name: Its background thread's name.
        listeners: Makes its listener set.
    """

    def __init__(
        self,
        *,
        what: str,
        errors: tuple[type[Exception], type[Exception]],
        logger: logging.Logger,
        thread_name: str = "",
        listeners: Callable[[], ListenerSet] = ListenerSet,
    ) -> None:
        self.what = what
        self.error, self.unavailable = errors
        self.log = logger
        self.thread_name = thread_name
        self.listeners = listeners


class StoreBase:
    """What every store shares (in memory, SQLite, ZooKeeper; credentials or tokens):
    its kind, its listeners, and closing once.

    A subclass sets :attr:`kind` and may implement :meth:`_shutdown`.
    """

    kind: ClassVar[StoreKind]

    def __init__(self) -> None:
        self._listeners = self.kind.listeners()
        self._closed = False

    def add_listener(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """Call ``listener(key)`` after a key changes anywhere; returns the remover."""
        return self._listeners.add(listener)

    def close(self) -> None:
        """Stop the background work and release the backend (once)."""
        if self._closed:
            return
        self._closed = True
        self._shutdown()

    def _shutdown(self) -> None:
        """Stop background work and release the backend (nothing, in memory)."""

    def _check_open(self) -> None:
        if self._closed:
            raise self.kind.error(f"the {self.kind.what} is closed")
