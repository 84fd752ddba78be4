"""Kafka's ``Sanitizer``: user names to ZooKeeper node names and back.

``Sanitizer.sanitize`` is ``URLEncoder.encode(name, "UTF-8")`` followed by
``*`` -> ``%2A`` (JMX treats ``*`` as a pattern) and ``+`` -> ``%20``
(``Sanitizer``). The result only keeps ``[A-Za-z0-9._-]`` unescaped.
``desanitize`` is ``URLDecoder.decode``, which raises on malformed escapes.
"""

from __future__ import annotations

import re
from urllib.parse import quote

__all__ = ["SanitizerError", "desanitize", "sanitize"]

_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")


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
            match = _ESCAPE.match(name, i)
            if match is None:
                raise SanitizerError("URLDecoder: Illegal hex characters in escape (%) pattern")
            pending.append(int(match.group(1), 16))
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
