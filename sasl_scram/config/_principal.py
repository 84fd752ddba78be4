"""Kafka principals (``KafkaPrincipal``): ``<type>:<name>``, e.g. ``User:alice``."""

from __future__ import annotations

from dataclasses import dataclass

from sasl_scram._errors import ScramUsageError

__all__ = ["USER_TYPE", "KafkaPrincipal"]

USER_TYPE = "User"


@dataclass(frozen=True, slots=True)
class KafkaPrincipal:
    """A principal as Kafka prints and parses it.

    ``token_authenticated`` is deliberately not part of equality, as in Kafka
    (``KafkaPrincipal.equals`` compares type and name only).
    """

    principal_type: str
    name: str

    def __str__(self) -> str:
        return f"{self.principal_type}:{self.name}"

    @classmethod
    def user(cls, name: str) -> KafkaPrincipal:
        return cls(USER_TYPE, name)

    @classmethod
    def parse(cls, text: str) -> KafkaPrincipal:
        """``SecurityUtils.parseKafkaPrincipal``: split on the first ``:``."""
        if not text or ":" not in text:
            raise ScramUsageError(
                f"expected a string in format principalType:principalName but got {text}"
            )
        principal_type, _, name = text.partition(":")
        return cls(principal_type, name)
