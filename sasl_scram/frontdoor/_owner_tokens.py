"""Delegation tokens the cluster issues for each edge user, that user as owner.

In ``upstream.identity=owner-token`` mode the ``upstream.`` login asks the
cluster for a token owned by each edge user (KIP-373: CreateDelegationToken
v3's owner fields, Kafka 3.3+), and that user's upstream connections log in
with it (SCRAM, ``tokenauth=true``). The cluster then authenticates them as
``User:<owner>`` (``SaslServerAuthenticator``), so its ACLs and quotas apply to
each user by name.

:class:`OwnerTokens` is the policy: which token a login uses, when to renew,
replace and expire. It holds no sockets; the RPCs come in as a
:class:`TokenIssuer` and time as a clock, so every rule runs on a fake clock.
"""

from __future__ import annotations

import base64
import enum
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Protocol
from typing import TypeVar

from sasl_scram.frontdoor._cluster_admin import ClusterOperations
from sasl_scram.frontdoor._errors import OwnerTokenError

__all__ = [
    "CHECK_OWNER",
    "PROPAGATION_MS",
    "IssuedToken",
    "OwnerToken",
    "OwnerTokenChange",
    "OwnerTokens",
    "TokenChange",
    "TokenIssuer",
]

log = logging.getLogger("sasl_scram.frontdoor")

_A = TypeVar("_A")
_R = TypeVar("_R")

#: Renew once this fraction of the time from the last renewal to the expiry has
#: passed: what is left is as long again, for renewals that fail while the
#: cluster is away.
RENEW_FRACTION = 0.5
#: A token nobody has used for this long is expired: Kafka's own default
#: ``connections.max.idle.ms`` (10 minutes), after which a client reconnects.
IDLE_MS = 600_000
#: At most this many unused tokens are kept; beyond it the longest unused goes.
MAX_IDLE_TOKENS = 1000
#: A token with less than this left is not handed to a login: the cluster ends
#: a token's session at the token's expiry (KIP-368), so the session would be over
#: at once.
MIN_REMAINING_MS = 60_000
#: After the cluster refused a user's token, that user's logins fail with the
#: same error for this long instead of asking again on every connection.
FAILURE_HOLD_MS = 5_000
#: A replaced token is expired this long after its successor is first handed
#: out, so a login that started with it can finish.
HANDOVER_MS = 60_000
#: How long after its creation a token may still be unknown to a broker: KRaft
#: brokers learn it from the metadata log, ZooKeeper-mode brokers other than
#: the one asked from a change notification, and until then refuse a login with
#: it (SASL_AUTHENTICATION_FAILED). A refused login with a token younger than
#: this is worth trying again.
PROPAGATION_MS = 10_000
#: The owner of the token :meth:`OwnerTokens.check` asks for at start: a name no
#: edge user is expected to have, so the check needs CREATE_TOKENS for others.
CHECK_OWNER = "kafka-scram-owner-token-check"


@dataclass(frozen=True)
class IssuedToken:
    """A token as the cluster issued it (CreateDelegationToken's response).

    Attributes:
        token_id: The token id: the SCRAM user name a login with it sends.
        hmac: The token's HMAC; its base64 is the SCRAM password.
        expiry_ms: When it expires unless renewed (cluster epoch ms).
        max_ms: When it ends whatever the renewals (cluster epoch ms).
    """

    token_id: str
    hmac: bytes = field(repr=False)
    expiry_ms: int
    max_ms: int


class TokenIssuer(Protocol):
    """The RPCs, made with the ``upstream.`` login; each may block.

    Each raises :class:`OwnerTokenError` when the cluster refuses or cannot
    be reached.
    """

    def create(self, owner: str) -> IssuedToken:
        """CreateDelegationToken owned by ``User:<owner>``."""
        ...

    def renew(self, hmac: bytes) -> int:
        """RenewDelegationToken by the default period; the new expiry (ms)."""
        ...

    def expire(self, hmac: bytes) -> None:
        """ExpireDelegationToken now."""
        ...


