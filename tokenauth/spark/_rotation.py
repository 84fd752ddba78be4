"""The tokens the supervisor holds, and the token RPCs that change them.

A token goes through three slots: ``pending`` (created as a replacement, not
yet in use), ``current`` (the query logs in with it) and ``retired`` (replaced,
still to expire). The old token is expired only once the query runs with the
new one, so a failed restart never leaves the query without a live token.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from tokenauth._client import TokenRequestError
from tokenauth.spark._policy import (
    _MAX_EXPIRE_ATTEMPTS,
    _TOKEN_GONE,
    SupervisorPolicy,
    TokenClient,
    _describe,
    _Held,
)

__all__ = ["TokenRotation"]

_log = logging.getLogger("tokenauth.spark")


class TokenRotation:
    """Create, renew, swap and expire the supervisor's tokens."""

    def __init__(
        self,
        connect: Callable[[], TokenClient],
        policy: SupervisorPolicy,
        clock_ms: Callable[[], int],
    ) -> None:
        self._connect = connect
        self._policy = policy
        self._clock = clock_ms
        self.current: _Held | None = None
        self.pending: _Held | None = None
        self.retired: list[_Held] = []

    @property
    def settled(self) -> bool:
        """No replacement half-way and nothing left to expire."""
        return self.pending is None and not self.retired

    def create(self) -> _Held:
        """A new token, with the user's SCRAM login."""
        with self._connect() as client:
            token = client.create_token(self._policy.renewers, self._policy.max_lifetime_ms)
        held = _Held.of(token, self._clock())
        _log.info(
            "created token %s; expires in %d ms, max lifetime %d ms",
            held.token_id,
            held.expiry_ms - held.issued_ms,
            held.max_ms - held.issued_ms,
        )
        return held

    def renew(self) -> bool:
        """Renew the current token; ``False`` if the broker says it is gone
        (it is then marked dead, to be replaced)."""
        held = self.current
        assert held is not None
        try:
            with self._connect() as client:
                expiry = client.renew_token(held.token.hmac, self._policy.renew_period_ms)
        except TokenRequestError as exc:
            if exc.error_code in _TOKEN_GONE:
                held.dead = True
                _log.warning("token %s is gone (%s); replacing it", held.token_id, exc.error_code)
                return False
            raise
        held.last_renewed_ms = self._clock()
        held.expiry_ms = expiry - held.skew_ms
        _log.info(
            "renewed token %s; expires in %d ms", held.token_id, held.expiry_ms - self._clock()
        )
        return True

    def swap(self) -> _Held:
        """Retire the current token and put the pending one in its place."""
        old, new = self.current, self.pending
        assert old is not None and new is not None
        self.retired.append(old)
        self.current, self.pending = new, None
        return old

    def expire_retired(self, before_each: Callable[[_Held], None]) -> None:
        """Expire the replaced tokens, oldest first; a failure stops here and
        leaves the rest (and the failed one) for the next try."""
        while self.retired:
            held = self.retired[0]
            before_each(held)
            self.expire(held)
            self.retired.pop(0)

    def expire(self, held: _Held, *, last_try: bool = False) -> None:
        """Expire ``held`` now; a token already gone counts as done.

        Raises the failure for a retry, except on the last allowed attempt,
        where it is logged: an unexpired token still lapses at its expiry.
        """
        held.expire_attempts += 1
        try:
            with self._connect() as client:
                client.expire_token(held.token.hmac)
        except Exception as exc:
            if isinstance(exc, TokenRequestError) and exc.error_code in _TOKEN_GONE:
                _log.info("token %s was already gone", held.token_id)
                return
            if not last_try and held.expire_attempts < _MAX_EXPIRE_ATTEMPTS:
                raise
            _log.warning(
                "could not expire token %s (%s, attempt %d); it lapses at its expiry",
                held.token_id,
                _describe(exc),
                held.expire_attempts,
            )
            return
        _log.info("expired token %s", held.token_id)

    def expire_all(self) -> None:
        """Best effort, for stop and failure: expire every token we hold, once."""
        held_all = [h for h in (self.current, self.pending, *self.retired) if h is not None]
        self.current = self.pending = None
        self.retired = []
        for held in held_all:
            self.expire(held, last_try=True)
