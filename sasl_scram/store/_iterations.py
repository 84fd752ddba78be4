"""How many of a store's credentials have each iteration count, per mechanism.

An unknown user's decoy must show an iteration count that a real user of the
mechanism could have, or the count alone tells the two apart. The store's most
common count is such a count; this histogram keeps it current as credentials
are added, replaced and deleted (by this process or, through the store's change
feed, by another), so a login reads it with one dictionary lookup.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping

from sasl_scram._credential import ScramCredential
from sasl_scram._mechanism import ScramMechanism

__all__ = ["IterationCounts"]

_Creds = Mapping[ScramMechanism, ScramCredential]


class IterationCounts:
    """Per mechanism, how many credentials have each iteration count.

    Changed only by its owner under the owner's write lock; :meth:`common` is a
    lock-free read of a value replaced whole.
    """

    __slots__ = ("_common", "_counts")

    def __init__(self) -> None:
        self._counts: dict[ScramMechanism, dict[int, int]] = {}
        self._common: dict[ScramMechanism, int] = {}

    def common(self, mechanism: ScramMechanism) -> int | None:
        """The count most credentials of ``mechanism`` have; on a tie the higher
        one, so every process on one store agrees. ``None`` when there is none."""
        return self._common.get(mechanism)

    def change(self, old: _Creds, new: _Creds) -> None:
        """One user's credentials went from ``old`` to ``new``."""
        touched: set[ScramMechanism] = set()
        for mechanism, credential in old.items():
            replaced = new.get(mechanism)
            if replaced is None or replaced.iterations != credential.iterations:
                self._add(mechanism, credential.iterations, -1)
                touched.add(mechanism)
        for mechanism, credential in new.items():
            previous = old.get(mechanism)
            if previous is None or previous.iterations != credential.iterations:
                self._add(mechanism, credential.iterations, 1)
                touched.add(mechanism)
        for mechanism in touched:
            self._recompute(mechanism)

    def reset(self, users: Iterable[_Creds]) -> None:
        """Count ``users`` afresh (a full reload)."""
        self._counts = {}
        for creds in users:
            for mechanism, credential in creds.items():
                self._add(mechanism, credential.iterations, 1)
        common: dict[ScramMechanism, int] = {}
        for mechanism, counts in self._counts.items():
            common[mechanism] = _most_common(counts)
        self._common = common

    def _add(self, mechanism: ScramMechanism, iterations: int, delta: int) -> None:
        counts = self._counts.setdefault(mechanism, {})
        left = counts.get(iterations, 0) + delta
        if left > 0:
            counts[iterations] = left
        else:
            counts.pop(iterations, None)

    def _recompute(self, mechanism: ScramMechanism) -> None:
        # Over the distinct counts only: a handful, whatever the number of users.
        counts = self._counts.get(mechanism)
        if counts:
            self._common[mechanism] = _most_common(counts)
        else:
            self._counts.pop(mechanism, None)
            self._common.pop(mechanism, None)


def _most_common(counts: Mapping[int, int]) -> int:
    return max(counts.items(), key=lambda item: (item[1], item[0]))[0]
