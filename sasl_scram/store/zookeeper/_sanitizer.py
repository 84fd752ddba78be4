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
    sequences replaced by U+FFFD where Java's decoder puts them (see
    :func:`java_utf8`), and bad escapes raise like Java does.

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
            out.append(java_utf8(bytes(pending)))
            pending.clear()
        out.append(" " if char == "+" else char)
        i += 1
    if pending:
        out.append(java_utf8(bytes(pending)))
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


_REPL = "\ufffd"


def java_utf8(data: bytes) -> str:
    """``new String(data, UTF_8)``: well-formed UTF-8 as any decoder reads it; in
    malformed input, U+FFFD exactly where the JDK's ``String.decodeUTF8_UTF16`` (JDK 17
    to 25) puts them. It differs from Python's ``"replace"``: one U+FFFD for a whole
    encoded surrogate (``ED A0 80``) or a truncated sequence at the end (``ED A0``)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    out: list[str] = []
    sp, sl = 0, len(data)
    while sp < sl:
        b1 = data[sp]
        sp += 1
        if b1 < 0x80:
            out.append(chr(b1))
        elif 0xC2 <= b1 <= 0xDF:
            if sp >= sl:
                out.append(_REPL)
                break
            if _continuation(data[sp]):
                out.append(chr((b1 & 0x1F) << 6 | data[sp] & 0x3F))
                sp += 1
            else:
                out.append(_REPL)  # the next byte is read again
        elif 0xE0 <= b1 <= 0xEF:
            sp, done = _three(data, sp, b1, out)
            if done:
                break
        elif 0xF0 <= b1 <= 0xF7:
            sp, done = _four(data, sp, b1, out)
            if done:
                break
        else:
            out.append(_REPL)
    return "".join(out)


def _continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _three(data: bytes, sp: int, b1: int, out: list[str]) -> tuple[int, bool]:
    """A lead byte E0-EF at ``sp - 1``: where to go on, and whether input ends here."""
    sl = len(data)
    if sp + 1 < sl:
        b2, b3 = data[sp], data[sp + 1]
        bad_second = (b1 == 0xE0 and b2 & 0xE0 == 0x80) or not _continuation(b2)
        if bad_second or not _continuation(b3):
            out.append(_REPL)
            return sp + (0 if bad_second else 1), False  # malformed3: skip 1 or 2
        char = (b1 & 0x0F) << 12 | (b2 & 0x3F) << 6 | b3 & 0x3F
        out.append(_REPL if 0xD800 <= char <= 0xDFFF else chr(char))
        return sp + 2, False
    out.append(_REPL)
    if sp < sl and ((b1 == 0xE0 and data[sp] & 0xE0 == 0x80) or not _continuation(data[sp])):
        return sp, False
    return sp, True  # a truncated sequence ends the input: one U+FFFD for all of it


def _four(data: bytes, sp: int, b1: int, out: list[str]) -> tuple[int, bool]:
    """A lead byte F0-F7 at ``sp - 1``: where to go on, and whether input ends here."""
    sl = len(data)
    if sp + 2 < sl:
        b2, b3, b4 = data[sp], data[sp + 1], data[sp + 2]
        code = (b1 & 0x07) << 18 | (b2 & 0x3F) << 12 | (b3 & 0x3F) << 6 | b4 & 0x3F
        if all(map(_continuation, (b2, b3, b4))) and 0x10000 <= code <= 0x10FFFF:
            out.append(chr(code))
            return sp + 3, False
        out.append(_REPL)
        # malformed4: skip the lead, the lead and one, or the lead and two.
        if _bad_second_of_four(b1, b2):
            return sp, False
        return sp + (1 if not _continuation(b3) else 2), False
    out.append(_REPL)
    if b1 > 0xF4 or (sp < sl and _bad_second_of_four(b1, data[sp])):
        return sp, False
    sp += 1
    return sp, not (sp < sl and not _continuation(data[sp]))


def _bad_second_of_four(b1: int, b2: int) -> bool:
    return (
        b1 > 0xF4
        or (b1 == 0xF0 and not 0x90 <= b2 <= 0xBF)
        or (b1 == 0xF4 and b2 & 0xF0 != 0x80)
        or not _continuation(b2)
    )
