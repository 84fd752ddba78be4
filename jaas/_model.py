"""The typed model: configuration, contexts, login module entries, control flags."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from types import MappingProxyType
from typing import Any

from jaas._secrets import mask_value

__all__ = ["Configuration", "Context", "ControlFlag", "LoginModuleEntry"]


class ControlFlag(enum.Enum):
    """``javax.security.auth.login.AppConfigurationEntry.LoginModuleControlFlag``."""

    REQUIRED = "required"
    REQUISITE = "requisite"
    SUFFICIENT = "sufficient"
    OPTIONAL = "optional"

    @classmethod
    def parse(cls, text: str) -> ControlFlag | None:
        """Return the flag ``text`` names, or ``None``.

        Java upper-cases the flag before matching (``Locale.ROOT`` in Kafka,
        ``Locale.ENGLISH`` in the JDK), so the match is case-insensitive and
        even ``requıred`` (dotless i) is accepted; ``str.upper`` maps the same
        way.
        """
        try:
            return cls[text.upper()]
        except KeyError:
            return None


def _freeze_options(options: Mapping[str, str] | Iterable[tuple[str, str]]) -> Mapping[str, str]:
    items = options.items() if isinstance(options, Mapping) else options
    frozen: dict[str, str] = {}
    for key, value in items:
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError("option names and values must be str")
        frozen[key] = value  # a repeated key keeps the last value, as HashMap.put does
    return MappingProxyType(frozen)


@dataclass(frozen=True, eq=False, init=False)
class LoginModuleEntry:
    """One ``<module> <flag> <name>=<value>... ;`` entry.

    Attributes:
        module: The login module class name.
        flag: The control flag.
        options: The options in the order written; a repeated name keeps its
            first position and its last value. Read-only.
        null_key_value: Kafka's ``sasl.jaas.config`` parser stores an option
            whose name is a number or punctuation (``3=v``) under a Java
            ``null`` key. Such a value lands here (last one wins); ``None``
            when there is none. The JDK's file parser never produces it.
    """

    module: str
    flag: ControlFlag
    options: Mapping[str, str]
    null_key_value: str | None

    def __init__(
        self,
        module: str,
        flag: ControlFlag = ControlFlag.REQUIRED,
        options: Mapping[str, str] | Iterable[tuple[str, str]] = (),
        *,
        null_key_value: str | None = None,
    ) -> None:
        if not isinstance(module, str) or not module:
            # AppConfigurationEntry's constructor throws for a null or empty name.
            raise ValueError("a login module class name must be a non-empty string")
        if not isinstance(flag, ControlFlag):
            raise TypeError("flag must be a ControlFlag")
        object.__setattr__(self, "module", module)
        object.__setattr__(self, "flag", flag)
        object.__setattr__(self, "options", _freeze_options(options))
        object.__setattr__(self, "null_key_value", null_key_value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LoginModuleEntry):
            return NotImplemented
        return (
            self.module == other.module
            and self.flag is other.flag
            and dict(self.options) == dict(other.options)
            and self.null_key_value == other.null_key_value
        )

    def __hash__(self) -> int:
        return hash((self.module, self.flag, frozenset(self.options.items()), self.null_key_value))

    def __repr__(self) -> str:
        return (
            f"LoginModuleEntry(module={self.module!r}, flag={self.flag}, "
            f"options={self.masked_options()!r}"
            + (", null_key_value=<set>" if self.null_key_value is not None else "")
            + ")"
        )

    def masked_options(self) -> dict[str, str]:
        """Return the options with secret values masked (:func:`jaas.is_secret_option`)."""
        return {k: mask_value(k, v, self.module) for k, v in self.options.items()}

    def to_dict(self, *, show_secrets: bool = False) -> dict[str, Any]:
        """Return a JSON-ready dict; secrets are masked unless ``show_secrets``."""
        out: dict[str, Any] = {
            "module": self.module,
            "flag": self.flag.value,
            "options": dict(self.options) if show_secrets else self.masked_options(),
        }
        if self.null_key_value is not None:
            out["null_key_value"] = (
                self.null_key_value if show_secrets else mask_value("password", "")
            )
        return out


@dataclass(frozen=True)
class Context:
    """A named login context (``KafkaClient``, ``KafkaServer``, ...).

    Attributes:
        name: The context name. ``None`` when the JDK stores the block under a
            null name because its name token was a number or punctuation
            (``3 { ... };``); such a context cannot be looked up by Kafka.
        entries: The login module entries in order.
    """

    name: str | None
    entries: tuple[LoginModuleEntry, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "entries", tuple(self.entries))

    def __iter__(self) -> Iterator[LoginModuleEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def to_dict(self, *, show_secrets: bool = False) -> dict[str, Any]:
        """Return a JSON-ready dict; secrets are masked unless ``show_secrets``."""
        return {
            "name": self.name,
            "entries": [e.to_dict(show_secrets=show_secrets) for e in self.entries],
        }


@dataclass(frozen=True)
class Configuration:
    """A parsed JAAS file: its contexts in file order.

    Attributes:
        contexts: The contexts; names are unique (the JDK rejects a repeat).
        filename: Where the configuration was read from, if known. It is not
            part of equality.
    """

    contexts: tuple[Context, ...] = ()
    filename: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "contexts", tuple(self.contexts))
        seen: set[str | None] = set()
        for context in self.contexts:
            if context.name in seen:
                raise ValueError(f"duplicate context name {context.name!r}")
            seen.add(context.name)

    def __iter__(self) -> Iterator[Context]:
        return iter(self.contexts)

    def __contains__(self, name: object) -> bool:
        return any(c.name == name for c in self.contexts)

    def __len__(self) -> int:
        return len(self.contexts)

    def __getitem__(self, name: str | None) -> Context:
        """Return the context called ``name``: ``config["KafkaClient"]``.

        Raises:
            KeyError: There is no such context; the message lists those there are.
        """
        context = self.get(name)
        if context is None:
            there = ", ".join(str(c.name) for c in self.contexts) or "no context"
            raise KeyError(f"no context {name!r} in the JAAS configuration; it has {there}")
        return context

    def get(self, name: str | None) -> Context | None:
        """Return the context called ``name``, or ``None``."""
        for context in self.contexts:
            if context.name == name:
                return context
        return None

    def entries(self, name: str | None) -> tuple[LoginModuleEntry, ...] | None:
        """Return the entries of ``name`` as the JDK does: ``None`` if absent or empty.

        ``ConfigFile.engineGetAppConfigurationEntry`` returns null for a
        context with no entries, so Kafka treats ``KafkaClient { };`` as missing.
        """
        context = self.get(name)
        if context is None or not context.entries:
            return None
        return context.entries

    def to_dict(self, *, show_secrets: bool = False) -> dict[str, Any]:
        """Return a JSON-ready dict; secrets are masked unless ``show_secrets``."""
        return {"contexts": [c.to_dict(show_secrets=show_secrets) for c in self.contexts]}
