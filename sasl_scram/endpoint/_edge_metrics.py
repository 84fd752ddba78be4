"""What ``/metrics`` says per edge user, and the connections the caps refused.

Per user, the front door counts what it forwarded for that user's
connections: requests, and the bytes of requests and of responses, each for
Produce, Fetch and the other APIs together (three, so that the series stay
few whatever the clients send). At most ``scram.metrics.max.users`` users get
a label of their own, first come first labelled, for the life of the process
(a counter keeps its series: a user is never moved in or out of ``other``);
every other user is counted under ``user="other"``, as is a user whose name
is ``other`` or longer than :data:`NAME_BYTES` - 1 bytes in UTF-8.

The figures are float cells, as the other rows: a list in one process, a
worker's slice of the shared block with ``scram.workers`` above 1. There the
users' names are in the block too (:class:`UserNames`), one table that every
worker fills, so a user has one label and one row index in every worker and
the parent's sum is exact: a name is claimed under a lock (a POSIX record
lock, which dies with the process that holds it), once per user and worker.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from collections.abc import Sequence
from typing import Any
from typing import Protocol

__all__ = [
    "CAPS",
    "NAME_BYTES",
    "OTHER",
    "EdgeMetrics",
    "SharedLock",
    "UserNames",
    "edge_cells",
    "edge_families",
]

PREFIX = "kafka_scram_"
#: The caps whose refusals are counted, by the key that sets each.
CAPS = ("max.connections.per.ip", "scram.max.connections.per.user")
#: The label of the users counted together.
OTHER = "other"
#: Bytes of one name in the shared table: its length, then up to 255 bytes of UTF-8.
NAME_BYTES = 256
#: The APIs counted apart per user (Produce, Fetch), then the rest; by API key.
API_GROUPS = ("Produce", "Fetch", OTHER)
#: Per user and group of APIs: requests, request bytes, response bytes.
GROUP_CELLS = 3
USER_CELLS = len(API_GROUPS) * GROUP_CELLS
_USERS = len(CAPS)  # the cells of the users' rows begin after the refusals


def edge_cells(max_users: int) -> int:
    """Cells of one process: the refusals, a row per labelled user, and ``other``'s."""
    return _USERS + (max_users + 1) * USER_CELLS


class _Lock(Protocol):
    def __enter__(self) -> object: ...
    def __exit__(self, *exc: object) -> None: ...


class SharedLock:
    """A lock the workers share: a POSIX record lock on a memory file made before
    they fork. The kernel drops it when its holder dies, so a worker killed while
    it claims a name blocks nobody."""

    def __init__(self) -> None:
        self.fd = os.memfd_create("kafka-scram-metrics-names", os.MFD_CLOEXEC)

    def __enter__(self) -> SharedLock:
        fcntl.lockf(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        fcntl.lockf(self.fd, fcntl.LOCK_UN)

    def close(self) -> None:
        os.close(self.fd)


class UserNames:
    """The users with a label of their own: slot ``i`` names the user of row ``i``.

    Slots fill in order and are never emptied, so the names are a prefix of the
    table; a slot's length byte is written after its name, so a reader that sees
    it sees the whole name. This process mirrors the slots it has read
    (:meth:`index` reads on only when a name is not among them).

    Args:
        max_users: Slots.
        table: ``max_users * NAME_BYTES`` bytes (in the shared block with workers).
        lock: Held while a slot is claimed (workers: :class:`SharedLock`).
    """

    def __init__(self, max_users: int, table: Any = None, lock: _Lock | None = None) -> None:
        self.max_users = max_users
        self._table: Any = table if table is not None else bytearray(max_users * NAME_BYTES)
        self._lock: _Lock = lock if lock is not None else contextlib.nullcontext()
        self._known: dict[str, int] = {}  # at most max_users entries

    def index(self, user: str) -> int:
        """``user``'s row: its slot, claimed now if one is free; ``max_users`` (the
        row of ``other``) once every slot is taken."""
        found = self._known.get(user)
        if found is not None:
            return found
        encoded = user.encode("utf-8", "surrogatepass")
        if user == OTHER or len(encoded) >= NAME_BYTES:
            return self.max_users
        found = self._read_on(user)
        if found is not None or len(self._known) >= self.max_users:
            return self.max_users if found is None else found
        with self._lock:
            found = self._read_on(user)  # another worker may have claimed meanwhile
            slot = len(self._known)
            if found is not None or slot >= self.max_users:
                return self.max_users if found is None else found
            start = slot * NAME_BYTES
            self._table[start + 1 : start + 1 + len(encoded)] = encoded
            self._table[start] = len(encoded)  # last: the slot is whole once it shows
        self._known[user] = slot
        return slot

    def _read_on(self, user: str) -> int | None:
        """Mirror the slots filled since the last read; ``user``'s slot if among them."""
        for slot in range(len(self._known), self.max_users):
            name = self._name(slot)
            if name is None:
                break
            self._known[name] = slot
        return self._known.get(user)

    def _name(self, slot: int) -> str | None:
        start = slot * NAME_BYTES
        size = self._table[start]
        if not size:
            return None
        return bytes(self._table[start + 1 : start + 1 + size]).decode("utf-8", "surrogatepass")

    def labels(self) -> list[str]:
        """The names of the slots filled so far, in row order (read from the table)."""
        out: list[str] = []
        for slot in range(self.max_users):
            name = self._name(slot)
            if name is None:
                break
            out.append(name)
        return out


class EdgeMetrics:
    """The refusals of the caps and the rows of the users, on the event loop.

    Args:
        names: The users' table.
        cells: :func:`edge_cells` floats (a worker's slice of the shared block),
            or ``None`` for the process's own list.
    """

    __slots__ = ("cells", "names")

    def __init__(self, names: UserNames, cells: Any = None) -> None:
        self.names = names
        self.cells: Any = cells if cells is not None else [0.0] * edge_cells(names.max_users)

    def refused(self, cap: int) -> None:
        """A connection refused by ``CAPS[cap]``."""
        self.cells[cap] += 1

    def row(self, user: str) -> int:
        """The first cell of ``user``'s row."""
        return _USERS + self.names.index(user) * USER_CELLS


def edge_families(cells: Sequence[float], labels: Sequence[str]) -> Iterator[Any]:
    """The metric families of one set of cells and the users' labels (prometheus-client's)."""
    from prometheus_client.core import CounterMetricFamily

    refused = CounterMetricFamily(
        PREFIX + "refused_connections",
        "Connections refused by a connection cap, by the key that sets it",
        labels=["cap"],
    )
    for i, cap in enumerate(CAPS):
        refused.add_metric([cap], cells[i])
    yield refused
    max_users = (len(cells) - _USERS) // USER_CELLS - 1
    rows = [(name, _USERS + i * USER_CELLS) for i, name in enumerate(labels)]
    rows.append((OTHER, _USERS + max_users * USER_CELLS))
    for name, figure, doc in (
        ("user_forwarded_requests", 0, "Requests forwarded to the cluster, per edge user"),
        ("user_forwarded_request_bytes", 1, "Bytes of requests forwarded, per edge user"),
        ("user_forwarded_response_bytes", 2, "Bytes of responses forwarded, per edge user"),
    ):
        family = CounterMetricFamily(PREFIX + name, doc, labels=["user", "api"])
        for user, base in rows:
            for g, api in enumerate(API_GROUPS):
                cell = base + g * GROUP_CELLS
                if cells[cell] or cells[cell + figure]:
                    family.add_metric([user, api], cells[cell + figure])
        yield family
