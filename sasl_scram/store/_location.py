"""Where a store lives: :class:`StoreLocation`, typed, for the credential stores and
``tokenauth``'s token stores alike.

On a command line or in a file a location is one line (``sqlite:PATH``,
``zookeeper:HOSTS[/chroot]``, ``memory:``); :meth:`StoreLocation.parse` reads
it once, and from there on the scheme, the target and the backend's options
travel together, so no caller picks a backend by testing a prefix.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from os import PathLike
from pathlib import Path
from typing import Any
from typing import Generic
from typing import NamedTuple
from typing import TypeVar

__all__ = ["SCHEMES", "Backends", "StoreLocation", "open_location", "parse_location"]

T = TypeVar("T")


class Backends(NamedTuple, Generic[T]):
    """What opens each scheme of a location: a path, a connect string, nothing."""

    sqlite: Callable[..., T]
    zookeeper: Callable[..., T]
    memory: Callable[..., T]


SCHEMES: tuple[str, ...] = Backends._fields


@dataclass(frozen=True)
class StoreLocation:
    """A store's scheme, its target (a file, a ZooKeeper connect string, nothing for
    ``memory``) and the keyword options its backend is opened with.

    Build one with :meth:`parse`, :meth:`sqlite`, :meth:`zookeeper` or
    :meth:`memory`; ``str()`` gives the one-line form back (without options).
    The options may hold a login (a ZooKeeper password): they are not in the repr.

    Raises:
        ValueError: an unknown scheme, or no target for ``sqlite`` or ``zookeeper``.
    """

    scheme: str
    target: str = ""
    options: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    #: What the location is for, in error messages (``token store``).
    what: str = field(default="store", repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.scheme not in SCHEMES:
            raise ValueError(
                f"unknown {self.what} scheme {self.scheme!r}; expected sqlite, zookeeper or memory"
            )
        if self.scheme != "memory" and not self.target:
            raise ValueError(
                f"{self.what} location {str(self)!r} has nothing after '{self.scheme}:'"
            )

    def __str__(self) -> str:
        return f"{self.scheme}:{self.target}"

    @classmethod
    def parse(cls, location: str, what: str = "store") -> StoreLocation:
        """Read ``sqlite:PATH``, ``zookeeper:HOSTS[/chroot]`` or ``memory:``.

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
        return cls(scheme, target, what=what)

    @classmethod
    def sqlite(cls, path: str | PathLike[str], **options: Any) -> StoreLocation:
        """An SQLite file; ``options`` go to the backend (``poll_interval``, ``create``)."""
        return cls("sqlite", str(path), options)

    @classmethod
    def zookeeper(cls, connect: str, **options: Any) -> StoreLocation:
        """A ZooKeeper ensemble (``host:port[,...][/chroot]``); ``options`` go to the
        backend (``security``, timeouts, ``max_staleness``, ``share_session``)."""
        return cls("zookeeper", connect, options)

    @classmethod
    def memory(cls, **options: Any) -> StoreLocation:
        """A store in this process's memory."""
        return cls("memory", "", options)

    @property
    def path(self) -> Path:
        """The SQLite file.

        Raises:
            ValueError: not an SQLite location.
        """
        if self.scheme != "sqlite":
            raise ValueError(f"{self} is not an SQLite {self.what}")
        return Path(self.target)

    def with_options(self, **options: Any) -> StoreLocation:
        """The same location with ``options`` over its own."""
        return StoreLocation(self.scheme, self.target, {**self.options, **options}, self.what)

    def open(self, backends: Backends[T], **options: Any) -> T:
        """``backends.<scheme>(target, **options)`` (``memory`` gets the options only),
        with ``options`` over the location's own."""
        backend: Callable[..., T] = getattr(backends, self.scheme)
        merged = {**self.options, **options}
        if self.scheme == "memory":
            return backend(**merged)
        return backend(self.target, **merged)


def parse_location(location: str, what: str = "store") -> tuple[str, str]:
    """Split a one-line location into its scheme and its target (see
    :meth:`StoreLocation.parse`, which the stores use).

    Raises:
        ValueError: see :meth:`StoreLocation.parse`.
    """
    parsed = StoreLocation.parse(location, what)
    return parsed.scheme, parsed.target


def open_location(
    location: StoreLocation | str,
    backends: Backends[T],
    *,
    what: str,
    options: Mapping[str, Any],
) -> T:
    """Open the backend ``location`` names (see :meth:`StoreLocation.open`).

    Raises:
        ValueError: see :meth:`StoreLocation.parse`.
    """
    if isinstance(location, str):
        location = StoreLocation.parse(location, what)
    return location.open(backends, **options)
