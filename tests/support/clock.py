"""The one fake clock of the tests: time that moves only when a test moves it.

The code under test takes its clock as a callable (epoch milliseconds for the
token rules and the endpoint's connections, seconds for the worker supervisor),
so a test hands it a ``FakeClock`` and calls ``advance`` instead of sleeping.
"""

from __future__ import annotations

import time
from typing import Generic
from typing import TypeVar

__all__ = ["T0", "FakeClock"]

#: A fixed "now" in epoch milliseconds (2023-11-14), the default start.
T0 = 1_700_000_000_000

N = TypeVar("N", int, float)


class FakeClock(Generic[N]):
    """A clock that returns ``now`` until told otherwise.

    Args:
        now: The starting time, in the unit the code under test reads
            (an ``int`` of milliseconds, or a ``float`` of seconds).
    """

    def __init__(self, now: N) -> None:
        self.now: N = now

    @classmethod
    def epoch_ms(cls, now: int = T0) -> FakeClock[int]:
        """Epoch milliseconds starting at ``now`` (:data:`T0` by default)."""
        return FakeClock(now)

    @classmethod
    def wall_ms(cls) -> FakeClock[int]:
        """Epoch milliseconds starting at the real time now (for peers that compare
        token expiry with their own clock), then frozen."""
        return FakeClock(time.time_ns() // 1_000_000)

    def __call__(self) -> N:
        return self.now

    def advance(self, by: N) -> None:
        """Move time forward by ``by`` (in the clock's unit)."""
        self.now += by
