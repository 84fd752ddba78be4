"""Whether the cluster answers, as the front door last found it, and when to look again.

A Kafka client spaces its connection attempts to a broker that does not
answer: ``ClusterConnectionStates`` waits ``reconnect.backoff.ms`` (50 ms) after
a failure, doubling with each one up to ``reconnect.backoff.max.ms`` (1 s),
each wait drawn within 20% either side (``ExponentialBackoff``). The front door
looks at an unreachable cluster the same way, once for all the connections
that wait for it, rather than each of them trying on its own.

:class:`Reachability` is the state of one set of cluster addresses (the
bootstrap servers, or one broker behind its node port): reachable or not,
since when, and how long until the next look. It says when the state changes,
so that the adapter logs each change once; the clock and the random draw are
the caller's.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Backoff", "Reachability"]


@dataclass(frozen=True)
class Backoff:
    """Kafka's ``ExponentialBackoff``: ``initial_s * multiplier ** attempts``,
    times a factor drawn in ``[1 - jitter, 1 + jitter)``, at most ``max_s``.

    The defaults are Kafka's clients' ``reconnect.backoff.ms`` (50) and
    ``reconnect.backoff.max.ms`` (1000), doubling, 20% jitter.
    """

    initial_s: float = 0.05
    max_s: float = 1.0
    multiplier: float = 2.0
    jitter: float = 0.2

    def delay(self, attempts: int, random: float) -> float:
        """Seconds to wait after ``attempts`` failures in a row (0: the first
        failure); ``random`` is a draw in ``[0, 1)``."""
        if self.initial_s >= self.max_s:
            return self.max_s
        # Past the cap the exponent stops growing (ExponentialBackoff's expMax),
        # so a long outage never overflows the power.
        term = self.initial_s * self.multiplier ** min(attempts, 64)
        factor = 1 - self.jitter + 2 * self.jitter * random
        return min(term * factor, self.max_s)


class Reachability:
    """One set of cluster addresses: reachable or not, and the next look.

    Args:
        backoff: How looks at an unreachable cluster are spaced.
    """

    __slots__ = ("backoff", "down_since", "failures", "problem", "reachable")

    def __init__(self, backoff: Backoff | None = None) -> None:
        self.backoff = backoff or Backoff()
        #: What the last connection found; True until one fails.
        self.reachable = True
        #: Why the last connection failed, while unreachable.
        self.problem: str | None = None
        #: Failed connections in a row.
        self.failures = 0
        #: When it became unreachable (the caller's clock), while it is.
        self.down_since: float | None = None

    def failed(self, now: float, problem: str) -> bool:
        """A connection to these addresses failed; True when that is news
        (they were reachable until now)."""
        self.failures += 1
        self.problem = problem
        if not self.reachable:
            return False
        self.reachable = False
        self.down_since = now
        return True

    def reached(self) -> bool:
        """A connection to these addresses succeeded (or was refused by a
        broker, which answers); True when that is news."""
        news = not self.reachable
        self.reachable, self.failures, self.problem, self.down_since = True, 0, None, None
        return news

    def next_look(self, random: float) -> float:
        """Seconds until the next look, after the failures so far."""
        return self.backoff.delay(max(self.failures - 1, 0), random)
