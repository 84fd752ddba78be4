"""``${name}`` expansion as the JDK's ``sun.security.util.PropertyExpander`` does it."""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["ExpansionError", "expand"]


class ExpansionError(Exception):
    """A ``${name}`` that cannot be expanded.

    Attributes:
        name: The property name (empty for ``${}``).
        java_message: The JDK's message for the same failure.
    """

    def __init__(self, name: str, java_message: str) -> None:
        super().__init__(java_message)
        self.name = name
        self.java_message = java_message


def expand(value: str, properties: Mapping[str, str]) -> str:
    """Expand every ``${name}`` in ``value`` from ``properties``.

    Follows PropertyExpander.expand (JDK 17): ``${/}`` is the file separator,
    ``${{...}}`` is kept verbatim, a ``${`` without a closing ``}`` is kept
    verbatim, and an undefined name is an error.

    Raises:
        ExpansionError: A name is not in ``properties`` (or is empty).
    """
    p = value.find("${")
    if p == -1:
        return value
    out: list[str] = []
    n = len(value)
    i = 0
    while p < n:
        if p > i:
            out.append(value[i:p])
        pe = p + 2
        if pe < n and value[pe] == "{":
            pe = value.find("}}", pe)
            if pe == -1 or pe + 2 == n:
                out.append(value[p:])
                break
            pe += 1
            out.append(value[p : pe + 1])
        else:
            close = value.find("}", pe)
            if close == -1:
                out.append(value[p:])
                break
            pe = close
            name = value[p + 2 : pe]
            if name == "/":
                out.append(os.sep)
            elif name == "":
                # System.getProperty("") throws before the lookup.
                raise ExpansionError(name, "key can't be empty")
            elif name in properties:
                out.append(properties[name])
            else:
                raise ExpansionError(name, f"unable to expand property {name}")
        i = pe + 1
        p = value.find("${", i)
        if p == -1:
            if i < n:
                out.append(value[i:])
            break
    return "".join(out)
