"""SASLprep (RFC 4013) for the optional RFC mode.

Kafka does not apply SASLprep: ``ScramFormatter.normalize`` is plain UTF-8.
Kafka mode therefore stays the default; RFC mode exists for non-Kafka peers.
"""

from __future__ import annotations

import enum
import stringprep
import unicodedata

from sasl_scram._errors import ScramUsageError

__all__ = ["Normalization", "normalize_password", "saslprep"]


class Normalization(enum.Enum):
    """How a password becomes bytes before PBKDF2."""

    #: UTF-8 bytes of the string, as Kafka's ScramFormatter.normalize does.
    KAFKA = "kafka"
    #: RFC 4013 SASLprep, then UTF-8 (RFC 5802 section 5.1).
    SASLPREP = "saslprep"


_PROHIBITED = (
    stringprep.in_table_c12,
    stringprep.in_table_c21_c22,
    stringprep.in_table_c3,
    stringprep.in_table_c4,
    stringprep.in_table_c5,
    stringprep.in_table_c6,
    stringprep.in_table_c7,
    stringprep.in_table_c8,
    stringprep.in_table_c9,
)


def saslprep(text: str) -> str:
    """Prepare a string with the SASLprep profile of stringprep (RFC 4013).

    Raises:
        ScramUsageError: the string holds a prohibited or unassigned code point,
            or breaks the bidirectional rules. The message names the position,
            never the string itself (it may be a password).
    """
    # RFC 4013 2.1: non-ASCII spaces map to SPACE; 2.2: "commonly mapped to nothing".
    mapped = "".join(
        " " if stringprep.in_table_c12(ch) else ch for ch in text if not stringprep.in_table_b1(ch)
    )
    # RFC 4013 2.2: normalization form KC.
    prepared = unicodedata.normalize("NFKC", mapped)
    for index, ch in enumerate(prepared):
        if ch == " ":
            continue
        if any(check(ch) for check in _PROHIBITED):
            raise ScramUsageError(f"SASLprep: prohibited character at position {index}")
        if stringprep.in_table_a1(ch):
            raise ScramUsageError(f"SASLprep: unassigned code point at position {index}")
    # RFC 3454 section 6: bidirectional rules.
    if any(stringprep.in_table_d1(ch) for ch in prepared):
        if any(stringprep.in_table_d2(ch) for ch in prepared):
            raise ScramUsageError("SASLprep: mixes left-to-right and right-to-left text")
        if not (stringprep.in_table_d1(prepared[0]) and stringprep.in_table_d1(prepared[-1])):
            raise ScramUsageError("SASLprep: right-to-left text must start and end with RandALCat")
    return prepared


def normalize_password(password: str | bytes, normalization: Normalization) -> bytes:
    """Turn a password into the bytes PBKDF2 runs on."""
    if isinstance(password, bytes):
        # Callers holding raw bytes (e.g. a base64 token HMAC) skip preparation.
        return password
    if normalization is Normalization.SASLPREP:
        password = saslprep(password)
    return password.encode("utf-8")
