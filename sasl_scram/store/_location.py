"""One-line store locations (``sqlite:PATH``, ``zookeeper:HOSTS[/chroot]``, ``memory:``),
parsed once for the credential stores and ``tokenauth``'s token stores."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from typing import Any
from typing import Generic
from typing import NamedTuple
from typing import TypeVar

__all__ = ["SCHEMES", "Backends", "open_location", "parse_location"]

T = TypeVar("T")


class Backends(NamedTuple, Generic[T]):
    """What opens each scheme of a location: a path, a connect string, nothing."""

    sqlite: Callable[..., T]
    zookeeper: Callable[..., T]
    memory: Callable[..., T]


SCHEMES: tuple[str, ...] = Backends._fields


def parse_location(location: str, what: str = "store") -> tuple[str, str]:
    """Split a location into its scheme and its target (empty for ``memory:``).

    Raises:
        ValueError: no scheme, an unknown one, or nothing after ``sqlite:`` or
            ``zookeeper:``; the message names ``what``.
    """
    scheme, sep, target = location.partition(":")
    if not sep:
        raise ValueError(
            f"{what} location must be sqlite:PATH, zookeeper:HOSTS[/chroot] or memory:, "
            f"got {location!r}"
        )
    if scheme not in SCHEMES:
        raise ValueError(f"unknown {what} scheme {scheme!r}; expected sqlite, zookeeper or memory")
    if scheme != "memory" and not target:
        raise ValueError(f"{what} location {location!r} has nothing after '{scheme}:'")
    return scheme, target


def open_location(
    location: str,
    backends: Backends[T],
    *,
    what: str,
    options: Mapping[str, Any],
) -> T:
    """Open the backend ``location`` names: ``backends.<scheme>(target, **options)``
    (``memory`` gets the options only).

    Raises:
        ValueError: see :func:`parse_location`.
    """
    scheme, target = parse_location(location, what)
    backend: Callable[..., T] = getattr(backends, scheme)
    if scheme == "memory":
        return backend(**options)
    return backend(target, **options)
