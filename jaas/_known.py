"""The login modules whose options we know: which options each reads, and of what kind.

Standard library only and no import of ours, so that masking (``_secrets``) and
the warnings (``_options``) can both use it.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["KNOWN_OPTIONS", "SCRAM_LOGIN_MODULE", "OptionKind", "edit_distance"]

SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"


class OptionKind(enum.Enum):
    """What a known option holds."""

    TEXT = "text"  # harmless: shown
    SECRET = "secret"  # noqa: S105 - a kind of option, not a secret; masked
    BOOLEAN = "boolean"  # harmless; Java's "true".equalsIgnoreCase(value), anything else false


#: Login module class -> the options it reads. ScramLoginModule.initialize
#: (kafka-clients 4.1, javap) calls options.get("username"), options.get("password")
#: and "true".equalsIgnoreCase(options.get("tokenauth")), and nothing else.
KNOWN_OPTIONS: Mapping[str, Mapping[str, OptionKind]] = MappingProxyType(
    {
        SCRAM_LOGIN_MODULE: MappingProxyType(
            {
                "username": OptionKind.TEXT,
                "password": OptionKind.SECRET,
                "tokenauth": OptionKind.BOOLEAN,
            }
        ),
    }
)


def edit_distance(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions and
    swaps of two neighbours each count 1 (a swapped pair is the commonest typo)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[-1]
