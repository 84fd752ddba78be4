"""One named set of patches into a client library, applied and reverted as a whole.

Each integration replaces a few things in its client, process-wide: class
attributes (aiokafka's connection methods, kafka-python's
``KafkaConnection.initialize``) or entries of a registry dict (kafka-python's
``SASL_MECHANISMS``, pure-sasl's ``mechanisms``). A :class:`PatchSet` does it
under one lock, remembers what each target held (or that it held nothing) and
puts exactly that back; a target someone else replaced since is left alone.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from collections.abc import MutableMapping
from typing import Any
from typing import TypeAlias

__all__ = ["Patch", "PatchSet"]

#: (owner, name, replacement): an attribute of ``owner``, or a key when the
#: owner is a dict-like registry.
Patch: TypeAlias = tuple[Any, str, Any]

# What a target held before it was patched when it held nothing.
_ABSENT = object()


def _current(owner: Any, name: str) -> Any:
    """What ``owner`` holds under ``name`` now, or the absent marker."""
    if isinstance(owner, MutableMapping):
        return owner.get(name, _ABSENT)
    return getattr(owner, name, _ABSENT)


def _put(owner: Any, name: str, value: Any) -> None:
    if isinstance(owner, MutableMapping):
        if value is _ABSENT:
            owner.pop(name, None)
        else:
            owner[name] = value
    elif value is _ABSENT:
        delattr(owner, name)
    else:
        setattr(owner, name, value)


class PatchSet:
    """Patches applied together and reverted together.

    Args:
        name: What is patched, for ``repr`` (``"aiokafka"``).

    Attributes:
        lock: Held while patches are applied or reverted; re-entrant, so a
            caller may hold it to do its own work atomically with them.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.lock = threading.RLock()
        self._applied: list[Patch] = []
        self._originals: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"PatchSet({self.name!r}, applied={self.applied})"

    @property
    def applied(self) -> bool:
        """Whether :meth:`apply` ran and :meth:`revert` has not since."""
        return bool(self._applied)

    def apply(self, patches: Iterable[Patch]) -> bool:
        """Apply ``patches`` unless already applied; ``True`` when this call did.

        Names must be distinct: an original is looked up by name.
        """
        patches = list(patches)
        names = [name for _, name, _ in patches]
        if len(set(names)) != len(names):
            raise ValueError(f"{self.name}: a name is patched twice in {names}")
        with self.lock:
            if self._applied:
                return False
            for owner, name, replacement in patches:
                self._originals[name] = _current(owner, name)
                _put(owner, name, replacement)
            self._applied = patches
            return True

    def revert(self) -> bool:
        """Put back what every applied patch replaced; ``True`` when this call did.

        A target that no longer holds its replacement (someone patched it
        again) is left as it is.
        """
        with self.lock:
            if not self._applied:
                return False
            for owner, name, replacement in self._applied:
                if _current(owner, name) is replacement:
                    _put(owner, name, self._originals[name])
            self._applied = []
            self._originals.clear()
            return True

    def original(self, name: str, default: Any = None) -> Any:
        """What ``name`` held before the patches, or ``default`` when not applied
        or when it held nothing."""
        found = self._originals.get(name, _ABSENT)
        return default if found is _ABSENT else found

    @staticmethod
    def in_place(patches: Iterable[Patch]) -> bool:
        """Whether every target holds its replacement now (whoever put it there)."""
        return all(_current(owner, name) is replacement for owner, name, replacement in patches)
