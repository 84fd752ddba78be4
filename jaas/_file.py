"""Parse a static JAAS file exactly as the JDK's ``ConfigFile`` does.

The parser follows ``sun.security.provider.ConfigFile.Spi.readConfig`` and
``parseLoginEntry`` (JDK 17): ``Name { module flag name=value... ; ... };``
blocks, a one-token lookahead, only double quotes, ``${name}`` expansion of
option values, and a repeated context name rejected. Each rejection carries
the JDK's message as ``java_message``, including its line number, which counts
end-of-line tokens the way ``ConfigFile`` does.
"""

from __future__ import annotations

from collections.abc import Mapping

from jaas._diagnostics import QUOTE_VALUE_HINT
from jaas._diagnostics import Locator
from jaas._diagnostics import describe
from jaas._diagnostics import java_str
from jaas._errors import JaasSyntaxError
from jaas._expand import ExpansionError
from jaas._expand import expand
from jaas._model import Configuration
from jaas._model import Context
from jaas._model import ControlFlag
from jaas._model import LoginModuleEntry
from jaas._property import FLAG_CHOICES
from jaas._secrets import MASK
from jaas._secrets import is_secret_option
from jaas._tokenizer import FILE_SYNTAX
from jaas._tokenizer import Token
from jaas._tokenizer import Tokenizer
from jaas._tokenizer import TokenKind

__all__ = ["parse_file"]

_PREFIX = "Configuration Error:\n\t"

# What ConfigFile.match() is asked for, and how we say it.
_EXPECT_TEXT = {
    "{": "'{'",
    "}": "'}'",
    ";": "';'",
    "=": "'='",
    "module class name": "a login module class name",
    "controlFlag": FLAG_CHOICES,
    "option key": "an option name or ';'",
    "option value": "an option value",
}
_VALUE_EXPECTS = frozenset({"module class name", "controlFlag", "option key", "option value"})


def parse_file(
    text: str,
    filename: str | None = None,
    *,
    expand_properties: Mapping[str, str] | None = None,
) -> Configuration:
    """Parse the text of a static JAAS configuration file.

    Accepts and rejects exactly what ``javax.security.auth.login.Configuration``
    (the JDK's ``ConfigFile``) accepts and rejects.

    Args:
        text: The file's contents.
        filename: Used in error messages and kept on the result.
        expand_properties: Values for ``${name}`` references in option values,
            standing in for Java system properties. When ``None`` (the
            default) nothing is expanded and ``${...}`` stays literal; the JDK
            always expands, so pass a mapping to check a file as Java reads it.

    Returns:
        The configuration, contexts in file order.

    Raises:
        JaasSyntaxError: The JDK rejects the file; ``java_message`` holds the
            JDK's message.
    """
    return _FileParser(text, filename, expand_properties).parse()


