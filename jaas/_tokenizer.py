"""A position-tracking re-implementation of ``java.io.StreamTokenizer``.

Both JAAS readers sit on ``StreamTokenizer``: Kafka's ``JaasConfig`` for the
``sasl.jaas.config`` property and the JDK's ``sun.security.provider.ConfigFile``
for static files. Whether a configuration is accepted is decided by this
tokenizer's quirks (unquoted numbers, ``/`` comments, escapes, strings ending
at a newline), so this module follows JDK 17's ``nextToken`` step by step and
adds what Java lacks: the offsets of every token, for caret diagnostics.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["FILE_SYNTAX", "PROPERTY_SYNTAX", "Syntax", "Token", "TokenKind", "Tokenizer"]

_EOF = -1
# Java's StreamTokenizer keeps "no lookahead" and "skip a LF after CR" as
# sentinels in its peekc field; these mirror them.
_NEED_CHAR = -2
_SKIP_LF = -3

_CT_WHITESPACE = 1
_CT_DIGIT = 2
_CT_ALPHA = 4
_CT_QUOTE = 8
_CT_COMMENT = 16

# Escapes StreamTokenizer translates inside quoted strings (JDK 17
# StreamTokenizer.nextToken); any other escaped character stands for itself.
_ESCAPES = {"a": "\x07", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\x0b"}


class TokenKind(enum.Enum):
    """The ``ttype`` classes of StreamTokenizer."""

    WORD = "word"
    NUMBER = "number"
    QUOTED = "quoted string"
    ORDINARY = "character"
    EOL = "end of line"
    EOF = "end of input"


@dataclass(frozen=True, slots=True)
class Token:
    """One token, with its source span (``start``/``end`` are string offsets).

    ``text`` is the word, the unescaped body of a quoted string, the ordinary
    character, or the raw source of a number. ``quote`` is the quote character
    of a quoted string.
    """

    kind: TokenKind
    text: str
    start: int
    end: int
    quote: str = ""

    @property
    def sval(self) -> str | None:
        """Java's ``sval``: set for words and quoted strings, null otherwise."""
        if self.kind in (TokenKind.WORD, TokenKind.QUOTED):
            return self.text
        return None

    def is_char(self, char: str) -> bool:
        """Whether this is the ordinary character ``char`` (Java ``ttype == char``)."""
        return self.kind is TokenKind.ORDINARY and self.text == char


@dataclass(frozen=True, slots=True)
class Syntax:
    """The syntax-table settings a Java caller applies on top of the defaults."""

    extra_word_chars: frozenset[str]
    eol_significant: bool


# JaasConfig: default syntax + slashSlashComments + slashStarComments +
# wordChars('-'), wordChars('_'), wordChars('$') (kafka-clients 4.3.0).
PROPERTY_SYNTAX = Syntax(frozenset("-_$"), eol_significant=False)
# ConfigFile.readConfig: quoteChar('"'), wordChars for '$', '_', '-', '*',
# both comment styles, eolIsSignificant(true) (JDK 17).
FILE_SYNTAX = Syntax(frozenset("$_-*"), eol_significant=True)


def _build_table(syntax: Syntax) -> list[int]:
    # The StreamTokenizer(Reader) constructor's default table.
    table = [0] * 256
    for i in range(ord("a"), ord("z") + 1):
        table[i] |= _CT_ALPHA
    for i in range(ord("A"), ord("Z") + 1):
        table[i] |= _CT_ALPHA
    for i in range(0xA0, 0x100):
        table[i] |= _CT_ALPHA
    for i in range(0, 0x21):
        table[i] = _CT_WHITESPACE
    table[ord("/")] = _CT_COMMENT
    table[ord('"')] = _CT_QUOTE
    table[ord("'")] = _CT_QUOTE
    for ch in "0123456789.-":  # parseNumbers()
        table[ord(ch)] |= _CT_DIGIT
    for ch in syntax.extra_word_chars:  # wordChars() adds the flag, keeping DIGIT
        table[ord(ch)] |= _CT_ALPHA
    return table


