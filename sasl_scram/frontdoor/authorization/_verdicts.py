"""What the edge decides about one request, in the request's own terms."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from typing import Final

__all__ = ["ALLOWED", "Allowed", "Body", "Partly", "Refused", "Verdict", "and_then"]

#: A decoded message body (the codec's dicts).
Body = dict[str, Any]


class Allowed:
    """Every resource the request names is allowed: it goes on as it came."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ALLOWED"


ALLOWED: Final = Allowed()


@dataclass(frozen=True, slots=True)
class Refused:
    """Nothing goes to the cluster: the edge answers with ``response``."""

    response: Body


@dataclass(frozen=True, slots=True)
class Partly:
    """Some of the request is refused: the cluster gets ``request`` (the allowed
    part) and ``merge`` puts the refused part's errors into its response."""

    request: Body
    merge: Callable[[Body], None]


Verdict = Allowed | Refused | Partly


def and_then(verdict: Allowed | Partly, request: Body, after: Callable[[Body], None]) -> Partly:
    """``verdict`` (for ``request``), with ``after`` run on the cluster's answer
    once ``verdict``'s own merge, if any, has run."""
    if isinstance(verdict, Allowed):
        return Partly(request, after)
    first = verdict.merge

    def merge(answer: Body) -> None:
        first(answer)
        after(answer)

    return Partly(verdict.request, merge)
