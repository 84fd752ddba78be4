"""The two SCRAM mechanisms Kafka speaks, as typed values."""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from sasl_scram._errors import ScramUsageError

__all__ = ["SCRAM_SHA_256", "SCRAM_SHA_512", "ScramMechanism"]

# Kafka's ScramMechanism: the minimum is enforced during authentication, the
# maximum only by KIP-554 alterations and kafka-storage (docs/kafka-facts.md §1).
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384


@dataclass(frozen=True, slots=True)
class _Spec:
    mechanism_name: str
    hash_name: str
    digest_size: int
    type_byte: int
    enum_name: str
    hash_constructor: Callable[[bytes], hashlib._Hash]


class ScramMechanism(enum.Enum):
    """A SCRAM mechanism with Kafka's parameters.

    ``type_byte`` is the value used on the wire by the KIP-554 RPCs; Kafka's
    source states that it must never change.
    """

    SCRAM_SHA_256 = _Spec("SCRAM-SHA-256", "sha256", 32, 1, "SCRAM_SHA_256", hashlib.sha256)
    SCRAM_SHA_512 = _Spec("SCRAM-SHA-512", "sha512", 64, 2, "SCRAM_SHA_512", hashlib.sha512)

    @property
    def mechanism_name(self) -> str:
        """The SASL name, e.g. ``SCRAM-SHA-256``."""
        return self.value.mechanism_name

    @property
    def hash_name(self) -> str:
        """The hashlib name of the hash function."""
        return self.value.hash_name

    @property
    def digest_size(self) -> int:
        return self.value.digest_size

    @property
    def type_byte(self) -> int:
        """Kafka's mechanism type (1 or 2) used by Describe/AlterUserScramCredentials."""
        return self.value.type_byte

    @property
    def min_iterations(self) -> int:
        return MIN_ITERATIONS

    @property
    def max_iterations(self) -> int:
        return MAX_ITERATIONS

    @property
    def java_name(self) -> str:
        """How Kafka prints the enum in its messages (``SCRAM_SHA_256``)."""
        return self.value.enum_name

    def __str__(self) -> str:
        return self.mechanism_name

    def __repr__(self) -> str:
        return f"ScramMechanism.{self.name}"

    @classmethod
    def from_name(cls, name: str) -> ScramMechanism:
        """Look a mechanism up by its SASL name; exact and case-sensitive like Kafka."""
        for mech in cls:
            if mech.mechanism_name == name:
                return mech
        known = ", ".join(m.mechanism_name for m in cls)
        raise ScramUsageError(f"Unknown SCRAM mechanism {name!r}; expected one of {known}")

    @classmethod
    def from_type(cls, type_byte: int) -> ScramMechanism:
        """Look a mechanism up by Kafka's type byte (1 or 2)."""
        for mech in cls:
            if mech.type_byte == type_byte:
                return mech
        raise ScramUsageError(f"Unknown SCRAM mechanism type {type_byte}; expected 1 or 2")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(m.mechanism_name for m in cls)


SCRAM_SHA_256 = ScramMechanism.SCRAM_SHA_256
SCRAM_SHA_512 = ScramMechanism.SCRAM_SHA_512
