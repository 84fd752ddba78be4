"""Base64 exactly as ``java.util.Base64.getDecoder()``/``getEncoder()`` do it.

Kafka encodes credentials and SCRAM attributes with Java's basic codec. Python's
``base64.b64decode`` differs: it wants padding and, unless validating, skips
junk. Java's decoder (verified on JDK 17, docs/kafka-facts.md §4):

* accepts only ``A-Za-z0-9+/`` and ``=`` padding; whitespace is an error;
* makes padding optional, but rejects wrong padding (``YQ=``);
* rejects a lone trailing character and data after padding;
* ignores non-zero trailing bits (``YR==`` decodes to ``a``).
"""

from __future__ import annotations

import binascii
import re

__all__ = ["Base64Error", "java_b64decode", "java_b64encode"]

_ALPHABET = re.compile(rb"[A-Za-z0-9+/]*")


class Base64Error(ValueError):
    """Input is not valid for Java's basic Base64 decoder."""


def java_b64encode(data: bytes) -> str:
    """Standard alphabet with ``=`` padding and no line breaks."""
    return binascii.b2a_base64(data, newline=False).decode("ascii")


def decode_padded(text: str | bytes) -> bytes | None:
    """Decode whole, correctly padded base64 units, or return ``None``.

    Accepts exactly what Kafka's ``BASE64`` message pattern
    ``(?:[a-zA-Z0-9/+]{4})*(?:[a-zA-Z0-9/+]{3}=|[a-zA-Z0-9/+]{2}==)?`` accepts
    (checked exhaustively on short strings), and decodes as Java does.
    """
    if len(text) % 4 or text[-3:] in ("===", b"==="):
        return None
    try:
        return binascii.a2b_base64(text, strict_mode=True)
    except (binascii.Error, ValueError):  # ValueError: non-ASCII str
        return None


def java_b64decode(text: str | bytes) -> bytes:
    """Decode like ``Base64.getDecoder().decode``; raises :class:`Base64Error`."""
    raw = text.encode("ascii", "replace") if isinstance(text, str) else bytes(text)
    # Fast path for canonical, padded input (what Kafka writes); anything else
    # (no padding, stray bits) takes the careful path.
    decoded = decode_padded(raw)
    return decoded if decoded is not None else _careful_decode(raw)


def _careful_decode(raw: bytes) -> bytes:
    """Java's rules spelled out; the reference for the fast path."""
    body = raw.rstrip(b"=")
    pad = len(raw) - len(body)
    if _ALPHABET.fullmatch(body) is None:
        raise Base64Error("illegal base64 character")
    rem = len(body) % 4
    if rem == 1:
        raise Base64Error("last unit does not have enough valid bits")
    # Padding, when present, must complete the final 4-character unit.
    if pad and (pad > 2 or rem == 0 or rem + pad != 4):
        raise Base64Error("input byte array has wrong 4-byte ending unit")
    # Re-pad canonically; binascii ignores non-zero trailing bits, like Java.
    try:
        return binascii.a2b_base64(body + b"=" * ((4 - rem) % 4), strict_mode=False)
    except binascii.Error as exc:  # pragma: no cover - excluded by the checks above
        raise Base64Error(str(exc)) from None
