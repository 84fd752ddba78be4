"""The token manager: create, renew, expire, describe and sweep with Kafka's rules.

Pure logic over an injected store, cache, clock and randomness. The order of
checks and the error codes are those of a ZooKeeper-mode Kafka broker
(``KafkaApis`` + ``DelegationTokenManagerZk``, docs/kafka-facts.md §6.5). Where
KRaft differs, the method docstrings say so.
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass

from sasl_scram import KafkaPrincipal
from sasl_scram.audit import audit_event
from sasl_scram.kafka import ErrorCode
from tokenauth._cache import TokenCache
from tokenauth._config import TokenConfig
from tokenauth._errors import TokenStoreError
from tokenauth._results import CreateTokenResult
from tokenauth._results import DescribeTokensResult
from tokenauth._results import ExpireTokenResult
from tokenauth._results import RenewTokenResult
from tokenauth._token import DelegationToken
from tokenauth._token import TokenInformation
from tokenauth._token import compute_hmac
from tokenauth._token import new_token_id
from tokenauth.stores import TokenStore

__all__ = [
    "AclOperation",
    "Authorizer",
    "ResourceType",
    "TokenManager",
    "TokenRequester",
    "wall_clock_ms",
]

# Tokens deleted per store call in a sweep (one SQLite transaction each).
_SWEEP_BATCH = 5000

_log = logging.getLogger("tokenauth.manager")

USER_TYPE = "User"
# KafkaPrincipal.ANONYMOUS: what a 1-way SSL client authenticates as.
ANONYMOUS = KafkaPrincipal(USER_TYPE, "ANONYMOUS")


# Long.MAX_VALUE: every timestamp is a Java long on the wire and in the stored JSON.
_LONG_MAX = 2**63 - 1


def _later(now_ms: int, duration_ms: int) -> int:
    """``now + duration`` saturated at Long.MAX_VALUE (``DelegationTokenControlManager.sum``,
    Kafka 4.x). ``delegation.token.max.lifetime.ms`` may be Long.MAX_VALUE; an unbounded
    sum would be stored where no reader (ours, Kafka's ``DelegationTokenManagerZk.fromBytes``)
    takes it back. ZooKeeper-mode Kafka wraps around instead: a token born expired."""
    return min(now_ms + duration_ms, _LONG_MAX)


def wall_clock_ms() -> int:
    """Epoch milliseconds, as Kafka's ``Time.milliseconds``."""
    return time.time_ns() // 1_000_000


class AclOperation(enum.Enum):
    """The ACL operations token requests are authorized with."""

    CREATE_TOKENS = "CREATE_TOKENS"
    DESCRIBE = "DESCRIBE"
    DESCRIBE_TOKENS = "DESCRIBE_TOKENS"


class ResourceType(enum.Enum):
    """The resource types those operations apply to."""

    USER = "USER"
    DELEGATION_TOKEN = "DELEGATION_TOKEN"  # noqa: S105 - a resource type name


# (operation, resource type, resource name) -> allowed; the principal is the
# request context's.
Authorizer = Callable[[AclOperation, ResourceType, str], bool]


@dataclass(frozen=True, slots=True)
class TokenRequester:
    """Who is asking for a token operation, over what.

    What the token rules look at, not the endpoint's per-request
    ``sasl_scram.endpoint.RequestContext`` (which ``tokenauth``'s endpoint
    handlers translate into this).

    Attributes:
        principal: The authenticated principal (``User:alice``).
        token_authenticated: The session logged in with a delegation token.
        security_protocol: The listener's protocol: ``PLAINTEXT``, ``SSL``,
            ``SASL_PLAINTEXT`` or ``SASL_SSL``.
        authorizer: Answers ACL questions for this principal; ``None`` means
            only ``super_user`` grants anything.
        super_user: Allowed everything (Kafka's ``super.users``).
    """

    principal: KafkaPrincipal
    token_authenticated: bool = False
    security_protocol: str = "SASL_SSL"
    authorizer: Authorizer | None = None
    super_user: bool = False

    def authorized(self, operation: AclOperation, resource: ResourceType, name: str) -> bool:
        if self.super_user:
            return True
        if self.authorizer is None:
            return False
        return bool(self.authorizer(operation, resource, name))

    @property
    def allow_token_requests(self) -> bool:
        """``KafkaApis.allowTokenRequests``: no token sessions, no PLAINTEXT, no 1-way SSL."""
        protocol = self.security_protocol.upper()
        if self.token_authenticated or protocol == "PLAINTEXT":
            return False
        return not (protocol == "SSL" and self.principal == ANONYMOUS)


class TokenManager:
    """Kafka's ``DelegationTokenManager`` over a :class:`TokenStore`.

    Args:
        config: Secrets, lifetimes and the sweep interval.
        store: Where tokens live.
        cache: The token cache to answer lookups from; built over ``store``
            when omitted (then closed by :meth:`close`).
        clock_ms: Epoch milliseconds, read by every request (and by :meth:`sweep`
            when it is given no ``now_ms``).
        token_id_factory: Makes token ids (:func:`new_token_id` by default).
    """

    def __init__(
        self,
        config: TokenConfig,
        store: TokenStore,
        *,
        cache: TokenCache | None = None,
        clock_ms: Callable[[], int] = wall_clock_ms,
        token_id_factory: Callable[[], str] = new_token_id,
    ) -> None:
        self._config = config
        self._store = store
        self._owns_cache = cache is None
        self._cache = cache if cache is not None else TokenCache(store, config.secrets)
        self._clock_ms = clock_ms
        self._new_id = token_id_factory

    def __repr__(self) -> str:
        return f"TokenManager(enabled={self.enabled}, tokens={len(self._cache)})"

    @property
    def config(self) -> TokenConfig:
        return self._config

    @property
    def cache(self) -> TokenCache:
        return self._cache

    @property
    def enabled(self) -> bool:
        return self._config.enabled

    def update_config(self, config: TokenConfig) -> None:
        """Apply new settings, e.g. a rotated secret list, to this process.

        Other processes keep their own configuration: rotate each of them.
        """
        self._config = config
        self._cache.set_secrets(config.secrets)

    def close(self) -> None:
        if self._owns_cache:
            self._cache.close()

    # -- CreateDelegationToken (API 38) --------------------------------------------

    def create_token(
        self,
        ctx: TokenRequester,
        renewers: Sequence[KafkaPrincipal] = (),
        max_lifetime_ms: int = -1,
        owner: KafkaPrincipal | None = None,
    ) -> CreateTokenResult:
        """Create a token (``KafkaApis.handleCreateTokenRequest`` + ``createToken``).

        Args:
            ctx: The requester.
            renewers: Who may renew and expire it besides the owner.
            max_lifetime_ms: ``MaxLifetimeMs``; ``<= 0`` means the server maximum,
                otherwise capped by it.
            owner: KIP-373 owner; ``None`` (or an empty name, which Java sends)
                means the requester.

        Checks, in Kafka's order: 64 request not allowed; 65 owner differs from
        the requester without CREATE_TOKENS on ``USER:<owner>``; 67 a renewer
        whose type is not ``User``; 61 tokens disabled. The owner's own type is
        not validated, as in Kafka.
        """
        requester = ctx.principal
        if owner is None or not owner.name:
            owner = requester
        renewers = tuple(renewers)

        def error(code: ErrorCode) -> CreateTokenResult:
            return CreateTokenResult(code, owner, requester)

        if not ctx.allow_token_requests:
            return error(ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED)
        if owner != requester and not ctx.authorized(
            AclOperation.CREATE_TOKENS, ResourceType.USER, str(owner)
        ):
            return error(ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED)
        if any(r.principal_type != USER_TYPE for r in renewers):
            return error(ErrorCode.INVALID_PRINCIPAL_TYPE)
        secrets = self._config.secrets
        if secrets is None:
            return error(ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED)
        now = self._clock_ms()
        server_max = self._config.max_lifetime_ms
        lifetime = server_max if max_lifetime_ms <= 0 else min(max_lifetime_ms, server_max)
        max_ts = _later(now, lifetime)
        expiry_ts = min(max_ts, _later(now, self._config.expiry_time_ms))
        token_id = self._new_id()
        info = TokenInformation(token_id, owner, requester, renewers, now, expiry_ts, max_ts)
        try:
            self._store.put(info)
        except TokenStoreError as exc:
            _log.warning("could not store new token %s: %s", token_id, exc)
            return error(ErrorCode.UNKNOWN_SERVER_ERROR)
        return CreateTokenResult(
            ErrorCode.NONE,
            owner,
            requester,
            now,
            expiry_ts,
            max_ts,
            token_id,
            compute_hmac(token_id, secrets.current),
            renewers,
        )

    # -- RenewDelegationToken (API 39) ---------------------------------------------

    def renew_token(
        self, ctx: TokenRequester, hmac: bytes, renew_period_ms: int = -1
    ) -> RenewTokenResult:
        """Renew a token found by its HMAC (``DelegationTokenManagerZk.renewToken``).

        ZooKeeper-mode order: 64, 61, 62 no token has this HMAC (under any
        listed secret), 63 requester is neither owner nor renewer (the token
        requester may *not* renew), 66 expired; then the new expiry is
        ``min(max, now + period)`` where the period is
        ``delegation.token.expiry.time.ms`` if ``renew_period_ms < 0`` and the
        requested value as is otherwise (it may exceed the default; 0 = now).

        KRaft differs: 66 is checked before 63, and a period ``<= 0`` means the
        default while ``> 0`` means ``min(default, requested)``.
        """
        info = self._token_to_change(ctx, hmac)
        if isinstance(info, tuple):
            return RenewTokenResult(info[0], token_id=info[1])
        period = self._config.expiry_time_ms if renew_period_ms < 0 else renew_period_ms
        return RenewTokenResult(*self._set_expiry(info, period, "renew"), info.token_id)

    def _token_to_change(
        self, ctx: TokenRequester, hmac: bytes
    ) -> TokenInformation | tuple[ErrorCode, str]:
        """The token a renew or an expire acts on, or its error in Kafka's order:
        64 (token requests not allowed), 61 (tokens disabled), 62 (no token has
        this HMAC), 63 (the requester is neither owner nor renewer), with the id
        of the token found (empty before 63), for the audit trail."""
        if not ctx.allow_token_requests:
            return ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, ""
        if not self.enabled:
            return ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, ""
        info = self._cache.find_by_hmac(hmac)
        if info is None:
            return ErrorCode.DELEGATION_TOKEN_NOT_FOUND, ""
        if not info.may_renew(ctx.principal):
            return ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH, info.token_id
        return info

    # -- ExpireDelegationToken (API 40) --------------------------------------------

    def expire_token(
        self, ctx: TokenRequester, hmac: bytes, expiry_period_ms: int = -1
    ) -> ExpireTokenResult:
        """Expire a token found by its HMAC (``DelegationTokenManagerZk.expireToken``).

        Order: 64, 61, 62, 63 (owner or renewer only). Then a negative period
        removes the token at once and answers NONE with expiry = now (the
        Java AdminClient's default is -1); otherwise an already expired token
        gives 66, else the expiry becomes ``min(max, now + period)``. KRaft has
        the same order.
        """
        info = self._token_to_change(ctx, hmac)
        if isinstance(info, tuple):
            return ExpireTokenResult(info[0], token_id=info[1])
        token_id = info.token_id
        if expiry_period_ms >= 0:
            return ExpireTokenResult(*self._set_expiry(info, expiry_period_ms, "expire"), token_id)
        try:
            self._store.remove(token_id)
        except TokenStoreError as exc:
            _log.warning("could not expire token %s: %s", token_id, exc)
            return ExpireTokenResult(ErrorCode.UNKNOWN_SERVER_ERROR, token_id=token_id)
        return ExpireTokenResult(ErrorCode.NONE, self._clock_ms(), token_id)

    def _set_expiry(
        self, info: TokenInformation, period_ms: int, verb: str
    ) -> tuple[ErrorCode, int]:
        """A renew's or an expire's new expiry, ``min(max, now + period)``, stored;
        66 for a token already expired (``DelegationTokenManagerZk``)."""
        now = self._clock_ms()
        if info.is_expired(now):
            return ErrorCode.DELEGATION_TOKEN_EXPIRED, -1
        expiry = min(info.max_timestamp_ms, _later(now, period_ms))
        try:
            self._store.put(info.with_expiry(expiry))
        except TokenStoreError as exc:
            _log.warning("could not %s token %s: %s", verb, info.token_id, exc)
            return ErrorCode.UNKNOWN_SERVER_ERROR, -1
        return ErrorCode.NONE, expiry

    # -- DescribeDelegationToken (API 41) ------------------------------------------

    def describe_tokens(
        self,
        ctx: TokenRequester,
        owners: Sequence[KafkaPrincipal] | None = None,
    ) -> DescribeTokensResult:
        """The tokens the requester may see (``KafkaApis.handleDescribeTokensRequest``).

        Order: 64, 61; ``owners`` empty (not ``None``) gives NONE with no
        tokens; ``None`` considers every token. A token is returned when (no
        owner filter, or some listed principal is its owner, requester or a
        renewer) and (the requester is its owner, requester or a renewer, or
        may DESCRIBE ``DELEGATION_TOKEN:<id>``, or may DESCRIBE_TOKENS
        ``USER:<owner>``). HMACs are under the current (first) secret.
        Expired tokens not yet swept are listed, as in Kafka. The order is
        by issue time, then id (Kafka's is a hash map's).
        """
        if not ctx.allow_token_requests:
            return DescribeTokensResult(ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED)
        if not self.enabled:
            return DescribeTokensResult(ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED)
        if owners is not None and len(owners) == 0:
            return DescribeTokensResult(ErrorCode.NONE)
        wanted = tuple(owners) if owners is not None else None
        found: list[DelegationToken] = []
        for info in sorted(self._cache.tokens(), key=lambda t: (t.issue_timestamp_ms, t.token_id)):
            if wanted is not None and not any(info.owner_or_renewer(p) for p in wanted):
                continue
            if not (
                info.owner_or_renewer(ctx.principal)
                or ctx.authorized(
                    AclOperation.DESCRIBE, ResourceType.DELEGATION_TOKEN, info.token_id
                )
                or ctx.authorized(AclOperation.DESCRIBE_TOKENS, ResourceType.USER, str(info.owner))
            ):
                continue
            token = self._cache.token(info.token_id)
            if token is not None:
                found.append(token)
        return DescribeTokensResult(ErrorCode.NONE, tuple(found))

    # -- expiry ----------------------------------------------------------------------

    def sweep(self, now_ms: int | None = None) -> list[str]:
        """Remove every token with ``max < now`` or ``expiry < now`` (``expireTokens``).

        Returns the ids removed. A store failure for one token is logged and
        the sweep goes on; the next sweep retries.
        """
        now = self._clock_ms() if now_ms is None else now_ms
        due = {
            info.token_id: info
            for info in self._cache.tokens()
            if info.max_timestamp_ms < now or info.expiry_timestamp_ms < now
        }
        expired = list(due)
        removed: list[str] = []
        remove_many = getattr(self._store, "remove_many", None)
        if remove_many is not None:
            # Backends that can, delete in batches: one transaction, one lock.
            for start in range(0, len(expired), _SWEEP_BATCH):
                batch = expired[start : start + _SWEEP_BATCH]
                try:
                    removed.extend(remove_many(batch))
                except TokenStoreError as exc:
                    _log.warning("could not remove %d expired tokens: %s", len(batch), exc)
            expired = []
        for token_id in expired:
            try:
                if self._store.remove(token_id):
                    removed.append(token_id)
            except TokenStoreError as exc:
                _log.warning("could not remove expired token %s: %s", token_id, exc)
        if removed:
            _log.info("removed %d expired delegation token(s)", len(removed))
        for token_id in removed:
            info = due.get(token_id)
            if info is None:
                continue
            audit_event(
                "TokenExpired",
                ("DelegationToken", token_id),
                [
                    ("owner", info.owner),
                    ("expiryTimestamp", min(info.expiry_timestamp_ms, info.max_timestamp_ms)),
                ],
            )
        return removed
