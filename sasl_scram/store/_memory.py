"""The in-memory store: KIP-554 reference semantics and the test fake."""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Mapping
from collections.abc import Sequence
from types import MappingProxyType

from sasl_scram._credential import ScramCredential
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.store import _kip554
from sasl_scram.store._api import CREDENTIAL_STORE_ERRORS
from sasl_scram.store._api import AlterResult
from sasl_scram.store._api import DescribeResult
from sasl_scram.store._iterations import IterationCounts
from sasl_scram.store._kind import StoreKind

__all__ = ["InMemoryCredentialStore"]

_Creds = Mapping[ScramMechanism, ScramCredential]


_KIND = StoreKind(
    what="credential store",
    errors=CREDENTIAL_STORE_ERRORS,
    logger=logging.getLogger("sasl_scram.store"),
)


class InMemoryCredentialStore(_kip554.AlterByUser):
    """A process-local :class:`~sasl_scram.store.CredentialStore`.

    Each user's credentials are an immutable mapping replaced as a whole, so a
    lookup never takes a lock and never sees half an alteration (per-user
    atomicity, as KIP-554's alter requires).

    Args:
        credentials: Optional initial content, ``{user: {mechanism: credential}}``.
    """

    kind = _KIND

    def __init__(self, credentials: Mapping[str, _Creds] | None = None) -> None:
        super().__init__()
        self._users: dict[str, _Creds] = {}
        for user, creds in (credentials or {}).items():
            if creds:
                self._users[user] = MappingProxyType(dict(creds))
        self._write_lock = threading.Lock()
        self._decoy_secret = secrets.token_bytes(32)
        self._iterations = IterationCounts()
        self._iterations.reset(self._users.values())

    def __repr__(self) -> str:
        return f"InMemoryCredentialStore(users={len(self._users)})"

    def decoy_secret(self) -> bytes:
        """Random per store: nothing outlives the process anyway."""
        return self._decoy_secret

    def common_iterations(self, mechanism: ScramMechanism) -> int | None:
        """The most common iteration count of ``mechanism``'s credentials."""
        return self._iterations.common(mechanism)

    @property
    def lookup_may_block(self) -> bool:
        return False  # every lookup is answered from memory

    def lookup(self, user: str, mechanism: ScramMechanism) -> ScramCredential | None:
        """The credential for ``(user, mechanism)`` or ``None``."""
        creds = self._users.get(user)
        return None if creds is None else creds.get(mechanism)

    def describe(self, users: Sequence[str] | None = None) -> DescribeResult:
        """KIP-554 describe (see :func:`sasl_scram.store._kip554.describe_users`)."""
        snapshot = dict(self._users)

        def read(user: str) -> dict[ScramMechanism, int] | None:
            creds = snapshot.get(user)
            return None if creds is None else {m: c.iterations for m, c in creds.items()}

        return _kip554.describe_users(users, read, lambda: snapshot)

    def _altered(self, users: list[str]) -> None:
        # Lookups read self._users directly: only the listeners need telling.
        self._listeners.notify(users)

    def _alter_user(self, alteration: _kip554.UserAlteration) -> AlterResult:
        with self._write_lock:
            current = self._users.get(alteration.user, {})
            outcome = _kip554.resolve_user(alteration, current)
            if isinstance(outcome, AlterResult):
                return outcome
            updated = outcome.apply(current)
            if updated:
                self._users[alteration.user] = MappingProxyType(updated)
            else:
                self._users.pop(alteration.user, None)
            self._iterations.change(current, updated)
        return AlterResult(alteration.user)
