"""When the supervisor's next duty falls: renewal, rotation, retry.

Pure arithmetic on a held token, the policy and the local clock, so that the
schedule can be read (and tested) apart from the state machine. Renewal
follows Spark's ``HadoopDelegationTokenManager``: at ``renew_ratio`` of the
time left since the last renewal (``spark.security.credentials.
renewalRatio``).
"""

from __future__ import annotations

from tokenauth.spark._policy import SupervisorPolicy
from tokenauth.spark._policy import _Held

__all__ = ["Backoff", "next_due_ms", "renewal_at_ms", "rotation_at_ms", "rotation_due", "wait_ms"]


def renewal_at_ms(held: _Held, policy: SupervisorPolicy) -> int:
    """Local time at which ``held`` is renewed."""
    span = held.expiry_ms - held.last_renewed_ms
    return held.last_renewed_ms + int(policy.renew_ratio * span)


def rotation_at_ms(held: _Held, policy: SupervisorPolicy) -> int:
    """Local time at which ``held`` is replaced by a new token."""
    return held.issued_ms + int(policy.rotate_ratio * (held.max_ms - held.issued_ms))


def rotation_due(held: _Held, policy: SupervisorPolicy, now: int, *, pending: bool) -> bool:
    """Whether ``held`` must be replaced now.

    It must when the broker says it is gone, when a replacement is already
    half-way (``pending``), when its rotation time has come, or when a renewal
    is due but can no longer move the expiry (it reached the maximum).
    """
    if held.dead or pending or now >= rotation_at_ms(held, policy):
        return True
    return now >= renewal_at_ms(held, policy) and held.expiry_ms >= held.max_ms


def next_due_ms(held: _Held, policy: SupervisorPolicy, now: int) -> int:
    """The next renewal, rotation or health check, whichever comes first."""
    return min(
        renewal_at_ms(held, policy),
        rotation_at_ms(held, policy),
        now + policy.check_interval_ms,
    )


def wait_ms(due: int, now: int, policy: SupervisorPolicy) -> int:
    """How long the loop sleeps before the duty due at ``due``: never less than
    ``min_interval_ms`` (a clock or broker cannot make it spin), never more
    than ``check_interval_ms`` (the query's health is checked that often)."""
    return min(max(due - now, policy.min_interval_ms), policy.check_interval_ms)


class Backoff:
    """Exponential retry delays after consecutive failures (doubling, capped)."""

    def __init__(self, policy: SupervisorPolicy) -> None:
        self._policy = policy
        self.failures = 0
        self.retry_at: int | None = None
        self.near_expiry = False

    def fail(self, now: int, expiry_ms: int | None = None) -> int:
        """Count a failure; return the delay (ms) and set :attr:`retry_at`.

        ``expiry_ms`` is when the token the query logs in with lapses. A delay
        reaching past half the time left is cut to that half, so retries keep
        coming, ever closer, until it lapses: a broker back after a minute's
        outage still renews a token that had 90 s left, where a doubling
        back-off would have slept past its expiry. :attr:`near_expiry` says
        the delay was cut.
        """
        self.failures += 1
        p = self._policy
        delay = min(p.max_backoff_ms, p.initial_backoff_ms << min(self.failures - 1, 30))
        left = (expiry_ms - now) if expiry_ms is not None else 0
        self.near_expiry = left > 0 and delay > left // 2
        if self.near_expiry:
            delay = max(left // 2, p.min_interval_ms)
        self.retry_at = now + delay
        return delay

    def succeed(self) -> None:
        self.failures = 0

    def waiting_until(self, now: int) -> int | None:
        """The retry time while it is still ahead, else ``None`` (and forget it)."""
        if self.retry_at is not None and now < self.retry_at:
            return self.retry_at
        self.retry_at = None
        return None