@dataclass(frozen=True)
class OwnerToken:
    """What an upstream connection of ``user`` logs in with.

    Attributes:
        user: The edge user, the token's owner.
        token_id: The SCRAM user name (with ``tokenauth=true``).
        hmac: The token's HMAC (never in ``repr``).
        expiry_ms: When the cluster ends a session begun with it now.
        created_ms: When it was created (the policy's clock): for
            :data:`PROPAGATION_MS` after, a broker may not know it yet.
        cluster_operations: What the cluster said the owner holds on the
            Cluster, asked once with this token (:meth:`OwnerTokens.record_operations`);
            ``None``: not asked yet.
    """

    user: str
    token_id: str
    hmac: bytes = field(repr=False)
    expiry_ms: int
    created_ms: int
    cluster_operations: ClusterOperations | None = None

    def fresh(self, now: int) -> bool:
        """Whether a broker may not know this token yet at ``now``, so a login
        it refused is worth trying again."""
        return now - self.created_ms < PROPAGATION_MS

    @property
    def password(self) -> str:
        """The SCRAM password: the HMAC in standard padded base64
        (``DelegationToken.hmacAsBase64String``)."""
        return base64.b64encode(self.hmac).decode("ascii")


class TokenChange(enum.Enum):
    """What happened to a user's token."""

    CREATED = "created"
    RENEWED = "renewed"
    REPLACED = "replaced"
    EXPIRED = "expired"
    FAILING = "failing"
    RECOVERED = "recovered"


@dataclass(frozen=True)
class OwnerTokenChange:
    """One state change, reported once; token ids only, never an HMAC."""

    change: TokenChange
    user: str
    token_id: str
    detail: str = ""

    def __str__(self) -> str:
        text = f"owner token {self.token_id} of {self.user!r} {self.change.value}"
        return f"{text}: {self.detail}" if self.detail else text


@dataclass
class _Slot:
    """One user's token and who uses it."""

    token: IssuedToken | None = None
    renewed_ms: int = 0  # when the token was created or last renewed (our clock)
    created_ms: int = 0
    connections: int = 0
    idle_since_ms: int | None = None
    busy: bool = False  # a create (by a login or a replacement) is under way
    refusal: OwnerTokenError | None = None
    refused_ms: int = 0
    failing: bool = False  # a maintenance failure is reported, until it recovers
    # What the cluster said the owner holds on the Cluster, asked with ``token``.
    operations: ClusterOperations | None = None

    def renew_at(self, fraction: float) -> int:
        assert self.token is not None
        period = self.token.expiry_ms - self.renewed_ms
        return self.renewed_ms + int(period * fraction)


def _ask(rpc: Callable[[_A], _R], arg: _A) -> _R:
    """One RPC; an issuer that raises anything but :class:`OwnerTokenError` broke
    its contract, and its error is made one, so no user's state is left half-way."""
    try:
        return rpc(arg)
    except OwnerTokenError:
        raise
    except Exception as exc:
        raise OwnerTokenError(f"{type(exc).__name__}: {exc}") from exc


def _handed_out(user: str, slot: _Slot, token: IssuedToken) -> OwnerToken:
    return OwnerToken(
        user, token.token_id, token.hmac, token.expiry_ms, slot.created_ms, slot.operations
    )


@dataclass(frozen=True)
class _Retired:
    """A token no login is handed any more, expired at ``expire_at_ms``
    ("replaced" by a successor, or the start "check"'s)."""

    expire_at_ms: int
    user: str
    token: IssuedToken
    reason: str = "replaced"


