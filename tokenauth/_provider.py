"""The SCRAM integration: answer a SCRAM server's credential requests for tokens.

A client-first message with ``tokenauth=true`` names a token id instead of a
user (``ScramServerCallbackHandler``). :class:`TokenCredentialProvider`
answers with the token's candidate credentials (one per configured secret,
one shared salt), the owner's name as authorization id and the token's expiry
for the KIP-368 session lifetime.

Beyond Kafka: a token whose expiry or maximum timestamp has passed is refused
here at once. Kafka does not check expiry during SCRAM and accepts such a
token until the next sweep removes it (docs/kafka-facts.md §6.6).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from sasl_scram import CredentialRequest
from sasl_scram import Grant
from sasl_scram import ScramCredential
from sasl_scram import ScramMechanism
from tokenauth._cache import TokenCache
from tokenauth._manager import wall_clock_ms

__all__ = ["TokenCredentialProvider", "UserLookup"]

_log = logging.getLogger("tokenauth.provider")

UserLookup = Callable[[str, ScramMechanism], ScramCredential | None]


class TokenCredentialProvider:
    """Turns :class:`sasl_scram.CredentialRequest` into :class:`sasl_scram.Grant`.

    Usable directly as ``ScramServer(mech, lookup=provider)``.

    Args:
        cache: The token cache of this process.
        user_lookup: Optional answer for ordinary (non-token) logins, e.g. a
            credential store's ``lookup``; without it only tokens authenticate.
        clock_ms: Epoch milliseconds, when :meth:`grant_for` gets no ``now_ms``.
    """

    def __init__(
        self,
        cache: TokenCache,
        *,
        user_lookup: UserLookup | None = None,
        clock_ms: Callable[[], int] = wall_clock_ms,
    ) -> None:
        self._cache = cache
        self._user_lookup = user_lookup
        self._clock_ms = clock_ms

    def __repr__(self) -> str:
        return f"TokenCredentialProvider({self._cache!r})"

    def __call__(self, request: CredentialRequest) -> Grant | None:
        return self.grant_for(request)

    def may_block(self, request: CredentialRequest) -> bool:
        """Whether :meth:`grant_for` would run PBKDF2 (a token's first login with a
        mechanism), so an event loop should call it from a thread."""
        return request.token_auth and not self._cache.derived(request.username, request.mechanism)

    def grant_for(self, request: CredentialRequest, now_ms: int | None = None) -> Grant | None:
        """The grant for one login, or ``None`` to let the exchange fail opaquely.

        For ``tokenauth=true``: ``None`` when the token is unknown, tokens are
        disabled, or the token has expired at ``now_ms``; otherwise every
        candidate credential, ``authorization_id`` = the owner's *name* (the
        session principal is ``User:<owner name>``, as in Kafka) and
        ``expiry_ms`` = the token's expiry timestamp.

        Raises:
            TokenStoreUnavailable: the store is too stale to trust (fail closed).
        """
        if not request.token_auth:
            if self._user_lookup is None:
                return None
            credential = self._user_lookup(request.username, request.mechanism)
            return None if credential is None else Grant.of(credential)
        self._cache.check_usable()
        found = self._cache.credentials(request.username, request.mechanism)
        if found is None:
            return None
        now = self._clock_ms() if now_ms is None else now_ms
        if found.info.is_expired(now):
            # Beyond Kafka: expired tokens are refused before the sweep removes them.
            _log.debug("token %s has expired; refusing it", found.info.token_id)
            return None
        return Grant(
            found.credentials,
            authorization_id=found.info.owner.name,
            expiry_ms=found.info.expiry_timestamp_ms,
        )
