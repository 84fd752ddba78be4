"""Kafka's ``Sanitizer``: user names to ZooKeeper node names and back.

``Sanitizer.sanitize`` is ``URLEncoder.encode(name, "UTF-8")`` followed by
``*`` -> ``%2A`` (JMX treats ``*`` as a pattern) and ``+`` -> ``%20``
(docs/kafka-facts.md §5.2). The result only keeps ``[A-Za-z0-9._-]`` unescaped.
``desanitize`` is ``URLDecoder.decode``, which raises on malformed escapes.
"""

from __future__ import annotations

import unicodedata
from urllib.parse import quote

__all__ = ["SanitizerError", "desanitize", "sanitize"]

_HEX_LETTERS = "0123456789abcdef"
# Character.digit's fullwidth Latin letters: U+FF21 (A) and U+FF41 (a).
_FULLWIDTH = (0xFF21, 0xFF41)
_BAD_HEX = "URLDecoder: Illegal hex characters in escape (%) pattern"


class SanitizerError(ValueError):
    """A znode name is not a valid URL-encoded name (``URLDecoder`` would throw)."""


def sanitize(name: str) -> str:
    """Encode a user name exactly as Kafka's ``Sanitizer.sanitize``.

    Raises:
        SanitizerError: ``name`` holds a lone surrogate, which Java would encode
            as ``%3F`` (``?``) and so could never round-trip.
    """
    try:
        # quote() keeps "_.-~" unescaped; Java's URLEncoder keeps "*" but not "~",
        # and Kafka then rewrites "*" to "%2A": quote() already escapes "*".
        return quote(name, safe="", encoding="utf-8", errors="strict").replace("~", "%7E")
    except UnicodeEncodeError:
        raise SanitizerError("user name contains a lone surrogate") from None


def desanitize(name: str) -> str:
    """Decode a znode name like Kafka's ``Sanitizer.desanitize`` (``URLDecoder.decode``).

    ``+`` becomes a space, ``%XX`` runs are decoded as UTF-8 with malformed
    sequences replaced by U+FFFD, and bad escapes raise like Java does.

    Raises:
        SanitizerError: an incomplete or non-hex ``%`` escape.
    """
    out: list[str] = []
    pending = bytearray()
    i = 0
    n = len(name)
    while i < n:
        char = name[i]
        if char == "%":
            if n - i < 3:
                raise SanitizerError("URLDecoder: Incomplete trailing escape (%) pattern")
            pending.append(_escaped_byte(name[i + 1], name[i + 2]))
            i += 3
            continue
        if pending:
            out.append(pending.decode("utf-8", errors="replace"))
            pending.clear()
        out.append(" " if char == "+" else char)
        i += 1
    if pending:
        out.append(pending.decode("utf-8", errors="replace"))
    return "".join(out)


def _escaped_byte(first: str, second: str) -> int:
    """The byte of one ``%`` escape as ``URLDecoder`` reads it:
    ``Integer.parseInt(s, i + 1, i + 3, 16)``, which takes a sign before one digit
    (``%+1`` is 1; ``%-1`` is negative and refused) and any digit ``Character.digit``
    knows (Unicode decimal digits, fullwidth letters), then ``(byte) v``."""
    if first in "+-":
        value = _java_hex_digit(second)
        if value < 0 or (first == "-" and value > 0):
            raise SanitizerError(_BAD_HEX)
        return value
    high = _java_hex_digit(first)
    low = _java_hex_digit(second)
    if high < 0 or low < 0:
        raise SanitizerError(_BAD_HEX)
    return high * 16 + low


def _java_hex_digit(char: str) -> int:
    """``Character.digit(char, 16)``, or -1."""
    if char.isascii():
        return _HEX_LETTERS.find(char.lower())
    code = ord(char)
    for base in _FULLWIDTH:
        if base <= code < base + 6:
            return 10 + code - base
    # A Java char is one UTF-16 unit: a supplementary character is two, neither a digit.
    if code <= 0xFFFF and unicodedata.category(char) == "Nd":
        return unicodedata.decimal(char)
    return -1