class _FileParser:
    def __init__(self, text: str, filename: str | None, props: Mapping[str, str] | None) -> None:
        self._tokens = Tokenizer(text, FILE_SYNTAX)
        self._loc = Locator(text, filename or "<jaas>")
        self._filename = filename
        self._props = props
        # ConfigFile.linenum: 1 + the end-of-line tokens read so far. It
        # misses breaks inside /* */ comments and escaped in strings.
        self._java_line = 1
        self._prev_end = 0
        self._look = self._next()
        self._module: str | None = None  # the entry being read, for masking

    def _next(self) -> Token:
        while True:
            token = self._tokens.next_token()
            if token.kind is not TokenKind.EOL:
                return token
            self._java_line += 1

    def _advance(self) -> None:
        self._prev_end = self._look.end
        self._look = self._next()

    def _java_line_text(self) -> str:
        # MessageFormat formats the Integer with grouping separators.
        return f"{self._java_line:,}"

    def parse(self) -> Configuration:
        contexts: list[Context] = []
        names: dict[str | None, Token] = {}
        while self._look.kind is not TokenKind.EOF:
            name_token = self._look
            context = self._login_entry()
            if context.name in names:
                raise self._loc.error(
                    name_token,
                    "a context name not used before",
                    got=f"a second {context.name!r} context",
                    hint=f"the first is at line {self._loc.position(names[context.name].start)[0]}",
                    java_message=(
                        f"{_PREFIX}Can not specify multiple entries for {java_str(context.name)}"
                    ),
                )
            names[context.name] = name_token
            contexts.append(context)
        return Configuration(tuple(contexts), filename=self._filename)

    def _login_entry(self) -> Context:
        # ConfigFile takes whatever token comes first as the name, without
        # checking it: a number or punctuation gives a null name.
        name = self._look.sval
        self._advance()
        self._match("{")
        entries: list[LoginModuleEntry] = []
        while not self._look.is_char("}"):
            module_token = self._look
            module = self._match("module class name")
            self._loc.enter_module(module_token.start, module)
            self._module = module
            flag_token = self._look
            flag_text = self._match("controlFlag")
            flag = ControlFlag.parse(flag_text)
            if flag is None:
                raise self._loc.error(
                    flag_token,
                    FLAG_CHOICES,
                    java_message=f"{_PREFIX}Invalid control flag, {flag_text.upper()}",
                )
            options: dict[str, str] = {}
            secret_key: str | None = None  # the option whose secret value was just read
            while not self._look.is_char(";"):
                key_token = self._look
                if secret_key is not None and _continues_value(key_token):
                    raise self._after_secret(key_token, secret_key, "option key")
                key = self._match("option key")
                if secret_key is not None and not self._look.is_char("="):
                    raise self._after_secret(key_token, secret_key, "=")
                self._match("=", key=key)
                value_token = self._look
                value = self._match("option value", key=key)
                options[key] = self._expand(key, value, value_token)
                secret_key = key if is_secret_option(self._module, key) else None
            self._advance()
            if not module:
                # AppConfigurationEntry rejects an empty name, with no message.
                raise self._loc.error(
                    module_token,
                    "a login module class name",
                    got="an empty quoted string",
                    java_message=None,
                )
            entries.append(LoginModuleEntry(module, flag, options))
        self._module = None
        self._match("}")
        self._match(";")
        return Context(name, tuple(entries))

    def _match(self, expect: str, *, key: str | None = None) -> str:
        token = self._look
        expected = _EXPECT_TEXT[expect]
        if expect == "option value" and key is not None:
            expected = f"a value for option {key!r}"
        if token.kind is TokenKind.EOF:
            raise self._loc.error(
                token,
                expected,
                at=self._prev_end,
                java_message=f"{_PREFIX}expected [{expect}], read [end of file]",
            )
        # The value is secret, and so is what stands where a secret's '=' belongs.
        secret = (
            key is not None
            and is_secret_option(self._module, key)
            and (expect == "option value" or token.kind is not TokenKind.ORDINARY)
        )
        found = MASK if secret and token.sval is not None else java_str(token.sval)
        if token.kind is TokenKind.WORD or (token.kind is TokenKind.QUOTED and token.quote == '"'):
            if expect in _VALUE_EXPECTS:
                self._advance()
                return token.text
            java = f"{_PREFIX}Line {self._java_line_text()}: expected [{expect}], found [{found}]"
        elif token.kind is TokenKind.ORDINARY and token.text in "{};=":
            if token.text == expect:
                self._advance()
                return token.text
            java = f"{_PREFIX}Line {self._java_line_text()}: expected [{expect}]"
        else:
            java = f"{_PREFIX}Line {self._java_line_text()}: expected [{expect}], found [{found}]"
        raise self._loc.error(
            token,
            expected,
            secret=secret,
            hint=_hint(expect, token),
            java_message=java,
        )

    def _after_secret(self, token: Token, key: str, expect: str) -> JaasSyntaxError:
        """What follows ``key``'s secret value and is no option: most likely the
        rest of that value, which needed quotes; masked to the end of its line."""
        return self._loc.error(
            token,
            f"';' or the next option after the value of {key!r}",
            got=describe(token, secret=True),
            mask_rest=True,
            hint=QUOTE_VALUE_HINT.format(key=key),
            java_message=(
                f"{_PREFIX}Line {self._java_line_text()}: expected [{expect}], found [{MASK}]"
            ),
        )

    def _expand(self, key: str, value: str, token: Token) -> str:
        if self._props is None or not value:
            return value
        try:
            expanded = expand(value, self._props)
        except ExpansionError as exc:
            raise self._loc.error(
                token,
                "a defined property"
                if is_secret_option(self._module, key)
                else f"a defined property in {value!r}",
                got=f"undefined property {exc.name!r}" if exc.name else "an empty property name",
                java_message=exc.java_message,
            ) from None
        if not expanded:
            shown = MASK if is_secret_option(self._module, key) else value
            raise self._loc.error(
                token,
                f"a non-empty value for option {key!r}",
                got="an empty value after expanding properties",
                java_message=(
                    f"{_PREFIX}Line {self._java_line_text()}: system property [{shown}] "
                    "expanded to empty value"
                ),
            )
        return expanded


def _continues_value(token: Token) -> bool:
    """Whether ``token``, where an option name or ';' belongs, is no name but
    may be text of the value before it (a number, a single-quoted string)."""
    if token.kind in (TokenKind.WORD, TokenKind.EOF):
        return False
    if token.kind is TokenKind.QUOTED:
        return token.quote != '"'
    return not (token.kind is TokenKind.ORDINARY and token.text in "{};=")


def _hint(expect: str, token: Token) -> str | None:
    if token.kind is TokenKind.QUOTED and token.quote == "'":
        return "JAAS files accept only double quotes"
    if token.kind is TokenKind.NUMBER:
        return "unquoted numbers are not allowed; quote the value"
    if expect == "option key" and token.is_char("}"):
        return "each login module entry ends with ';'"
    if expect == ";" and token.kind is not TokenKind.EOF:
        return "each context block ends with '};'"
    return None
