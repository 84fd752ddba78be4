"""Warnings for options a known login module ignores or reads otherwise than meant.

Kafka's ``ScramLoginModule`` reads ``username``, ``password`` and ``tokenauth``
and ignores every other option without a word, and any ``tokenauth`` but a
case-insensitive ``true`` means false. A typo there (``tokenath=true``,
``passwrod=``) changes the login silently: the broker then only says "invalid
credentials". These warnings name the typo; Kafka still accepts the line, so
they are warnings, not errors.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from jaas._known import KNOWN_OPTIONS
from jaas._known import OptionKind
from jaas._known import edit_distance
from jaas._model import LoginModuleEntry

__all__ = ["OptionWarning", "option_warnings"]

# Spellings people use for a boolean, and what they meant.
_BOOLEAN_WORDS = {
    "1": "true",
    "yes": "true",
    "y": "true",
    "on": "true",
    "0": "false",
    "no": "false",
    "n": "false",
    "off": "false",
}
_NEAR = 2


@dataclass(frozen=True)
class OptionWarning:
    """An option that a known login module ignores, or reads otherwise than meant.

    Attributes:
        module: The login module class name.
        option: The option's name; ``None`` for Kafka's null key (a number
            used as a name, ``3=v``).
        message: What is wrong, with the suggestion; never an option's secret value.
        suggestion: The nearest known name (or ``true``/``false`` for a boolean's
            value), or ``None`` when nothing is close.
    """

    module: str
    option: str | None
    message: str
    suggestion: str | None = None

    def __str__(self) -> str:
        return self.message


def option_warnings(entry: LoginModuleEntry) -> tuple[OptionWarning, ...]:
    """Return the warnings for ``entry``'s options; none for a module we do not know.

    Kafka accepts every such entry: these are the options it ignores, and the
    booleans it reads as false because they are not ``true``.
    """
    known = KNOWN_OPTIONS.get(entry.module)
    if known is None:
        return ()
    short = entry.module.rsplit(".", 1)[-1]
    names = list(known)
    reads = f"it reads only {', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else names[0]
    found: list[OptionWarning] = []
    for key, value in entry.options.items():
        kind = known.get(key)
        if kind is None:
            guess = _nearest(key, names)
            message = f"{short} ignores option {key!r} ({reads})"
            found.append(OptionWarning(entry.module, key, _with_guess(message, guess), guess))
        elif kind is OptionKind.BOOLEAN and value.lower() not in ("true", "false"):
            found.append(_boolean(entry.module, short, key, value))
    if entry.null_key_value is not None:
        message = f"{short} ignores an option whose name is a number or punctuation ({reads})"
        found.append(OptionWarning(entry.module, None, message))
    return tuple(found)


def _boolean(module: str, short: str, key: str, value: str) -> OptionWarning:
    folded = value.lower()
    guess = _BOOLEAN_WORDS.get(folded) or _nearest(folded, ("true", "false"))
    # A value far from any boolean may be a secret pasted in the wrong place: not shown.
    shown = f"{key}={value!r}" if guess is not None else f"a {key} value other than true or false"
    message = f"{short} reads {shown} as false: only true (in any case) turns on " + (
        "delegation token login" if key == "tokenauth" else f"{key}"
    )
    return OptionWarning(module, key, _with_guess(message, guess), guess)


def _with_guess(message: str, guess: str | None) -> str:
    return f"{message}; did you mean {guess!r}?" if guess is not None else message


def _nearest(name: str, known: Iterable[str]) -> str | None:
    """The known name a typo of ``name`` most likely is: within two edits, or one
    the other starts with (``user`` for ``username``), case ignored."""
    folded = name.lower()
    scored = []
    for candidate in known:
        target = candidate.lower()
        distance = edit_distance(folded, target)
        prefix = len(folded) >= 3 and (target.startswith(folded) or folded.startswith(target))
        if distance <= _NEAR or prefix:
            scored.append((distance, candidate))
    return min(scored)[1] if scored else None