class Tokenizer:
    """Splits text into tokens exactly as a configured StreamTokenizer would."""

    def __init__(self, text: str, syntax: Syntax) -> None:
        self._text = text
        self._n = len(text)
        self._ct = _build_table(syntax)
        self._eol = syntax.eol_significant
        self._i = 0  # index of the next character read() returns
        self._peekc = _NEED_CHAR

    def _read(self) -> int:
        i = self._i
        self._i = i + 1
        return ord(self._text[i]) if i < self._n else _EOF

    def _ctype(self, c: int) -> int:
        # Characters above 255 are all alphabetic in StreamTokenizer.
        return self._ct[c] if c < 256 else _CT_ALPHA

    def next_token(self) -> Token:
        """Return the next token (``EOF`` forever once the text is used up)."""
        while True:
            token = self._next()
            if token is not None:
                return token

    def _next(self) -> Token | None:
        c = self._peekc
        if c == _EOF:
            c = _NEED_CHAR
        if c == _SKIP_LF:
            c = self._read()
            if c < 0:
                return self._eof()
            if c == 0x0A:
                c = _NEED_CHAR
        if c == _NEED_CHAR:
            c = self._read()
            if c < 0:
                return self._eof()
        start = self._i - 1
        self._peekc = _NEED_CHAR

        ctype = self._ctype(c)
        while ctype & _CT_WHITESPACE:
            if c == 0x0D:
                if self._eol:
                    self._peekc = _SKIP_LF
                    return Token(TokenKind.EOL, "\r", start, start + 1)
                c = self._read()
                if c == 0x0A:
                    c = self._read()
            else:
                if c == 0x0A and self._eol:
                    return Token(TokenKind.EOL, "\n", start, start + 1)
                c = self._read()
            if c < 0:
                return self._eof()
            start = self._i - 1
            ctype = self._ctype(c)

        if ctype & _CT_DIGIT:
            return self._number(c, start)
        if ctype & _CT_ALPHA:
            return self._word(start)
        if ctype & _CT_QUOTE:
            return self._quoted(c, start)
        if c == ord("/"):
            return self._comment()
        return Token(TokenKind.ORDINARY, chr(c), start, start + 1)

    def _number(self, c: int, start: int) -> Token:
        # StreamTokenizer.nextToken's parseNumbers branch: "-" alone is ordinary.
        if c == ord("-"):
            c = self._read()
            if c != ord(".") and not (ord("0") <= c <= ord("9")):
                self._peekc = c
                return Token(TokenKind.ORDINARY, "-", start, start + 1)
        seendot = False
        while True:
            if c == ord(".") and not seendot:
                seendot = True
            elif not ord("0") <= c <= ord("9"):
                break
            c = self._read()
        self._peekc = c
        end = self._i - 1
        return Token(TokenKind.NUMBER, self._text[start:end], start, end)

    def _word(self, start: int) -> Token:
        while True:
            c = self._read()
            if c < 0 or not self._ctype(c) & (_CT_ALPHA | _CT_DIGIT):
                break
        self._peekc = c
        end = self._i - 1
        return Token(TokenKind.WORD, self._text[start:end], start, end)

    def _comment(self) -> Token | None:
        """Skip a comment after its "/"; ``None`` (no token), or EOF inside one."""
        # Both comment styles are enabled by both callers.
        c = self._read()
        if c == ord("*"):
            prevc = 0
            while True:
                c = self._read()
                if c == ord("/") and prevc == ord("*"):
                    break
                # Java reads past a line break without re-checking for
                # "*/", so "*\n/" does not close the comment.
                if c == 0x0D:
                    c = self._read()
                    if c == 0x0A:
                        c = self._read()
                elif c == 0x0A:
                    c = self._read()
                if c < 0:
                    return self._eof()
                prevc = c
            return None
        # "//" and a lone "/" (a comment character) both skip to the end
        # of the line; a lone "/" has already swallowed one character,
        # which may itself be the line break.
        while True:
            c = self._read()
            if c in (0x0A, 0x0D) or c < 0:
                break
        self._peekc = c
        return None

    def _quoted(self, quote: int, start: int) -> Token:
        chars: list[str] = []
        d = self._read()
        while d >= 0 and d != quote and d not in (0x0A, 0x0D):
            if d == ord("\\"):
                c = self._read()
                first = c
                if ord("0") <= c <= ord("7"):
                    value = c - ord("0")
                    c2 = self._read()
                    if ord("0") <= c2 <= ord("7"):
                        value = (value << 3) + (c2 - ord("0"))
                        c2 = self._read()
                        # Three digits only when the first is 0-3, so at most \377.
                        if ord("0") <= c2 <= ord("7") and first <= ord("3"):
                            value = (value << 3) + (c2 - ord("0"))
                            d = self._read()
                        else:
                            d = c2
                    else:
                        d = c2
                    chars.append(chr(value))
                    continue
                if c < 0:
                    # Java stores (char) -1 for a backslash at end of input.
                    chars.append("\uffff")
                else:
                    ch = chr(c)
                    chars.append(_ESCAPES.get(ch, ch))
                d = self._read()
            else:
                chars.append(chr(d))
                d = self._read()
        if d == quote:
            self._peekc = _NEED_CHAR
            end = self._i
        else:
            # An unterminated string ends at the line break or end of input,
            # which is then read again as the next token.
            self._peekc = d
            end = self._i - 1
        return Token(TokenKind.QUOTED, "".join(chars), start, end, quote=chr(quote))

    def _eof(self) -> Token:
        self._peekc = _EOF
        return Token(TokenKind.EOF, "", self._n, self._n)
