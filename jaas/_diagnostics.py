"""Turn a token into a caret diagnostic without leaking secrets."""

from __future__ import annotations

import re
from bisect import bisect_right

from jaas._errors import JaasSyntaxError
from jaas._model import ControlFlag
from jaas._secrets import MASK
from jaas._secrets import is_secret_option
from jaas._tokenizer import Token
from jaas._tokenizer import TokenKind

__all__ = ["QUOTE_VALUE_HINT", "Locator", "describe", "java_str"]

# What a word after a secret value without its '=' most likely is: the rest of
# that value, cut at a space or a quote the value needed quotes for.
QUOTE_VALUE_HINT = (
    'a value with spaces, quotes or punctuation must be in double quotes, e.g. {key}="..."'
)

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

# A lenient "name = value" matcher for masking displayed source lines: the
# line may be malformed (a ':' or nothing where '=' belongs), so this does not
# use the real tokenizer.
_ASSIGNMENT = re.compile(
    r"""(?P<key>"(?:\\.|[^"\\])*"?|'(?:\\.|[^'\\])*'?|[^\s=:;"'{}]+)\s*(?P<sep>[=:]?)\s*"""
    r"""(?P<value>"(?:\\.|[^"\\])*"?|'(?:\\.|[^'\\])*'?|[^\s;"'{}]*)"""
)


def _secret_spans(line: str, module: str | None) -> list[tuple[int, int]]:
    """The spans of the values in ``line`` to mask, for the options of ``module``
    (the entry in effect where the line starts). A ``<module> <flag>`` head on
    the line starts another entry; so does a ``;``, whose next word is a module."""
    spans = []
    for match in _ASSIGNMENT.finditer(line):
        key = match.group("key").strip("\"'")
        value = match.group("value")
        if not match.group("sep") and ControlFlag.parse(value.strip("\"'")) is not None:
            module = key  # "<module> <flag>": the options after it are this module's
            continue
        if value and is_secret_option(module, key):
            spans.append(match.span("value"))
    return spans


def _mask_line(line: str, column: int, width: int, module: str | None) -> tuple[str, int, int]:
    """Mask secret values in ``line``; move the caret (1-based ``column``, ``width``) with them.

    Every secret becomes the same fixed :data:`MASK`, whatever its length, so an
    error never gives the length away; a caret inside a secret underlines the mask.
    """
    spans = _secret_spans(line, module)
    caret = column - 1
    shift = 0
    for start, end in spans:
        if end <= caret:
            shift += len(MASK) - (end - start)
        elif start <= caret:  # the caret points into the secret itself
            caret, width = start, len(MASK)
    for start, end in reversed(spans):
        line = line[:start] + MASK + line[end:]
    return line, caret + shift + 1, width


def _printable(text: str) -> str:
    # Keep messages on one line: show control characters as escapes.
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return "".join(
        named.get(ch, f"\\{ord(ch):03o}") if ord(ch) < 0x20 or ord(ch) == 0x7F else ch
        for ch in text
    )


def java_str(value: str | None) -> str:
    """Format a possibly-null string as Java's string concatenation does."""
    return "null" if value is None else value


def describe(token: Token, *, secret: bool = False) -> str:
    """Describe ``token`` for an error message; ``secret`` hides its text."""
    if token.kind is TokenKind.EOF:
        return "end of input"
    if token.kind is TokenKind.EOL:
        return "end of line"
    if secret:
        kind = "single-quoted string" if token.quote == "'" else token.kind.value
        return f"{kind} ({MASK})"
    if token.kind is TokenKind.WORD:
        return f"word {token.text!r}"
    if token.kind is TokenKind.NUMBER:
        return f"number {token.text}"
    if token.kind is TokenKind.QUOTED:
        kind = "single-quoted string" if token.quote == "'" else "quoted string"
        return f"{kind} {token.quote}{_printable(token.text)}{token.quote}"
    return repr(token.text)


class Locator:
    """Maps offsets of one text to line, column and (masked) line text."""

    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.filename = filename
        self._starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)]
        # (offset, module): where each entry read so far starts, for masking
        # the options of a known login module on a line that does not name it.
        self._modules: list[tuple[int, str | None]] = []

    def enter_module(self, offset: int, module: str | None) -> None:
        """Note that the entry of login module ``module`` starts at ``offset``."""
        self._modules.append((offset, module))

    def _module_at(self, offset: int) -> str | None:
        index = bisect_right(self._modules, offset, key=lambda item: item[0]) - 1
        return self._modules[index][1] if index >= 0 else None

    def position(self, offset: int) -> tuple[int, int, str]:
        """Return (line, column, line text) for ``offset``, all 1-based."""
        index = bisect_right(self._starts, offset) - 1
        start = self._starts[index]
        end = self._starts[index + 1] if index + 1 < len(self._starts) else len(self.text)
        line = self.text[start:end].rstrip("\r\n")
        return index + 1, offset - start + 1, line

    def error(
        self,
        token: Token,
        expected: str,
        *,
        got: str | None = None,
        secret: bool = False,
        hint: str | None = None,
        java_message: str | None,
        at: int | None = None,
        mask_rest: bool = False,
    ) -> JaasSyntaxError:
        """Build the error for ``token`` (or for offset ``at``).

        ``mask_rest`` masks the line from ``token`` to its end: what follows a
        secret value that needed quotes may be the rest of that secret.
        """
        offset = token.start if at is None else at
        line, column, source = self.position(offset)
        width = 1 if at is not None else max(1, min(token.end, offset + len(source)) - offset)
        # A multi-line token (a comment-swallowed break, an escaped newline)
        # is underlined only up to the end of its first line.
        width = max(1, min(width, len(source) - column + 1))
        if hint is None and "#" in source[: column - 1]:
            hint = "'#' does not start a comment in JAAS; use // or /* */"
        if mask_rest and at is None:
            source = source[: column - 1] + MASK
            width = len(MASK)
        elif secret and at is None:
            # The token itself is the secret (say, a value whose '=' is missing):
            # mask it in the line, whatever key precedes it, on this line or not.
            source = source[: column - 1] + MASK + source[column - 1 + width :]
            width = len(MASK)
        line_start = offset - (column - 1)
        shown, caret_column, width = _mask_line(source, column, width, self._module_at(line_start))
        return JaasSyntaxError(
            expected=expected,
            got=got if got is not None else describe(token, secret=secret),
            filename=self.filename,
            line=line,
            column=column,
            source_line=shown,
            width=width,
            caret_column=caret_column,
            hint=hint,
            java_message=java_message,
        )
