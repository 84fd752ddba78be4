"""The supervisor's vocabulary: states, transitions, policy, and what it drives.

Kept apart from ``_supervisor.py`` so the state machine reads on its own.
"""

from __future__ import annotations

import enum
import logging
from collections import deque
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple
from typing import Protocol

import jaas
from sasl_scram import KafkaPrincipal
from sasl_scram import ScramError
from sasl_scram.kafka import ErrorCode
from tokenauth._errors import TokenError
from tokenauth._token import DelegationToken
from tokenauth.spark._options import SparkTokenError

__all__ = [
    "StreamingQueryLike",
    "SupervisorError",
    "SupervisorPolicy",
    "SupervisorState",
    "TokenClient",
    "Transition",
]

# Answers meaning the token no longer exists on the broker: renewing is
# pointless (replace it) and expiring it again is already done.
_TOKEN_GONE = frozenset({ErrorCode.DELEGATION_TOKEN_NOT_FOUND, ErrorCode.DELEGATION_TOKEN_EXPIRED})
# Replaced tokens lapse at their expiry anyway; stop asking after this many tries.
_MAX_EXPIRE_ATTEMPTS = 5
# Keep the last transitions for inspection; older ones are only in the logs.
_HISTORY = 256

_log = logging.getLogger("tokenauth.spark")


class SupervisorError(SparkTokenError):
    """The supervisor could not start, or the supervised query failed."""


class SupervisorState(enum.Enum):
    """Where the supervisor is; every change is logged at INFO."""

    NEW = "new"
    OBTAINING = "obtaining"  # creating the first token
    STARTING = "starting"  # starting the query with the current token
    RUNNING = "running"
    RENEWING = "renewing"
    ROTATING = "rotating"  # creating the replacement token
    RESTARTING = "restarting"  # stopping the query, starting it with the new token
    EXPIRING = "expiring"  # expiring a replaced token
    BACKING_OFF = "backing-off"
    STOPPING = "stopping"
    STOPPED = "stopped"
    FAILED = "failed"


_FINAL = (SupervisorState.STOPPED, SupervisorState.FAILED)


class Transition(NamedTuple):
    """One state change: local time (ms), from, to, and a secret-free detail."""

    at_ms: int
    source: SupervisorState
    target: SupervisorState
    detail: str


class _StateLog:
    """The current state and the bounded history of changes, each logged."""

    def __init__(self, clock_ms: Callable[[], int]) -> None:
        self._clock = clock_ms
        self.state = SupervisorState.NEW
        self.history: deque[Transition] = deque(maxlen=_HISTORY)

    def enter(self, state: SupervisorState, detail: str, level: int = logging.INFO) -> None:
        """Move to ``state`` (``detail`` must be secret-free); no-op if already there."""
        old = self.state
        if old is state:
            return
        self.state = state
        self.history.append(Transition(self._clock(), old, state, detail))
        _log.log(
            level,
            "spark token supervisor: %s -> %s%s",
            old.value,
            state.value,
            f" ({detail})" if detail else "",
        )


class StreamingQueryLike(Protocol):
    """The parts of ``pyspark.sql.streaming.StreamingQuery`` the supervisor uses."""

    @property
    def id(self) -> str: ...

    @property
    def runId(self) -> str: ...  # noqa: N802 (pyspark's name)

    @property
    def isActive(self) -> bool: ...  # noqa: N802 (pyspark's name)

    def stop(self) -> None: ...

    def exception(self) -> object | None: ...


class TokenClient(Protocol):
    """The token RPCs the supervisor calls (:class:`DelegationTokenClient`)."""

    def __enter__(self) -> TokenClient: ...

    def __exit__(self, *_: object) -> None: ...

    def create_token(
        self, renewers: Sequence[KafkaPrincipal] = (), max_lifetime_ms: int = -1
    ) -> DelegationToken: ...

    def renew_token(self, hmac: bytes, renew_period_ms: int = -1) -> int: ...

    def expire_token(self, hmac: bytes, expiry_period_ms: int = -1) -> int: ...


