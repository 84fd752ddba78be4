"""The local credential cache behind a remote store: eager or lazy, with staleness.

* **Eager** holds every user, like a broker's ``CredentialCache`` after
  ``ZkConfigManager`` loads ``/config/users/*`` at start-up.
* **Lazy** holds at most ``max_users`` users (a cachetools LRU, absent users
  included as negative entries), filled on demand and invalidated by change
  notifications. An epoch counter stops a slow fill from re-inserting data
  that an invalidation made obsolete while it was being read.

Staleness (:class:`~sasl_scram.store._freshness.Freshness`): while the backing
store is unreachable the cache keeps answering for ``max_staleness`` seconds
after the connection was lost, then fails closed with
:class:`CredentialStoreUnavailable` until a full resync succeeds.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from types import MappingProxyType

import cachetools

from sasl_scram._credential import ScramCredential
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.store._api import CredentialStoreError
from sasl_scram.store._api import CredentialStoreUnavailable
from sasl_scram.store._freshness import DEFAULT_MAX_STALENESS
from sasl_scram.store._freshness import Freshness
from sasl_scram.store._iterations import IterationCounts

__all__ = ["DEFAULT_LAZY_MAX_USERS", "DEFAULT_MAX_STALENESS", "CredentialCache", "UserCredentials"]

UserCredentials = Mapping[ScramMechanism, ScramCredential]
EMPTY: UserCredentials = MappingProxyType({})

DEFAULT_LAZY_MAX_USERS = 10_000


def freeze(creds: Mapping[ScramMechanism, ScramCredential]) -> UserCredentials:
    """An immutable copy, shared with lookups without locking."""
    return MappingProxyType(dict(creds)) if creds else EMPTY


class CredentialCache(Freshness):
    """Thread-safe user -> credentials view with a freshness state.

    Args:
        lazy: Bounded on-demand cache instead of a full copy.
        max_users: The lazy cache's bound.
        max_staleness: Seconds to keep serving after the connection is lost.
        monotonic: The clock for staleness (``time.monotonic`` in production).
    """

    def __init__(
        self,
        *,
        lazy: bool,
        max_users: int,
        max_staleness: float,
        monotonic: Callable[[], float],
    ) -> None:
        super().__init__(
            max_staleness=max_staleness,
            monotonic=monotonic,
            closed_error=CredentialStoreError,
            unavailable=CredentialStoreUnavailable,
            what="credential store",
        )
        self.lazy = lazy
        # Eager: a plain dict read without locks (single get is atomic); the
        # values are immutable mappings replaced whole.
        self.users: dict[str, UserCredentials] = {}
        #: The iteration counts of the credentials held (every user when eager,
        #: the cached ones when lazy), for unknown users' decoys.
        self.iterations = IterationCounts()
        self._lru: cachetools.LRUCache[str, UserCredentials] = _CountedLRU(
            max(1, max_users), self.iterations
        )
        self._epoch = 0

    def close(self) -> None:
        super().close()
        with self._lock:
            self.users = {}
            self._lru.clear()
            self.iterations.reset(())

    # -- reads ---------------------------------------------------------------------

    def get(self, user: str) -> UserCredentials | None:
        """Cached credentials; ``None`` only for a lazy-mode miss."""
        if not self.lazy:
            return self.users.get(user, EMPTY)
        with self._lock:
            return self._lru.get(user)

    @property
    def epoch(self) -> int:
        return self._epoch

    def __len__(self) -> int:
        return len(self._lru) if self.lazy else len(self.users)

    # -- writes --------------------------------------------------------------------

    def put(self, user: str, creds: Mapping[ScramMechanism, ScramCredential]) -> bool:
        """Set one user's credentials (eager) or refresh a cached entry (lazy).

        Returns whether anything visible changed.
        """
        frozen = freeze(creds)
        with self._lock:
            if self.lazy:
                self._epoch += 1
                old = self._lru.pop(user, None)
                if old is not None:
                    self.iterations.change(old, EMPTY)
                return old is not None and dict(old) != dict(frozen)
            old = self.users.get(user, EMPTY)
            if frozen:
                self.users[user] = frozen
            else:
                self.users.pop(user, None)
            self.iterations.change(old, frozen)
            return dict(old) != dict(frozen)

    def fill(self, user: str, creds: Mapping[ScramMechanism, ScramCredential], epoch: int) -> None:
        """Lazy mode: insert what a miss read, unless an invalidation happened since."""
        with self._lock:
            if self._epoch == epoch and not self._closed:
                frozen = freeze(creds)
                self.iterations.change(self._lru.pop(user, EMPTY), frozen)
                self._lru[user] = frozen

    def invalidate(self, user: str) -> None:
        """Lazy mode: forget one user (the next lookup reads it again)."""
        with self._lock:
            self._epoch += 1
            self.iterations.change(self._lru.pop(user, EMPTY), EMPTY)

    def replace_all(
        self, users: Mapping[str, Mapping[ScramMechanism, ScramCredential]]
    ) -> list[str]:
        """Eager mode: swap in a full copy; returns the users whose credentials changed."""
        fresh = {u: freeze(c) for u, c in users.items() if c}
        with self._lock:
            old = self.users
            self.users = fresh
            self._epoch += 1
            self.iterations.reset(fresh.values())
        changed = [u for u in fresh if dict(old.get(u, EMPTY)) != dict(fresh[u])]
        changed += [u for u in old if u not in fresh]
        return changed

    def clear(self) -> list[str]:
        """Lazy mode: drop everything; returns the users that were cached."""
        with self._lock:
            self._epoch += 1
            users = list(self._lru.keys())
            self._lru.clear()
            self.iterations.reset(())
        return users

    def cached_users(self) -> Iterable[str]:
        with self._lock:
            return list(self._lru.keys()) if self.lazy else list(self.users)


class _CountedLRU(cachetools.LRUCache[str, UserCredentials]):
    """The lazy cache: a user it evicts to make room leaves the iteration counts too."""

    def __init__(self, maxsize: int, counts: IterationCounts) -> None:
        super().__init__(maxsize=maxsize)
        self._counts = counts

    def popitem(self) -> tuple[str, UserCredentials]:
        user, creds = super().popitem()
        self._counts.change(creds, EMPTY)
        return user, creds
