"""Parse a ``sasl.jaas.config`` value exactly as Kafka's ``JaasConfig`` does.

The loop below follows ``JaasConfig.parseAppConfigurationEntry`` (kafka-clients
4.3.0): module name, control flag, ``name=value`` options until ``;``. Each
rejection carries the ``IllegalArgumentException`` message Kafka gives for the
same input as ``java_message``.
"""

from __future__ import annotations

from jaas._diagnostics import QUOTE_VALUE_HINT
from jaas._diagnostics import Locator
from jaas._diagnostics import describe
from jaas._diagnostics import java_str
from jaas._errors import JaasSyntaxError
from jaas._model import Context
from jaas._model import ControlFlag
from jaas._model import LoginModuleEntry
from jaas._secrets import MASK
from jaas._secrets import is_secret_option
from jaas._tokenizer import PROPERTY_SYNTAX
from jaas._tokenizer import Token
from jaas._tokenizer import Tokenizer
from jaas._tokenizer import TokenKind

__all__ = ["PROPERTY_FILENAME", "parse_property"]

PROPERTY_FILENAME = "<sasl.jaas.config>"
FLAG_CHOICES = "a control flag (required, requisite, sufficient or optional)"

_NUMBER_HINT = "unquoted numbers are not allowed; quote the value"
_DASH_HINT = "a value starting with '-' must be quoted"
_KEY_HINT = "quote option names that contain punctuation or start with a digit or '-'"
_COMMENT_HINT = "an unquoted '/' starts a comment; quote values that contain '/'"


class _Entry:
    __slots__ = ("first_error", "flag", "module", "null_key_value", "options")

    def __init__(self, module: str, flag: ControlFlag) -> None:
        self.module = module
        self.flag = flag
        self.options: dict[str, str] = {}
        self.null_key_value: str | None = None
        self.first_error: JaasSyntaxError | None = None


def parse_property(value: str, *, context_name: str = "KafkaClient") -> Context:
    """Parse a ``sasl.jaas.config`` value.

    Accepts and rejects exactly what Kafka's ``JaasConfig`` accepts and
    rejects. Like ``JaasConfig`` it allows several entries; Kafka's rule that
    a property holds exactly one login module is applied by
    :func:`jaas.load_client_context` and :func:`jaas.load_server_context`.

    Args:
        value: The property value, e.g.
            ``org.apache.kafka.common.security.scram.ScramLoginModule required
            username="alice" password="alice-secret";``.
        context_name: The name of the returned context (Kafka uses
            ``KafkaClient`` on clients and ``KafkaServer`` on brokers).

    Returns:
        A context holding the entries in order.

    Raises:
        JaasSyntaxError: Kafka rejects the value; ``java_message`` holds
            Kafka's message.
    """
    return _PropertyParser(value).parse(context_name)


