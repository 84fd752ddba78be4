"""The store a command edits in place (``configs --store``, ``acls --store``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sasl_scram.store import StoreLocation

__all__ = ["lasting_location"]


def lasting_location(text: str, what: str = "store") -> StoreLocation:
    """Parse ``text`` as a store location that outlives the command.

    A ``memory:`` store lives only as long as the process that opened it: a
    command that reported "Completed updating config" or "Adding ACLs" on one
    would report a change that is gone when it exits.

    Raises:
        ValueError: ``text`` is no store location, or it is ``memory:``.
    """
    from sasl_scram.store import StoreLocation

    location = StoreLocation.parse(text, what)
    if location.scheme == "memory":
        raise ValueError(
            "memory: keeps what it holds only in the process that opens it, so what this "
            "command changes would be gone when it exits; give sqlite:PATH or "
            "zookeeper:HOST:PORT[/CHROOT]"
        )
    return location
