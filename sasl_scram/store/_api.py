"""The credential-store contract: a hot-path lookup plus KIP-554 describe/alter.

Every backend (in-memory, SQLite, ZooKeeper) and the remote admin client
implement :class:`ScramAdmin`; the servers additionally need
:class:`CredentialLookup`. Results carry Kafka's error codes so the endpoint
can put them on the wire unchanged (kafka-internals section 9).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from .. import _crypto
from .._credential import ScramCredential, kafka_salt
from .._errors import ScramError
from .._mechanism import ScramMechanism

__all__ = [
    "AlterResult",
    "CredentialInfo",
    "CredentialLookup",
    "CredentialStore",
    "CredentialStoreError",
    "CredentialStoreUnavailable",
    "DescribeResult",
    "KafkaError",
    "Listener",
    "ScramAdmin",
    "ScramDeletion",
    "ScramUpsertion",
    "UserDescription",
]


class CredentialStoreError(ScramError):
    """A store could not complete an operation; nothing was changed or lost silently."""


class CredentialStoreUnavailable(CredentialStoreError):
    """The backing store is unreachable (or too stale to trust): fail closed."""


class KafkaError(enum.IntEnum):
    """The Kafka error codes KIP-554 results use (org.apache.kafka.common.protocol.Errors)."""

    NONE = 0
    UNKNOWN_SERVER_ERROR = -1
    CLUSTER_AUTHORIZATION_FAILED = 31
    UNSUPPORTED_SASL_MECHANISM = 33
    NOT_CONTROLLER = 41
    RESOURCE_NOT_FOUND = 91
    DUPLICATE_RESOURCE = 92
    UNACCEPTABLE_CREDENTIAL = 93

    @property
    def default_message(self) -> str:
        """Kafka's text for the code when a response carries no message (``Errors.java``)."""
        return _DEFAULT_MESSAGES.get(self, self.name)


_DEFAULT_MESSAGES = {
    KafkaError.NONE: "",
    KafkaError.UNKNOWN_SERVER_ERROR: (
        "The server experienced an unexpected error when processing the request."
    ),
    KafkaError.CLUSTER_AUTHORIZATION_FAILED: "Cluster authorization failed.",
    KafkaError.UNSUPPORTED_SASL_MECHANISM: (
        "The broker does not support the requested SASL mechanism."
    ),
    KafkaError.NOT_CONTROLLER: "This is not the correct controller for this cluster.",
    KafkaError.RESOURCE_NOT_FOUND: (
        "A request illegally referred to a resource that does not exist."
    ),
    KafkaError.DUPLICATE_RESOURCE: "A request illegally referred to the same resource twice.",
    KafkaError.UNACCEPTABLE_CREDENTIAL: (
        "Requested credential would not meet criteria for acceptability."
    ),
}


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
    error: KafkaError = KafkaError.NONE
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
    error: KafkaError = KafkaError.NONE
    message: str | None = None


@dataclass(frozen=True, slots=True)
class DescribeResult:
    """The whole describe answer: a top-level error and per-user results."""

    results: tuple[UserDescription, ...] = ()
    error: KafkaError = KafkaError.NONE
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

        A result with ``KafkaError.NONE`` is durable when this returns.
        """
        ...


Listener = Callable[[str], None]


@runtime_checkable
class CredentialStore(CredentialLookup, ScramAdmin, Protocol):
    """A full backend: lookup, KIP-554 admin, change notification and lifecycle."""

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(user)`` after any user's credentials change (here or in
        another process); returns a function that removes the listener."""
        ...

    def close(self) -> None: ...