class OwnerTokens:
    """Per-user tokens from the cluster: cached, renewed, replaced, expired.

    Thread-safe. :meth:`login_for` may block on the issuer and runs on a
    worker thread; :meth:`cached`, :meth:`acquire` and :meth:`release` never block;
    :meth:`maintain` makes the RPCs that are due and runs on a worker thread
    every few seconds.

    Args:
        issuer: The RPCs, made with the ``upstream.`` login.
        clock: Wall-clock epoch milliseconds, the cluster's time base for
            token expiry.
        idle_ms: How long a token with no connection is kept.
        max_idle: How many tokens with no connection are kept.
        renew_fraction: Renew once this fraction of the time from the last
            renewal to the expiry has passed (0 < fraction < 1).
    """

    def __init__(
        self,
        issuer: TokenIssuer,
        clock: Callable[[], int],
        *,
        idle_ms: int = IDLE_MS,
        max_idle: int = MAX_IDLE_TOKENS,
        renew_fraction: float = RENEW_FRACTION,
    ) -> None:
        if not 0 < renew_fraction < 1:
            raise ValueError(f"renew_fraction must be between 0 and 1, not {renew_fraction}")
        if idle_ms < 0 or max_idle < 0:
            raise ValueError("idle_ms and max_idle must not be negative")
        self._fraction = renew_fraction
        self._issuer = issuer
        self._clock = clock
        self._idle_ms = idle_ms
        self._max_idle = max_idle
        self._slots: dict[str, _Slot] = {}
        self._retired: list[_Retired] = []
        self._cond = threading.Condition()
        self._maintaining = threading.Lock()
        self._closed = False

    def __repr__(self) -> str:
        return f"OwnerTokens(users={len(self._slots)}, retired={len(self._retired)})"

    # -- connections ------------------------------------------------------------
    def acquire(self, user: str) -> None:
        """A connection of ``user`` opens: its token is in use until :meth:`release`."""
        with self._cond:
            slot = self._slots.setdefault(user, _Slot())
            slot.connections += 1
            slot.idle_since_ms = None

    def release(self, user: str) -> None:
        """A connection of ``user`` closed; the last one starts the idle period."""
        with self._cond:
            if self._closed:
                return
            slot = self._slots.get(user)
            if slot is None or slot.connections == 0:
                raise ValueError(f"release({user!r}) without acquire")
            slot.connections -= 1
            if slot.connections == 0:
                slot.idle_since_ms = self._clock()

    # -- logins -------------------------------------------------------------------
    def cached(self, user: str) -> OwnerToken | None:
        """The token :meth:`login_for` would hand out now without asking the
        cluster or waiting, else ``None``. It never waits on the cluster (no
        RPC is made under the lock it takes): a login whose user has a token
        at hand needs no thread."""
        with self._cond:
            slot = self._slots.get(user)
            if self._closed or slot is None:
                return None
            return self._usable(user, slot, self._clock())

    def _usable(self, user: str, slot: _Slot, now: int) -> OwnerToken | None:
        token = slot.token
        if token is not None and now < token.expiry_ms - MIN_REMAINING_MS:
            return _handed_out(user, slot, token)
        return None

    def login_for(self, user: str) -> OwnerToken:
        """The token ``user``'s next upstream login uses, created on first need.

        Concurrent calls for one user wait for one create.

        Raises:
            OwnerTokenError: the cluster refused (held for a few seconds, so a
                burst of connections asks once) or is unreachable.
        """
        with self._cond:
            while True:
                if self._closed:
                    raise OwnerTokenError("the front door's owner tokens are closed")
                now = self._clock()
                slot = self._slots.setdefault(user, _Slot(idle_since_ms=now))
                usable = self._usable(user, slot, now)
                if usable is not None:
                    return usable
                if slot.refusal is not None and now - slot.refused_ms < FAILURE_HOLD_MS:
                    raise slot.refusal
                if not slot.busy:
                    slot.busy = True
                    break
                self._cond.wait()
        issued = self._create(user, slot)
        log.info("%s", OwnerTokenChange(TokenChange.CREATED, user, issued.token_id))
        with self._cond:
            return _handed_out(user, slot, issued)

    def _create(self, user: str, slot: _Slot) -> IssuedToken:
        """Create ``user``'s token (``slot.busy`` set by the caller) and install it."""
        try:
            issued = _ask(self._issuer.create, user)
        except OwnerTokenError as exc:
            with self._cond:
                slot.busy = False
                slot.refusal, slot.refused_ms = exc, self._clock()
                self._cond.notify_all()
            raise
        except BaseException:
            with self._cond:
                slot.busy = False
                self._cond.notify_all()
            raise
        with self._cond:
            slot.busy = False
            self._cond.notify_all()
            closed = self._closed
            if not closed:
                now = self._clock()
                if slot.token is not None:
                    self._retired.append(_Retired(now + HANDOVER_MS, user, slot.token))
                # A new token asks the cluster again: its owner's grants may have changed.
                slot.token, slot.refusal, slot.operations = issued, None, None
                slot.renewed_ms = slot.created_ms = now
        if closed:
            self._expire_quietly(issued)
            raise OwnerTokenError("the front door's owner tokens are closed")
        return issued

    def record_operations(self, user: str, token_id: str, operations: ClusterOperations) -> None:
        """What the cluster answered ``user``'s token ``token_id`` about its owner's
        cluster operations, kept with that token: later logins with it are
        handed it (:attr:`OwnerToken.cluster_operations`) and ask nothing."""
        with self._cond:
            slot = self._slots.get(user)
            if slot is not None and slot.token is not None and slot.token.token_id == token_id:
                slot.operations = operations

    def check(self, owner: str = CHECK_OWNER) -> None:
        """At start: the cluster issues a token owned by ``owner``.

        The token is expired by :meth:`maintain` after :data:`HANDOVER_MS`, or by
        :meth:`close`: a KRaft broker knows a new token only once the metadata
        log reaches it, and until then refuses to expire it
        (DELEGATION_TOKEN_NOT_FOUND).

        Raises:
            OwnerTokenError: one line naming the cause and the fix.
        """
        issued = _ask(self._issuer.create, owner)
        with self._cond:
            self._retired.append(_Retired(self._clock() + HANDOVER_MS, owner, issued, "check"))

    # -- maintenance ----------------------------------------------------------------
    def due_ms(self) -> int | None:
        """When :meth:`maintain` next has something to do (epoch ms), or ``None``."""
        with self._cond:
            times = [r.expire_at_ms for r in self._retired]
            for slot in self._slots.values():
                if slot.token is not None:
                    times.append(slot.renew_at(self._fraction))
                if slot.idle_since_ms is not None:
                    times.append(slot.idle_since_ms + self._idle_ms)
            return min(times, default=None)

    def maintain(self, now: int) -> list[OwnerTokenChange]:
        """Renew, replace and expire what is due at ``now``; each change is logged.

        A token past ``renew_fraction`` of its expiry period is renewed; one
        the cluster will not extend (its max lifetime) or no longer knows is
        replaced by a new one; tokens without connections for ``idle_ms`` (and
        the longest unused beyond ``max_idle``) and replaced tokens past their
        handover are expired. A failure is reported once, until it recovers.
        """
        with self._maintaining:
            with self._cond:
                if self._closed:
                    return []
                idle = self._take_idle(now)
                retired = [r for r in self._retired if r.expire_at_ms <= now]
                self._retired = [r for r in self._retired if r.expire_at_ms > now]
                due = [
                    (user, slot)
                    for user, slot in self._slots.items()
                    if slot.token is not None
                    and not slot.busy
                    and now >= slot.renew_at(self._fraction)
                ]
            changes: list[OwnerTokenChange] = []
            for user, token in idle:
                self._expire_quietly(token)
                changes.append(OwnerTokenChange(TokenChange.EXPIRED, user, token.token_id, "idle"))
            for r in retired:
                self._expire_quietly(r.token)
                changes.append(
                    OwnerTokenChange(TokenChange.EXPIRED, r.user, r.token.token_id, r.reason)
                )
            for user, slot in due:
                changes.extend(self._refresh(user, slot, now))
        for change in changes:
            if change.change is TokenChange.FAILING:
                log.warning("%s", change)
            else:
                log.info("%s", change)
        return changes

    def _take_idle(self, now: int) -> list[tuple[str, IssuedToken]]:
        """Remove the slots unused for ``idle_ms``, then the longest unused beyond
        ``max_idle``; their tokens, to expire (under the lock)."""
        unused = sorted(
            (slot.idle_since_ms, user)
            for user, slot in self._slots.items()
            if slot.idle_since_ms is not None and slot.connections == 0 and not slot.busy
        )
        over = max(len(unused) - self._max_idle, 0)
        taken = []
        for rank, (since, user) in enumerate(unused):
            if rank < over or now - since >= self._idle_ms:
                slot = self._slots.pop(user)
                if slot.token is not None:
                    taken.append((user, slot.token))
        return taken

    def _refresh(self, user: str, slot: _Slot, now: int) -> list[OwnerTokenChange]:
        """Renew ``user``'s due token, or replace it when renewing cannot help."""
        with self._cond:
            token = slot.token
            if token is None or slot.busy:
                return []
            slot.busy = True
        changes: list[OwnerTokenChange] = []
        replace = token.expiry_ms >= token.max_ms
        if not replace:
            try:
                expiry = _ask(self._issuer.renew, token.hmac)
            except OwnerTokenError as exc:
                # A token the cluster refuses to renew (expired, gone, not ours to
                # renew) is replaced; one it could not be asked about is kept and
                # renewed again at the next maintenance while it lasts.
                replace = exc.error_code is not None or now >= token.expiry_ms - MIN_REMAINING_MS
                if not replace:
                    with self._cond:
                        slot.busy = False
                        self._cond.notify_all()
                    return self._failing(user, slot, token, exc)
            else:
                with self._cond:
                    slot.token = IssuedToken(token.token_id, token.hmac, expiry, token.max_ms)
                    slot.renewed_ms = now
                    slot.busy = False
                    self._cond.notify_all()
                changes.append(OwnerTokenChange(TokenChange.RENEWED, user, token.token_id))
                return self._recovered(user, slot, token) + changes
        try:
            issued = self._create(user, slot)
        except OwnerTokenError as exc:
            return self._failing(user, slot, token, exc)
        detail = f"by {issued.token_id}"
        changes.append(OwnerTokenChange(TokenChange.REPLACED, user, token.token_id, detail))
        return self._recovered(user, slot, token) + changes

    def _failing(
        self, user: str, slot: _Slot, token: IssuedToken, exc: OwnerTokenError
    ) -> list[OwnerTokenChange]:
        with self._cond:
            if slot.failing:
                return []
            slot.failing = True
        return [OwnerTokenChange(TokenChange.FAILING, user, token.token_id, str(exc))]

    def _recovered(self, user: str, slot: _Slot, token: IssuedToken) -> list[OwnerTokenChange]:
        with self._cond:
            if not slot.failing:
                return []
            slot.failing = False
        return [OwnerTokenChange(TokenChange.RECOVERED, user, token.token_id)]

    # -- shutdown -----------------------------------------------------------------
    def close(self) -> None:
        """Expire every token this created (best effort); later logins fail."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            tokens = [s.token for s in self._slots.values() if s.token is not None]
            tokens += [r.token for r in self._retired]
            self._slots.clear()
            self._retired.clear()
            self._cond.notify_all()
        for token in tokens:
            self._expire_quietly(token)

    def _expire_quietly(self, token: IssuedToken) -> None:
        """Expire ``token``; a failure only logs: it lapses at its expiry anyway."""
        try:
            _ask(self._issuer.expire, token.hmac)
        except OwnerTokenError as exc:
            log.warning("owner token %s not expired: %s", token.token_id, exc)
