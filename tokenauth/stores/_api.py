"""The token-store contract and the in-memory backend.

A store keeps :class:`TokenInformation` only (never an HMAC, as Kafka) and a
local mirror of every token, kept current from the backend (watches,
polling), so that :meth:`TokenStore.get` and :meth:`TokenStore.tokens` never
do I/O. Writes are durable when they return. Listeners hear the id of every
token that changed, here or in another process.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from collections.abc import Iterable
from typing import Protocol
from typing import runtime_checkable

from sasl_scram.store import ListenerSet as _ListenerSet
from sasl_scram.store import StoreBase
from sasl_scram.store import StoreKind
from tokenauth._errors import TokenStoreError
from tokenauth._errors import TokenStoreUnavailable
from tokenauth._token import TokenInformation

__all__ = ["InMemoryTokenStore", "ListenerSet", "TokenListener", "TokenStore"]

_log = logging.getLogger("tokenauth.store")

TokenListener = Callable[[str], None]


@runtime_checkable
class TokenStore(Protocol):
    """What every token backend provides."""

    def get(self, token_id: str) -> TokenInformation | None:
        """The token from the local mirror, or ``None``.

        Raises:
            TokenStoreUnavailable: the mirror is too stale to trust.
        """
        ...

    def tokens(self) -> list[TokenInformation]:
        """Every token in the local mirror.

        Raises:
            TokenStoreUnavailable: the mirror is too stale to trust.
        """
        ...

    def put(self, info: TokenInformation) -> None:
        """Create or replace a token, durably, and tell every process.

        Raises:
            TokenStoreError: nothing was written (or, for
                :class:`TokenStoreUnavailable` raised mid-write, the outcome is unknown).
        """
        ...

    def remove(self, token_id: str) -> bool:
        """Delete a token and tell every process; whether it existed."""
        ...

    def add_listener(self, listener: TokenListener) -> Callable[[], None]:
        """Call ``listener(token_id)`` after a token changes anywhere; returns a remover."""
        ...

    def close(self) -> None: ...


class ListenerSet(_ListenerSet):
    """Thread-safe ``listener(token_id)`` callbacks; a failing listener never
    stops the others or the store (logged on ``tokenauth.store``)."""

    def __init__(self) -> None:
        super().__init__(logger=_log, failure_message="token change listener failed")


class InMemoryTokenStore(StoreBase):
    """Tokens in this process only: the reference backend and the test fake."""

    kind = StoreKind(
        what="token store",
        errors=(TokenStoreError, TokenStoreUnavailable),
        logger=_log,
        listeners=ListenerSet,
    )

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._tokens: dict[str, TokenInformation] = {}

    def __repr__(self) -> str:
        return f"InMemoryTokenStore(tokens={len(self._tokens)})"

    def get(self, token_id: str) -> TokenInformation | None:
        return self._tokens.get(token_id)

    def tokens(self) -> list[TokenInformation]:
        return list(self._tokens.values())

    def put(self, info: TokenInformation) -> None:
        self._check_open()
        with self._lock:
            self._tokens[info.token_id] = info
        self._listeners.notify((info.token_id,))

    def remove(self, token_id: str) -> bool:
        self._check_open()
        with self._lock:
            existed = self._tokens.pop(token_id, None) is not None
        if existed:
            self._listeners.notify((token_id,))
        return existed

    def remove_many(self, token_ids: Iterable[str]) -> list[str]:
        """Delete several tokens at once (the expiry sweep); returns those that existed."""
        self._check_open()
        with self._lock:
            removed = [t for t in token_ids if self._tokens.pop(t, None) is not None]
        self._listeners.notify(removed)
        return removed
