"""Java ``.properties`` files, read exactly as Kafka reads them.

Kafka's broker and tools load every ``.properties`` file (``server.properties``,
``client.properties``, ``--command-config``) with ``Utils.loadProps``:
``java.util.Properties.load(InputStream)`` on the file's bytes. This module is
a port of that reader (the JDK's ``Properties.LineReader.readLine``, ``load0``
and ``loadConvert``):

- each byte is one ISO-8859-1 character, so UTF-8 text becomes two or more
  characters per non-ASCII letter (we do the same, and log a WARNING);
- lines end at ``\\n``, ``\\r`` or ``\\r\\n`` only (not at the other line breaks
  of Python's ``str.splitlines``, such as the byte 0x85);
- blank lines, comment lines (``#`` or ``!`` first) and every line's leading
  spaces, tabs and form feeds are skipped;
- a line ending in an odd number of backslashes continues on the next one,
  whose leading whitespace is dropped; a comment line is never continued;
- the key ends at the first unescaped ``=``, ``:``, space, tab or form feed;
  the value starts after whitespace, at most one ``=`` or ``:``, and whitespace;
- ``\\t \\n \\r \\f`` and ``\\uXXXX`` (UTF-16 code units: a surrogate pair is one
  character) are unescaped; any other escaped character is itself.

A repeated key keeps its last value (``Properties`` is a ``Hashtable``).
``tests/sasl_scram/config/test_properties.py`` compares this with Kafka's own
``Utils.loadProps`` on generated files.
"""

from __future__ import annotations

import bisect
import logging
import os
import re
from collections.abc import Iterator
from typing import Any

from sasl_scram._errors import ScramConfigError

__all__ = ["Properties", "format_properties", "parse_properties", "read_properties"]

log = logging.getLogger("sasl_scram.config")

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_WHITESPACE = " \t\f"
_EOL = "\r\n"
_HEX = frozenset("0123456789abcdefABCDEF")
_LINE_START = re.compile(r"\r\n|\r|\n")


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """``Properties.LineReader.readLine``: each logical line and the offset it starts at."""
    off, end = 0, len(text)
    while True:
        buf: list[str] = []
        start = off
        skip_whitespace, continued, backslash = True, False, False
        while True:
            if off >= end:
                if buf:
                    yield start, "".join(buf[:-1] if backslash else buf)
                return
            c = text[off]
            off += 1
            if skip_whitespace:
                if c in _WHITESPACE or (not continued and c in _EOL):
                    continue
                skip_whitespace = continued = False
                if not buf:
                    start = off - 1
            if not buf and c in "#!":
                # A comment, to the end of its line (even after a continued empty line).
                while off < end and text[off] not in _EOL:
                    off += 1
                off += 1
                skip_whitespace = True
                continue
            if c not in _EOL:
                buf.append(c)
                backslash = c == "\\" and not backslash
                continue
            if not buf:
                skip_whitespace = True
                continue
            if off >= end or not backslash:
                yield start, "".join(buf[:-1] if backslash else buf)
                break
            # The backslash that continues the line is not part of it.
            buf.pop()
            skip_whitespace = continued = True
            backslash = False
            if c == "\r" and text.startswith("\n", off):
                off += 1


def _unescape(text: str, where: str) -> str:
    """``Properties.loadConvert``."""
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        i += 1
        if ch != "\\":
            out.append(ch)
            continue
        ch = text[i] if i < len(text) else ""
        i += 1
        if ch == "u":
            digits = text[i : i + 4]
            if len(digits) != 4 or not _HEX.issuperset(digits):
                raise ScramConfigError(f"{where}: malformed \\uXXXX escape")
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_ESCAPES.get(ch, ch))
    # Java strings are UTF-16: an escaped surrogate pair is one character.
    return "".join(out).encode("utf-16-be", "surrogatepass").decode("utf-16-be", "surrogatepass")


def _split(line: str) -> tuple[str, str]:
    """``Properties.load0``: the raw key and value of a logical line."""
    key_end, value_start, separated, backslash = 0, len(line), False, False
    while key_end < len(line):
        c = line[key_end]
        if not backslash and c in "=:":
            value_start, separated = key_end + 1, True
            break
        if not backslash and c in _WHITESPACE:
            value_start = key_end + 1
            break
        backslash = c == "\\" and not backslash
        key_end += 1
    while value_start < len(line):
        c = line[value_start]
        if c not in _WHITESPACE:
            if separated or c not in "=:":
                break
            separated = True
        value_start += 1
    return line[:key_end], line[value_start:]


