"""The store contracts: credentials (a hot-path lookup plus KIP-554 describe/alter)
and the edge's ACLs (an immutable snapshot plus CreateAcls/DeleteAcls/DescribeAcls).

Every backend (in-memory, SQLite, ZooKeeper) and the remote admin client
implement :class:`ScramAdmin`; the servers additionally need
:class:`CredentialLookup`. Every backend also keeps ACLs (:class:`AclStore`), in
the same SQLite file or ZooKeeper ensemble as its credentials. Results carry
Kafka's error codes so the endpoint can put them on the wire unchanged
(docs/kafka-facts.md §7).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Protocol
from typing import runtime_checkable

from sasl_scram import _crypto
from sasl_scram._credential import ScramCredential
from sasl_scram._credential import kafka_salt
from sasl_scram._errors import ScramError
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.authz import AclBinding
from sasl_scram.authz import AclBindingFilter
from sasl_scram.authz import Authorizer
from sasl_scram.kafka import ErrorCode


class CredentialStoreError(ScramError):
    """A store could not complete an operation; nothing was changed or lost silently."""


class StoreUnavailable(Exception):
    """Any store behind a login (credentials, ``tokenauth``'s tokens) is
    unreachable or too stale to trust: the login fails closed.

    The endpoint catches this one class, so that it never needs to know the
    token stores (``sasl_scram`` never imports ``tokenauth``).
    """


class CredentialStoreUnavailable(CredentialStoreError, StoreUnavailable):
    """The backing store is unreachable (or too stale to trust): fail closed."""


class NoStore(Exception):
    """A store opened only to read (``create=False``) found none there: no SQLite
    file or none of its tables, no ZooKeeper chroot or path.

    The store's unavailable error is raised *from* it, so that a caller can tell
    "no store here" (a deletion from it finds nothing) from a store that cannot
    be reached.
    """


#: A credential store's error and its fail-closed one, as a store's kind names them.
CREDENTIAL_STORE_ERRORS = (CredentialStoreError, CredentialStoreUnavailable)


@dataclass(frozen=True, slots=True)
class ScramDeletion:
    """Remove one mechanism's credential from a user.

    ``mechanism`` is Kafka's type byte so that unknown values (0, 3, ...) can be
    carried to validation exactly as they arrive on the wire.
    """

    user: str
    mechanism: int


@dataclass(frozen=True, slots=True)
class ScramUpsertion:
    """Create or replace one mechanism's credential (the password never travels).

    The salted password is ``Hi(password, salt, iterations)`` computed by the client.
    """

    user: str
    mechanism: int
    iterations: int
    salt: bytes = field(repr=False)
    salted_password: bytes = field(repr=False)

    @classmethod
    def from_password(
        cls,
        user: str,
        mechanism: ScramMechanism,
        password: str,
        iterations: int = 4096,
        salt: bytes | None = None,
    ) -> ScramUpsertion:
        """Compute the salted password locally, as Kafka's admin client does."""
        salt = kafka_salt() if salt is None else salt
        salted = _crypto.salted_password(mechanism, password.encode("utf-8"), salt, iterations)
        return cls(user, mechanism.type_byte, iterations, salt, salted)


@dataclass(frozen=True, slots=True)
class AlterResult:
    """One per affected user, as in AlterUserScramCredentialsResponse."""

    user: str
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None


@dataclass(frozen=True, slots=True)
class CredentialInfo:
    mechanism: ScramMechanism
    iterations: int


@dataclass(frozen=True, slots=True)
class UserDescription:
    """One user's entry in DescribeUserScramCredentialsResponse."""

    user: str
    credentials: tuple[CredentialInfo, ...] = ()
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None


@dataclass(frozen=True, slots=True)
class DescribeResult:
    """The whole describe answer: a top-level error and per-user results."""

    results: tuple[UserDescription, ...] = ()
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None


@runtime_checkable
class CredentialLookup(Protocol):
    """What a SCRAM server needs: answered from memory on the hot path."""

    def lookup(self, user: str, mechanism: ScramMechanism) -> ScramCredential | None:
        """The stored credential, or ``None`` when the user has none for ``mechanism``.

        Raises:
            CredentialStoreUnavailable: the store cannot vouch for its data
                (e.g. ZooKeeper unreachable past the allowed staleness); the
                server must fail closed.
        """
        ...

    @property
    def lookup_may_block(self) -> bool:
        """Whether :meth:`lookup` may wait on the network (a lazy ZooKeeper cache miss),
        so an event loop must call it from a thread."""
        ...


@runtime_checkable
class ScramAdmin(Protocol):
    """KIP-554 semantics, implemented by every store and by the remote admin client."""

    def describe(self, users: Sequence[str] | None = None) -> DescribeResult:
        """Describe the given users, or every user with a credential when ``None``/empty."""
        ...

    def alter(
        self, deletions: Sequence[ScramDeletion], upsertions: Sequence[ScramUpsertion]
    ) -> list[AlterResult]:
        """Apply alterations with per-user atomicity; one result per affected user.

        A result with ``ErrorCode.NONE`` is durable when this returns.
        """
        ...


@runtime_checkable
class DecoySecretSource(Protocol):
    """A store that keeps the secret behind the decoys of unknown users.

    Every endpoint on one store then shows an unknown user the same decoy salt,
    across restarts, so decoys cannot be told from real users by comparing
    endpoints or restarts. The secret is as sensitive as a credential: it lives
    where the store's protection of credentials applies (file mode, ACLs).
    """

    def decoy_secret(self) -> bytes:
        """The store's decoy secret, made and persisted on first use.

        Raises:
            CredentialStoreUnavailable: it can be neither read nor created.
        """
        ...


@runtime_checkable
class DecoyIterationsSource(Protocol):
    """A store that knows which iteration count its users have most, per mechanism.

    An unknown user's decoy shows that count, so that the count in a
    server-first message does not tell a real user from an unknown one. The
    store keeps it current as credentials change, so reading it costs a
    dictionary lookup, never a scan.
    """

    def common_iterations(self, mechanism: ScramMechanism) -> int | None:
        """The iteration count most of the held credentials of ``mechanism`` have
        (the higher on a tie), or ``None`` when there is none. A lazy cache counts
        the users it holds."""
        ...


#: Called with a user's name after that user's credentials change.
ChangeListener = Callable[[str], None]


@runtime_checkable
class CredentialStore(CredentialLookup, ScramAdmin, Protocol):
    """A full backend: lookup, KIP-554 admin, change notification and lifecycle."""

    def add_listener(self, listener: ChangeListener) -> Callable[[], None]:
        """Call ``listener(user)`` after any user's credentials change (here or in
        another process); returns a function that removes the listener."""
        ...

    def close(self) -> None: ...


# -- ACLs ---------------------------------------------------------------------------


class AclStoreError(ScramError):
    """An ACL store could not complete an operation, or is closed."""


class AclStoreUnavailable(AclStoreError, StoreUnavailable):
    """The ACL store is unreachable or too stale to trust: authorization fails closed."""


#: An ACL store's error and its fail-closed one, as a store's kind names them.
ACL_STORE_ERRORS = (AclStoreError, AclStoreUnavailable)


@dataclass(frozen=True, slots=True)
class AclCreateResult:
    """One binding's answer to :meth:`AclStore.create_acls` (Kafka's ``AclCreateResult``):
    ``ErrorCode.NONE`` once the ACL is stored, durably, whether it was new or not."""

    binding: AclBinding
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None


@dataclass(frozen=True, slots=True)
class AclBindingDeleteResult:
    """One ACL a delete filter matched (Kafka's ``AclBindingDeleteResult``):
    ``ErrorCode.NONE`` once it is removed, durably."""

    binding: AclBinding
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None


@dataclass(frozen=True, slots=True)
class AclDeleteResult:
    """One filter's answer to :meth:`AclStore.delete_acls` (Kafka's ``AclDeleteResult``):
    the ACLs it matched, in Kafka's describe order, each with its own outcome."""

    filter: AclBindingFilter
    matches: tuple[AclBindingDeleteResult, ...] = ()
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None

    @property
    def deleted(self) -> tuple[AclBinding, ...]:
        """The matched ACLs that were removed."""
        return tuple(m.binding for m in self.matches if m.error == ErrorCode.NONE)


@runtime_checkable
class AclStore(Protocol):
    """The edge's ACLs, kept where its credentials are and shared by every process on them.

    Writes follow 3.9's ``AclAuthorizer`` (the authorizer that stores ACLs in
    Kafka's ZooKeeper layout; docs/stores.md): creating an ACL that exists
    succeeds and stores it once; a delete filter lists each ACL it removed, an
    ACL matched by several filters under the first; a result with
    ``ErrorCode.NONE`` is durable when the call returns.
    """

    def acls(self) -> Authorizer:
        """The ACLs now, as an immutable :class:`~sasl_scram.authz.Authorizer`
        (default settings: no super users, ``allow.everyone.if.no.acl.found``
        false; ``with_settings`` applies serve's). No I/O and no lock: the hot
        path reads it per request.

        Raises:
            AclStoreUnavailable: the store cannot vouch for its copy (ZooKeeper
                unreachable for longer than the allowed staleness).
        """
        ...

    def describe_acls(
        self, filter: AclBindingFilter = AclBindingFilter.ANY
    ) -> tuple[AclBinding, ...]:
        """DescribeAcls: the ACLs ``filter`` matches, in Kafka's order, from the snapshot."""
        ...

    def create_acls(self, bindings: Sequence[AclBinding]) -> list[AclCreateResult]:
        """CreateAcls: one result per binding, in order."""
        ...

    def delete_acls(self, filters: Sequence[AclBindingFilter]) -> list[AclDeleteResult]:
        """DeleteAcls: one result per filter, in order."""
        ...

    def add_listener(self, listener: ChangeListener) -> Callable[[], None]:
        """Call ``listener(key)`` after a resource pattern's ACLs change (here or in
        another process); ``key`` is ``TYPE:PATTERN_TYPE:name``. Returns the remover."""
        ...

    def close(self) -> None: ...
