"""One table of configuration keys: name, default, parser, what is accepted, a doc line.

Kafka keeps each broker setting in one ``ConfigDef`` entry (name, type,
default, validator, documentation) and reports a bad value as
``Invalid value X for configuration K: ...``; this is the same idea, small.
Adding a key is adding one :class:`ConfigKey` to a table; :func:`read_keys`
is the loop that reads any table, and names the file and line of a bad value.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sasl_scram._errors import ScramConfigError

__all__ = [
    "ConfigKey",
    "Parser",
    "boolean",
    "choice",
    "integer",
    "read_keys",
    "suggest_key",
    "text",
]

#: ``parse(value, parsed_so_far)``: the typed value; raises ValueError saying what is wrong.
Parser = Callable[[str, Mapping[str, Any]], Any]


@dataclass(frozen=True)
class ConfigKey:
    """One configuration key.

    Attributes:
        name: The key, Kafka's name wherever Kafka has one.
        default: The value used when the key is absent; ``None``: no value.
        parse: Turns the text into a typed value; raises ValueError (the
            message says what is wrong, never the value of a secret).
            It sees the keys parsed before it, in table order.
        accepted: What is accepted, for error messages (e.g. "an integer >= 0").
        doc: One line of documentation.
        secret: Never echo the value.
    """

    name: str
    default: str | None
    parse: Parser
    accepted: str
    doc: str
    secret: bool = False


def integer(minimum: int | None = None, maximum: int | None = None) -> Parser:
    """A parser for an integer within ``[minimum, maximum]``."""

    def parse(value: str, _: Mapping[str, Any]) -> int:
        stripped = value.strip()
        try:
            number = int(stripped)
        except ValueError:
            raise ValueError(f"expected an integer, got {stripped!r}") from None
        if minimum is not None and number < minimum:
            raise ValueError(f"must be at least {minimum}, got {number}")
        if maximum is not None and number > maximum:
            raise ValueError(f"at most {maximum}, got {number}")
        return number

    return parse


def choice(*options: str) -> Parser:
    """A parser for one of ``options`` (case-insensitive); returns it in lower case."""

    def parse(value: str, _: Mapping[str, Any]) -> str:
        chosen = value.strip().lower()
        if chosen not in options:
            raise ValueError(f"expected {', '.join(options[:-1])} or {options[-1]}, got {chosen!r}")
        return chosen

    return parse


def boolean(value: str, _: Mapping[str, Any]) -> bool:
    """``true`` or ``false``, trimmed and in any case, as Kafka's ConfigDef reads a BOOLEAN."""
    chosen = value.strip().lower()
    if chosen not in ("true", "false"):
        raise ValueError(f"expected true or false, got {chosen!r}")
    return chosen == "true"


def text(value: str, _: Mapping[str, Any]) -> str:
    """The value as written, trimmed (Kafka's ConfigDef trims STRING values)."""
    return value.strip()


def suggest_key(key: str, known: Iterable[str]) -> str | None:
    """The known key closest to a misspelled ``key``, if one is close enough."""
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.8)
    return close[0] if close else None


class ConfigValueError(ScramConfigError):
    """A key's value is refused; ``origin`` says where it was set
    (``server.properties:12``, ``--override``), ``None`` for a default."""

    def __init__(self, message: str, origin: str | None) -> None:
        super().__init__(message)
        self.origin = origin


def _where(key: str, origins: Mapping[str, str]) -> str:
    origin = origins.get(key)
    return f"{origin}: " if origin else ""


def read_keys(
    table: Sequence[ConfigKey],
    props: Mapping[str, str],
    origins: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Parse every key of ``table`` from ``props`` (defaults filled in), in table order.

    Args:
        table: The keys.
        props: The given values.
        origins: Where each given key was set (``server.properties:12``), for errors.

    Returns:
        The typed values by key name; ``None`` for an absent key without default.

    Raises:
        ConfigValueError: a bad value, naming the file, line and key, and what is accepted.
    """
    origins = origins or {}
    values: dict[str, Any] = {}
    for key in table:
        raw = props.get(key.name, key.default)
        if raw is None:
            values[key.name] = None
            continue
        try:
            values[key.name] = key.parse(raw, values)
        except ValueError as exc:
            # A secret's parser error could quote the value: say only that it is bad.
            problem = "invalid value" if key.secret else str(exc)
            raise ConfigValueError(
                f"{_where(key.name, origins)}{key.name}: {problem}; accepted: {key.accepted}",
                origins.get(key.name),
            ) from None
    return values
