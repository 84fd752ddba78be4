"""The tokens the supervisor holds, and the token RPCs that change them.

A token goes through three slots: ``pending`` (created as a replacement, not
yet in use), ``current`` (the query logs in with it) and ``retired`` (replaced,
still to expire). The old token is expired only once the query runs with the
new one, so a failed restart never leaves the query without a live token,
and only once the clients Spark keeps with it are closed (``release``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from collections.abc import Iterable

from tokenauth._client import TokenRequestError
from tokenauth._token import DelegationToken
from tokenauth.spark._options import TokenLike
from tokenauth.spark._policy import _MAX_EXPIRE_ATTEMPTS
from tokenauth.spark._policy import _TOKEN_GONE
from tokenauth.spark._policy import SupervisorError
from tokenauth.spark._policy import SupervisorPolicy
from tokenauth.spark._policy import TokenClient
from tokenauth.spark._policy import _describe
from tokenauth.spark._policy import _Held

__all__ = ["TokenRotation"]

_log = logging.getLogger("tokenauth.spark")

# Between logins with a new token; a refused SCRAM login already takes the
# broker's connection.failed.authentication.delay.ms (100 ms by default).
_ACCEPT_POLL_S = 0.1


class TokenRotation:
    """Create, renew, swap and expire the supervisor's tokens."""

    def __init__(
        self,
        connect: Callable[[], TokenClient],
        policy: SupervisorPolicy,
        clock_ms: Callable[[], int],
        accepted: Callable[[TokenLike, float], bool] | None = None,
        pause: Callable[[float], object] = time.sleep,
        release: Callable[[Iterable[str]], object] | None = None,
    ) -> None:
        self._connect = connect
        self._policy = policy
        self._clock = clock_ms
        # Whether the brokers take a token's login yet (None: do not ask),
        # and the wait between asks, which returns true once stop is asked.
        self._accepted = accepted
        self._pause = pause
        # Closes the clients still logged in with the given token ids, before
        # they are expired (see ``_jvm_clients``).
        self._release = release
        self.current: _Held | None = None
        self.pending: _Held | None = None
        self.retired: list[_Held] = []

    @property
    def settled(self) -> bool:
        """No replacement half-way and nothing left to expire."""
        return self.pending is None and not self.retired

    def create(self) -> _Held:
        """A new token, with the user's SCRAM login, once the brokers take it."""
        with self._connect() as client:
            token = client.create_token(self._policy.renewers, self._policy.max_lifetime_ms)
        held = _Held.of(token, self._clock())
        _log.info(
            "created token %s; expires in %d ms, max lifetime %d ms",
            held.token_id,
            held.expiry_ms - held.issued_ms,
            held.max_ms - held.issued_ms,
        )
        try:
            self._await_accepted(token)
        except Exception:
            self.expire(held, last_try=True)
            raise
        return held

    def _await_accepted(self, token: DelegationToken) -> None:
        """Return once the brokers take ``token``'s login (see
        ``token_login_probe``); raise when they do not within the policy's
        ``token_ready_timeout_ms`` or when stop is asked meanwhile."""
        timeout_ms = self._policy.token_ready_timeout_ms
        if self._accepted is None or timeout_ms == 0:
            return
        started = time.monotonic()
        deadline = started + timeout_ms / 1000
        while True:
            # Each check gets only the time left, so a broker that never
            # answers cannot stretch the wait by a whole connection timeout.
            left_s = deadline - time.monotonic()
            if left_s <= 0:
                raise SupervisorError(
                    f"the brokers did not take token {token.token_id} within {timeout_ms} ms"
                )
            if self._accepted(token, left_s):
                break
            if self._pause(min(_ACCEPT_POLL_S, max(0.0, deadline - time.monotonic()))):
                raise SupervisorError(f"stopped while waiting for token {token.token_id}")
        _log.info(
            "token %s logs in after %d ms",
            token.token_id,
            int((time.monotonic() - started) * 1000),
        )

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
        self._release_clients(self.retired)
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
        self._release_clients(held_all)
        for held in held_all:
            self.expire(held, last_try=True)

    def _release_clients(self, held: list[_Held]) -> None:
        if held and self._release is not None:
            self._release([h.token_id for h in held])
