"""The in-memory stores: KIP-554 and ACL reference semantics, and the test fakes."""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Mapping
from collections.abc import Sequence
from types import MappingProxyType

from sasl_scram._credential import ScramCredential
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.authz import AclBinding
from sasl_scram.authz import Authorizer
from sasl_scram.authz import ResourcePattern
from sasl_scram.store import _kip554
from sasl_scram.store._acls import AclSnapshot
from sasl_scram.store._acls import AclWrites
from sasl_scram.store._acls import Change
from sasl_scram.store._acls import acl_listeners
from sasl_scram.store._acls import pattern_key
from sasl_scram.store._api import ACL_STORE_ERRORS
from sasl_scram.store._api import CREDENTIAL_STORE_ERRORS
from sasl_scram.store._api import AlterResult
from sasl_scram.store._api import DescribeResult
from sasl_scram.store._iterations import IterationCounts
from sasl_scram.store._kind import StoreKind

__all__ = ["InMemoryAclStore", "InMemoryCredentialStore"]

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


_ACL_KIND = StoreKind(
    what="ACL store",
    errors=ACL_STORE_ERRORS,
    logger=logging.getLogger("sasl_scram.store"),
    listeners=acl_listeners,
)


class InMemoryAclStore(AclWrites):
    """A process-local :class:`~sasl_scram.store.AclStore`.

    Args:
        bindings: Optional initial ACLs, created as CreateAcls would (a binding
            CreateAcls refuses raises ``ValueError``).
    """

    kind = _ACL_KIND

    def __init__(self, bindings: Sequence[AclBinding] = ()) -> None:
        super().__init__()
        self._snapshot = AclSnapshot()
        self._write_lock = threading.Lock()
        refused = [r for r in self.create_acls(bindings) if r.error]
        if refused:
            raise ValueError(f"cannot store {refused[0].binding}: {refused[0].message}")

    def __repr__(self) -> str:
        return f"InMemoryAclStore(acls={len(self._snapshot)})"

    def acls(self) -> Authorizer:
        """The snapshot (no lock, no I/O)."""
        if self._closed:
            self._check_open()
        return self._snapshot.authorizer

    def _known_patterns(self) -> list[ResourcePattern]:
        return self._snapshot.patterns()

    def _update(self, pattern: ResourcePattern, change: Change) -> bool:
        with self._write_lock:
            current = self._snapshot.get(pattern)
            return bool(self._snapshot.apply({pattern: change(current)}))

    def _updated(self, patterns: list[ResourcePattern]) -> None:
        # The snapshot was changed in place: only the listeners need telling.
        self._listeners.notify(pattern_key(p) for p in patterns)
