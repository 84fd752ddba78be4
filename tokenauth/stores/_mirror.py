"""The in-memory mirror of a token backend, shared by the SQLite and ZooKeeper stores.

A broker keeps every token in ``TokenCache`` and updates it from the
backend's change notifications (``TokenChangedNotificationHandler``): a token
that is present is refreshed, an absent one is dropped. Reads are plain dict
lookups, so :meth:`TokenStore.get` never does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping

from tokenauth._token import TokenInformation

__all__ = ["TokenMirror"]


class TokenMirror:
    """Token id -> :class:`TokenInformation`, reporting which ids changed.

    Not locked: a store applies updates under its own lock (so an older read
    is never applied after a newer one); single-key reads are atomic.
    """

    def __init__(self) -> None:
        self._tokens: dict[str, TokenInformation] = {}

    def __len__(self) -> int:
        return len(self._tokens)

    def get(self, token_id: str) -> TokenInformation | None:
        """The mirrored token, or ``None``."""
        return self._tokens.get(token_id)

    def tokens(self) -> list[TokenInformation]:
        """Every mirrored token."""
        return list(self._tokens.values())

    def apply(self, token_id: str, info: TokenInformation | None) -> bool:
        """Refresh one token as re-read (``None``: it is gone); whether it changed."""
        old = self._tokens.get(token_id)
        if info is None:
            self._tokens.pop(token_id, None)
        else:
            self._tokens[token_id] = info
        return old != info

    def replace_all(self, fresh: Mapping[str, TokenInformation]) -> list[str]:
        """Swap in a full reload; returns the ids added, changed or dropped."""
        old = self._tokens
        changed = [t for t in set(fresh) | set(old) if fresh.get(t) != old.get(t)]
        self._tokens = dict(fresh)
        return changed