@dataclass(frozen=True)
class SupervisorPolicy:
    """When to renew and replace tokens, and how to retry.

    Attributes:
        renew_ratio: Renew after this fraction of the time left until expiry
            (Spark's ``spark.security.credentials.renewalRatio``).
        rotate_ratio: Replace the token after this fraction of its maximum
            lifetime (issue to max timestamp); also replaced whenever a renewal
            can no longer move the expiry.
        max_lifetime_ms: Requested maximum lifetime; ``-1`` takes the broker's
            ``delegation.token.max.lifetime.ms``.
        renew_period_ms: Requested renewal period; ``-1`` takes the broker's
            ``delegation.token.expiry.time.ms``.
        renewers: Principals that may also renew the tokens.
        initial_backoff_ms: First retry delay after a failure; doubles each
            consecutive failure.
        max_backoff_ms: Upper bound of the retry delay.
        token_ready_timeout_ms: How long a new token may take to log in on
            the login's bootstrap brokers (only those) before the query gets it (brokers learn a
            token a moment after CreateDelegationToken answers); past it, the
            creation counts as failed. ``0`` hands it over at once. Only
            checked with a ``ClientConfig`` login.
        check_interval_ms: How often the query's health is checked when
            nothing else is due.
        min_interval_ms: Floor of any wait, so a misbehaving clock or broker
            cannot make the loop spin.
    """

    renew_ratio: float = 0.75
    rotate_ratio: float = 0.75
    max_lifetime_ms: int = -1
    renew_period_ms: int = -1
    renewers: tuple[KafkaPrincipal, ...] = ()
    initial_backoff_ms: int = 1_000
    max_backoff_ms: int = 60_000
    token_ready_timeout_ms: int = 30_000
    check_interval_ms: int = 5_000
    min_interval_ms: int = 50

    def __post_init__(self) -> None:
        for name in ("renew_ratio", "rotate_ratio"):
            value = getattr(self, name)
            if not 0.0 < value < 1.0:
                raise ValueError(f"{name}: must be strictly between 0 and 1, got {value}")
        if self.initial_backoff_ms <= 0 or self.max_backoff_ms < self.initial_backoff_ms:
            raise ValueError("backoff: need 0 < initial_backoff_ms <= max_backoff_ms")
        if self.token_ready_timeout_ms < 0:
            raise ValueError("token_ready_timeout_ms must be >= 0")
        if self.check_interval_ms <= 0 or self.min_interval_ms < 0:
            raise ValueError("check_interval_ms must be positive and min_interval_ms >= 0")


@dataclass
class _Held:
    """A token we own, with its timestamps moved to the local clock."""

    token: DelegationToken
    skew_ms: int  # broker clock minus local clock, estimated at creation
    last_renewed_ms: int
    expiry_ms: int
    max_ms: int
    issued_ms: int
    dead: bool = False  # the broker says it is gone: replace it now
    expire_attempts: int = 0

    @classmethod
    def of(cls, token: DelegationToken, now_ms: int) -> _Held:
        info = token.info
        # The issue timestamp is the broker's "now" when it answered; using
        # it as the skew estimate keeps the schedule right when clocks differ.
        skew = info.issue_timestamp_ms - now_ms
        return cls(
            token,
            skew,
            now_ms,
            info.expiry_timestamp_ms - skew,
            info.max_timestamp_ms - skew,
            now_ms,
        )

    @property
    def token_id(self) -> str:
        return self.token.token_id


def _describe(exc: BaseException) -> str:
    """A log-safe description: our errors' messages carry no secret by rule;
    anything else (py4j, Spark) is named by type only."""
    if isinstance(exc, TokenError | ScramError | jaas.JaasError):
        return f"{type(exc).__name__}: {exc}"
    return type(exc).__name__
