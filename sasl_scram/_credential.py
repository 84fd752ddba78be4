"""Stored SCRAM credentials and Kafka's credential string.

Kafka's ``ScramCredentialUtils`` writes
``salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>`` and parses it
leniently in some ways and strictly in others; both are reproduced here
(``ScramCredentialUtils``, docs/kafka-facts.md §4).
"""

from __future__ import annotations

from dataclasses import dataclass

from sasl_scram import _crypto
from sasl_scram._b64 import Base64Error
from sasl_scram._b64 import java_b64decode
from sasl_scram._b64 import java_b64encode
from sasl_scram._errors import InvalidCredentialString
from sasl_scram._errors import ScramUsageError
from sasl_scram._mechanism import MIN_ITERATIONS
from sasl_scram._mechanism import ScramMechanism
from sasl_scram._saslprep import Normalization
from sasl_scram._saslprep import normalize_password

__all__ = ["ScramCredential", "kafka_salt"]

_KEYS = ("salt", "stored_key", "server_key", "iterations")
_INT_MAX = 2**31 - 1


def kafka_salt() -> bytes:
    """A salt the way Kafka makes one: the ASCII bytes of a base-36 random string."""
    return _crypto.kafka_random_string().encode("ascii")


@dataclass(frozen=True, slots=True)
class ScramCredential:
    """What a server stores for one user and mechanism (RFC 5802 section 3).

    Argument order matches Kafka's ``ScramCredential(salt, storedKey, serverKey,
    iterations)``. The ``repr`` shows the iteration count only: the salt is
    not secret, but the keys allow impersonating the server and, combined with
    a captured exchange, the user.
    """

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def __post_init__(self) -> None:
        if not isinstance(self.iterations, int) or isinstance(self.iterations, bool):
            raise ScramUsageError("iterations must be an int")
        if len(self.stored_key) != len(self.server_key):
            raise ScramUsageError("stored_key and server_key must have the same length")

    def __repr__(self) -> str:
        return (
            f"ScramCredential(iterations={self.iterations}, "
            f"salt=<{len(self.salt)} bytes>, keys=<redacted>)"
        )

    def __str__(self) -> str:
        return self.__repr__()

    @classmethod
    def from_password(
        cls,
        mechanism: ScramMechanism,
        password: str | bytes,
        *,
        iterations: int = MIN_ITERATIONS,
        salt: bytes | None = None,
        normalization: Normalization = Normalization.KAFKA,
    ) -> ScramCredential:
        """Derive a credential from a password, like ``ScramFormatter.generateCredential``.

        Args:
            mechanism: The mechanism whose hash is used.
            password: The password; ``str`` is UTF-8 encoded without SASLprep
                unless ``normalization`` says otherwise.
            iterations: PBKDF2 iterations; at least 1 (authentication refuses
                fewer than 4096, so lower values are only useful in tests).
            salt: The salt; by default a fresh Kafka-style base-36 salt.
            normalization: Kafka's plain UTF-8 (default) or RFC 4013 SASLprep.
        """
        if iterations < 1:
            raise ScramUsageError(f"iterations must be positive, got {iterations}")
        salt = kafka_salt() if salt is None else salt
        salted = _crypto.salted_password(
            mechanism, normalize_password(password, normalization), salt, iterations
        )
        return cls.from_salted_password(mechanism, salt, salted, iterations)

    @classmethod
    def from_salted_password(
        cls, mechanism: ScramMechanism, salt: bytes, salted_password: bytes, iterations: int
    ) -> ScramCredential:
        """Derive the stored and server keys from a SaltedPassword (KIP-554 upsertions).

        Any key length is accepted, as Kafka's HMAC accepts any key length.
        """
        stored = _crypto.hash_digest(mechanism, _crypto.client_key(mechanism, salted_password))
        return cls(salt, stored, _crypto.server_key(mechanism, salted_password), iterations)

    def to_kafka_string(self) -> str:
        """Format exactly as ``ScramCredentialUtils.credentialToString``."""
        return (
            f"salt={java_b64encode(self.salt)},"
            f"stored_key={java_b64encode(self.stored_key)},"
            f"server_key={java_b64encode(self.server_key)},"
            f"iterations={self.iterations}"
        )

    @classmethod
    def from_kafka_string(cls, text: str) -> ScramCredential:
        """Parse like ``ScramCredentialUtils.credentialFromString``.

        Raises:
            InvalidCredentialString: with a message that names the problem. Unlike
                Kafka's ``"Credentials not valid: " + str``, the message never
                echoes the string, because it holds key material.
        """
        # Java's String.split drops trailing empty strings, so "a=b," is fine.
        parts = text.split(",")
        while parts and parts[-1] == "":
            parts.pop()
        fields: dict[str, str] = {}
        for position, part in enumerate(parts, 1):
            eq = part.find("=")
            if eq <= 0:
                raise InvalidCredentialString(
                    f"Credentials not valid: element {position} is not a key=value pair"
                )
            # Properties semantics: a repeated key keeps the last value.
            fields[part[:eq]] = part[eq + 1 :]
        unknown = sorted(set(fields) - set(_KEYS))
        if unknown:
            raise InvalidCredentialString(
                f"Credentials not valid: unexpected key(s) {', '.join(unknown)}"
            )
        missing = [k for k in _KEYS if k not in fields]
        if missing:
            raise InvalidCredentialString(
                f"Credentials not valid: missing key(s) {', '.join(missing)}"
            )
        decoded: dict[str, bytes] = {}
        for key in ("salt", "stored_key", "server_key"):
            try:
                decoded[key] = java_b64decode(fields[key])
            except Base64Error as exc:
                raise InvalidCredentialString(
                    f"Credentials not valid: {key} is not valid base64 ({exc})"
                ) from None
        iterations = _parse_java_int(fields["iterations"])
        if len(decoded["stored_key"]) != len(decoded["server_key"]):
            raise InvalidCredentialString(
                "Credentials not valid: stored_key and server_key differ in length"
            )
        return cls(decoded["salt"], decoded["stored_key"], decoded["server_key"], iterations)

    def matches_mechanism(self, mechanism: ScramMechanism) -> bool:
        """Whether the key lengths fit the mechanism's hash."""
        return len(self.stored_key) == mechanism.digest_size


def _parse_java_int(text: str) -> int:
    """``Integer.parseInt``: optional sign, ASCII digits, 32-bit range."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not body.isascii() or not body.isdigit():
        raise InvalidCredentialString("Credentials not valid: iterations is not an integer")
    value = int(text)
    if not -(2**31) <= value <= _INT_MAX:
        raise InvalidCredentialString("Credentials not valid: iterations is out of range")
    return value