class Properties(dict[str, str]):
    """Parsed properties that remember where each key was set, so errors can name it.

    Attributes:
        origins: ``"<file>:<line>"`` (or ``--override``) by key.
        shadowed: The earlier origins of a key set again (a file's line that
            ``--override`` replaced), by key: that file still holds the value.
    """

    def __init__(self, *args: Any, **kwargs: str) -> None:
        super().__init__(*args, **kwargs)
        self.origins: dict[str, str] = {}
        self.shadowed: dict[str, list[str]] = {}

    def set(self, key: str, value: str, origin: str) -> None:
        """Set ``key`` and remember where it was set (and where it was set before)."""
        if key in self.origins:
            self.shadowed.setdefault(key, []).append(self.origins[key])
        self[key] = value
        self.origins[key] = origin


def _utf8_lines(lines: list[tuple[int, str]]) -> list[int]:
    """The lines holding UTF-8 multi-byte text (each byte a character here, as in Kafka)."""
    found = []
    for number, line in lines:
        raw = line.encode("latin-1", "ignore")
        if raw.isascii():
            continue
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        found.append(number)
    return found


def parse_properties(data: bytes | str, source: str = "<properties>") -> Properties:
    """Parse a ``.properties`` file's bytes as Kafka does (or text, as ``load(Reader)``).

    The result remembers each key's file and line (:attr:`Properties.origins`).
    Bytes holding UTF-8 multi-byte text are still read as ISO-8859-1, as Kafka
    reads them, with a WARNING naming the file and line (never the value).

    Raises:
        ScramConfigError: a malformed ``\\uXXXX`` escape, naming the file and line.
    """
    text = data.decode("latin-1") if isinstance(data, bytes) else data
    starts = [0] + [m.end() for m in _LINE_START.finditer(text)]
    lines = [(bisect.bisect_right(starts, off), line) for off, line in _logical_lines(text)]
    if isinstance(data, bytes) and (utf8 := _utf8_lines(lines)):
        more = f" (and {len(utf8) - 1} more lines)" if len(utf8) > 1 else ""
        log.warning(
            "%s:%d%s: UTF-8 text, which Kafka reads as ISO-8859-1, one character per "
            "byte (so é would be read as Ã©); write each non-ASCII character as a "
            "\\uXXXX escape (é is \\u00e9)",
            source,
            utf8[0],
            more,
        )
    result = Properties()
    for number, line in lines:
        where = f"{source}:{number}"
        key, value = _split(line)
        result.set(_unescape(key, where), _unescape(value, where), where)
    return result


def read_properties(path: str | os.PathLike[str]) -> Properties:
    """Read a ``.properties`` file as Kafka's ``Utils.loadProps`` does.

    Raises:
        ScramConfigError: the file cannot be read (one line: the path and why),
            or a malformed escape (its file and line).
    """
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise ScramConfigError(f"cannot read {os.fspath(path)}: {exc.strerror}") from None
    return parse_properties(data, os.fspath(path))


def _escape(text: str, *, key: bool) -> str:
    """``Properties.saveConvert``, ASCII output: what ``load`` reads back as ``text``."""
    out: list[str] = []
    for i, ch in enumerate(text):
        if ch == "\\":
            out.append("\\\\")
        elif ch in "\t\n\r\f":
            out.append("\\" + "tnrf"["\t\n\r\f".index(ch)])
        elif ch == " " and (key or i == 0):
            out.append("\\ ")
        elif key and ch in "=:#!":
            out.append("\\" + ch)
        elif not " " <= ch <= "~":
            out.extend(f"\\u{unit:04x}" for unit in _utf16_units(ch))
        else:
            out.append(ch)
    return "".join(out)


def _utf16_units(ch: str) -> list[int]:
    raw = ch.encode("utf-16-be", "surrogatepass")
    return [int.from_bytes(raw[i : i + 2], "big") for i in range(0, len(raw), 2)]


def format_properties(values: dict[str, str]) -> str:
    """``key=value`` lines, ASCII only, that Kafka's reader reads back as ``values``.

    Backslashes, separators in keys, leading spaces and every character outside
    printable ASCII are escaped as ``Properties.store`` escapes them.
    """
    return "".join(f"{_escape(k, key=True)}={_escape(v, key=False)}\n" for k, v in values.items())
