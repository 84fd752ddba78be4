"""Java ``.properties`` files, as ``java.util.Properties.load`` reads them.

Kafka's ``server.properties`` and ``client.properties`` use this format:
``key=value``, ``key: value`` or ``key value``; ``#`` and ``!`` comment lines;
a trailing backslash continues a line; backslash escapes including ``\\uXXXX``.
"""

from __future__ import annotations

from typing import Any

from sasl_scram._errors import ScramConfigError

__all__ = ["Properties", "parse_properties"]

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_WHITESPACE = " \t\f"


def _logical_lines(text: str) -> list[tuple[int, str]]:
    lines: list[tuple[int, str]] = []
    physical = text.splitlines()
    i = 0
    while i < len(physical):
        number = i + 1
        line = physical[i].lstrip(_WHITESPACE)
        i += 1
        if not line or line[0] in "#!":
            continue
        # An odd number of trailing backslashes continues the line.
        while (len(line) - len(line.rstrip("\\"))) % 2 == 1:
            line = line[:-1]
            if i >= len(physical):
                break
            line += physical[i].lstrip(_WHITESPACE)
            i += 1
        lines.append((number, line))
    return lines


def _unescape(text: str, where: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        i += 1
        if i >= len(text):
            break
        ch = text[i]
        if ch == "u":
            digits = text[i + 1 : i + 5]
            if len(digits) != 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise ScramConfigError(f"{where}: malformed \\uXXXX escape")
            out.append(chr(int(digits, 16)))
            i += 5
            continue
        out.append(_ESCAPES.get(ch, ch))
        i += 1
    return "".join(out)


class Properties(dict[str, str]):
    """Parsed properties that remember where each key was set, so errors can name it.

    Attributes:
        origins: ``"<file>:<line>"`` (or ``--override``) by key.
    """

    def __init__(self, *args: Any, **kwargs: str) -> None:
        super().__init__(*args, **kwargs)
        self.origins: dict[str, str] = {}

    def set(self, key: str, value: str, origin: str) -> None:
        """Set ``key`` and remember where it was set."""
        self[key] = value
        self.origins[key] = origin


def parse_properties(text: str, source: str = "<properties>") -> Properties:
    """Parse properties text; a repeated key keeps its last value, as in Java.

    The result remembers each key's file and line (:attr:`Properties.origins`).

    Raises:
        ScramConfigError: a malformed ``\\u`` escape, naming the file and line.
    """
    result = Properties()
    for number, line in _logical_lines(text):
        # The key ends at the first unescaped '=', ':' or whitespace.
        i = 0
        while i < len(line):
            ch = line[i]
            if ch == "\\":
                i += 2
                continue
            if ch in "=:" or ch in _WHITESPACE:
                break
            i += 1
        key = line[:i]
        rest = line[i:].lstrip(_WHITESPACE)
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(_WHITESPACE)
        where = f"{source}:{number}"
        result.set(_unescape(key, where), _unescape(rest, where), where)
    return result