class _PropertyParser:
    def __init__(self, text: str) -> None:
        self._tokens = Tokenizer(text, PROPERTY_SYNTAX)
        self._loc = Locator(text, PROPERTY_FILENAME)
        self._text = text
        self._last_end = 0

    def _next(self) -> Token:
        token = self._tokens.next_token()
        if token.kind is not TokenKind.EOF:
            self._last_end = token.end
        return token

    def parse(self, context_name: str) -> Context:
        entries: list[LoginModuleEntry] = []
        token = self._next()
        if token.kind is TokenKind.EOF:
            raise self._loc.error(
                token,
                "a login module class name",
                got="empty configuration" if not self._text.strip() else "only comments",
                java_message="Login module not specified in JAAS config",
            )
        while True:
            entries.append(self._entry(token))
            token = self._next()
            if token.kind is TokenKind.EOF:
                break
        return Context(context_name, tuple(entries))

    def _entry(self, first: Token) -> LoginModuleEntry:
        module = first.sval
        self._loc.enter_module(first.start, module)
        flag_token = self._next()
        if flag_token.kind is TokenKind.EOF:
            raise self._loc.error(
                flag_token,
                FLAG_CHOICES,
                at=self._last_end,
                java_message="Login module control flag not specified in JAAS config",
            )
        if flag_token.sval is None:
            raise self._loc.error(
                flag_token,
                FLAG_CHOICES,
                java_message="Login module control flag is not available in the JAAS config",
            )
        flag = ControlFlag.parse(flag_token.sval)
        if flag is None:
            missing_module = first.sval is not None and ControlFlag.parse(first.sval) is not None
            raise self._loc.error(
                first if missing_module else flag_token,
                "a login module class name" if missing_module else FLAG_CHOICES,
                got=f"control flag {first.sval!r}" if missing_module else None,
                hint="the entry starts with its control flag" if missing_module else None,
                java_message=(
                    f"Invalid login module control flag '{flag_token.sval}' in JAAS config"
                ),
            )
        entry = _Entry(module or "-", flag)
        bad_module: JaasSyntaxError | None = None
        if not module:
            # AppConfigurationEntry rejects a null or empty module name, but
            # only after the whole entry is read; its exception has no message.
            bad_module = self._loc.error(
                first,
                "a login module class name",
                got="an empty quoted string" if module == "" else None,
                hint="module names are words or quoted strings",
                java_message=None,
            )
        try:
            self._options(entry)
        except JaasSyntaxError as later:
            if bad_module is not None:
                bad_module.java_message = later.java_message
                raise bad_module from None
            raise
        if bad_module is not None:
            raise bad_module
        return LoginModuleEntry(
            entry.module, entry.flag, entry.options, null_key_value=entry.null_key_value
        )

    def _options(self, entry: _Entry) -> None:
        token = self._next()
        # Whether the value just read was a secret, and whose.
        after_secret, secret_key = False, None
        while token.kind is not TokenKind.EOF and not token.is_char(";"):
            key_token = token
            key = token.sval
            # Java prints a null key as "null".
            java = f"Value not specified for key '{java_str(key)}' in JAAS config"
            equals = self._next()
            if not equals.is_char("="):
                if after_secret:
                    raise self._after_secret(key_token, secret_key)
                if key is None:
                    raise self._loc.error(
                        key_token,
                        "an option name or ';'",
                        hint=_KEY_HINT,
                        java_message=java,
                    )
                raise self._loc.error(
                    equals,
                    f"'=' after option name {key!r}",
                    # What stands where '=' belongs may be the secret value itself.
                    secret=is_secret_option(entry.module, key)
                    and equals.kind is not TokenKind.ORDINARY,
                    at=self._last_end if equals.kind is TokenKind.EOF else None,
                    java_message=java,
                )
            value = self._next()
            if value.kind is TokenKind.EOF or value.sval is None:
                secret = is_secret_option(entry.module, key)
                raise self._loc.error(
                    value,
                    f"a value for option {key!r}" if key is not None else "an option value",
                    at=self._last_end if value.kind is TokenKind.EOF else None,
                    secret=secret,
                    hint=_hint_for(value),
                    java_message=java,
                )
            if key is None:
                entry.null_key_value = value.sval
            else:
                entry.options[key] = value.sval  # HashMap.put: the last value wins
            after_secret, secret_key = is_secret_option(entry.module, key), key
            token = self._next()
        if token.kind is TokenKind.EOF:
            tail = self._text[self._last_end :]
            raise self._loc.error(
                token,
                "';' at the end of the login module entry",
                at=self._last_end,
                hint=_COMMENT_HINT if "/" in tail else None,
                java_message="JAAS config entry not terminated by semi-colon",
            )

    def _after_secret(self, token: Token, key: str | None) -> JaasSyntaxError:
        """A word without '=' after ``key``'s secret value: most likely the rest
        of that value, which needed quotes; it is masked to the end of its line."""
        return self._loc.error(
            token,
            f"';' or the next option after the value of {java_str(key)!r}",
            got=describe(token, secret=True),
            mask_rest=True,
            hint=QUOTE_VALUE_HINT.format(key=java_str(key)),
            java_message=f"Value not specified for key '{MASK}' in JAAS config",
        )


def _hint_for(token: Token) -> str | None:
    if token.kind is TokenKind.NUMBER:
        return _NUMBER_HINT
    if token.is_char("-"):
        return _DASH_HINT
    if token.kind is TokenKind.ORDINARY:
        return "quote values and names that contain punctuation"
    return None
