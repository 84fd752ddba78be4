"""The exception hierarchy of ``tokenauth``.

One root, with the same split as ``sasl_scram``: the caller passed something
wrong (usage), the configuration is invalid (config), or the backing store
failed (store). Kafka's *answers* to token requests are not exceptions: they
are :class:`~tokenauth.ErrorCode` values inside the results, as on the
wire. No message ever contains a secret or an HMAC.
"""

from __future__ import annotations

from sasl_scram.store import StoreUnavailable

__all__ = [
    "TokenConfigError",
    "TokenError",
    "TokenStoreError",
    "TokenStoreUnavailable",
    "TokenUsageError",
]


class TokenError(Exception):
    """Root of every error raised by ``tokenauth``."""


class TokenUsageError(TokenError, ValueError):
    """The caller passed an invalid argument (local error)."""


class TokenConfigError(TokenError, ValueError):
    """A configuration value is invalid; the message names the key, never a secret."""


class TokenStoreError(TokenError):
    """A token store could not complete an operation; nothing changed silently."""


class TokenStoreUnavailable(TokenStoreError, StoreUnavailable):
    """The backing store is unreachable, or too stale to trust: fail closed.

    A :class:`sasl_scram.store.StoreUnavailable`, so that the endpoint refuses
    a token login during an outage as it refuses a password login.
    """
