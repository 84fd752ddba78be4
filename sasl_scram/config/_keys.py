"""One table of configuration keys: name, default, parser, what is accepted, a doc line.

Kafka keeps each broker setting in one ``ConfigDef`` entry (name, type,
default, validator, documentation) and reports a bad value as
``Invalid value X for configuration K: ...``; this is the same idea, small.
Adding a key is adding one :class:`ConfigKey` to a table, naming the field
of the typed configuration it fills; :func:`read_keys` is the loop that reads
any table, and names the file and line of a bad value, and :func:`build` turns
what it read into the typed configuration, field by field.

A key may also name a family of keys, every key under a prefix (``upstream.``):
its value is then a map from the rest of each name to its parsed value.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import TypeVar

from sasl_scram._errors import ScramConfigError

__all__ = [
    "ConfigKey",
    "Parser",
    "boolean",
    "build",
    "choice",
    "integer",
    "is_known",
    "read_keys",
    "suggest_key",
    "text",
    "verbatim",
]

T = TypeVar("T")

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
        field: The attribute of the typed configuration that gets the value
            (:func:`build`); ``None``: read by name only (an extension's key).
        family: ``name`` is a prefix (``upstream.``): every given key under it
            is parsed with ``parse``, and the value is a dict from the rest of
            each name to its parsed value (``default`` is not used).
    """

    name: str
    default: str | None
    parse: Parser
    accepted: str
    doc: str
    secret: bool = False
    field: str | None = None
    family: bool = False

    def covers(self, name: str) -> bool:
        """Whether ``name`` is this key, or one of its family."""
        return name.startswith(self.name) if self.family else name == self.name


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


def verbatim(value: str, _: Mapping[str, Any]) -> str:
    """The value exactly as written, for a secret whose spaces may be part of it."""
    return value


def is_known(table: Iterable[ConfigKey], name: str) -> bool:
    """Whether a key of ``table`` (or a family of it) covers ``name``."""
    return any(key.covers(name) for key in table)


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
    # A family never takes a key of its own table (``upstream.identity`` is a
    # key; ``upstream.sasl.mechanism`` one of the family's).
    named = {key.name for key in table if not key.family}
    for key in table:
        if key.family:
            members = sorted(name for name in props if key.covers(name) and name not in named)
            values[key.name] = {
                name[len(key.name) :]: _parse(key, name, props[name], values, origins)
                for name in members
            }
            continue
        raw = props.get(key.name, key.default)
        values[key.name] = None if raw is None else _parse(key, key.name, raw, values, origins)
    return values


def _parse(
    key: ConfigKey, name: str, raw: str, values: Mapping[str, Any], origins: Mapping[str, str]
) -> Any:
    try:
        return key.parse(raw, values)
    except ValueError as exc:
        # A secret's parser error could quote the value: say only that it is bad.
        problem = "invalid value" if key.secret else str(exc)
        raise ConfigValueError(
            f"{_where(name, origins)}{name}: {problem}; accepted: {key.accepted}",
            origins.get(name),
        ) from None


def build(
    cls: Callable[..., T], table: Iterable[ConfigKey], values: Mapping[str, Any], **more: Any
) -> T:
    """The typed configuration: ``cls`` called with each key's value as the field
    the key names (the keys of ``table`` that name one), and ``more``.

    ``values`` are what :func:`read_keys` returned; a key without a value
    (absent, no default) leaves its field to the class's default.

    Raises:
        ValueError: two keys name the same field (a table's mistake, not the user's).
    """
    fields: dict[str, Any] = dict(more)
    for key in table:
        if key.field is None or values.get(key.name) is None:
            continue
        if key.field in fields:
            raise ValueError(f"{key.name}: the field {key.field!r} is filled twice")
        fields[key.field] = values[key.name]
    return cls(**fields)
