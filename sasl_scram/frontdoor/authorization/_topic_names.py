"""The cluster's topic ids, by which newer requests name topics (KIP-516): the
edge's ACLs name topics, so a request by id is decided on the name the id
stands for.

Sans-IO. :class:`TopicNames` learns each id from the answers that pass through
the edge (Metadata v10+, DescribeTopicPartitions) and, on a miss, asks its
``refresh`` callback (the front door's own Metadata request for every topic)
to learn them all, at most one such request at a time and at most one started
per :data:`REFRESH_INTERVAL_S`: a client naming random ids gets
UNKNOWN_TOPIC_ID from the edge, and the cluster sees at most one Metadata a
second for all of them together.

A topic id is a random UUID given at creation and a topic cannot be renamed, so
an id learned maps to its name for good; a deleted topic's id is left until
evicted (the cluster answers UNKNOWN_TOPIC_ID for it itself).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from collections.abc import Iterable
from typing import Any
from typing import Final

__all__ = ["MAX_TOPIC_IDS", "REFRESH_INTERVAL_S", "ZERO_ID", "TopicNames"]

#: Ids kept at most; past it the oldest learned is forgotten (learned again from
#: the next Metadata that names it, or the next refresh).
MAX_TOPIC_IDS: Final = 100_000
#: The least time between two refreshes started (the amplification bound).
REFRESH_INTERVAL_S: Final = 1.0
#: ``Uuid.ZERO_UUID``: no id (a topic asked for by name).
ZERO_ID: Final = bytes(16)


class TopicNames:
    """Topic id to name, bounded, learned from answers and refreshed on a miss.

    Args:
        clock: monotonic seconds (the refresh's rate bound; the adapter that
            sets :attr:`refresh` passes the real one).
        cap: ids kept at most (the oldest learned is evicted first).
        interval: the least time between two refreshes started.
    """

    __slots__ = ("_cap", "_in_flight", "_interval", "_last", "_names", "clock", "refresh")

    def __init__(
        self,
        clock: Callable[[], float] = lambda: 0.0,
        *,
        cap: int = MAX_TOPIC_IDS,
        interval: float = REFRESH_INTERVAL_S,
    ) -> None:
        if cap < 1:
            raise ValueError("a topic id map keeps at least one id")
        self.clock = clock
        self._cap = cap
        self._interval = interval
        self._names: OrderedDict[bytes, str] = OrderedDict()
        self._in_flight = False
        self._last: float | None = None
        #: Starts the cluster's Metadata for every topic; its end is told to
        #: :meth:`refreshed` or :meth:`refresh_failed` (``None``: never refreshed).
        self.refresh: Callable[[], None] | None = None

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"TopicNames(ids={len(self._names)}, cap={self._cap})"

    def learn(self, topic_id: bytes, name: str) -> None:
        """``topic_id`` names ``name`` (the zero id, which names nothing, is ignored)."""
        if topic_id == ZERO_ID or not name:
            return
        names = self._names
        if topic_id in names:
            names.move_to_end(topic_id)
            return
        names[topic_id] = name
        if len(names) > self._cap:
            names.popitem(last=False)

    def learn_topics(self, topics: Iterable[dict[str, Any]] | None) -> None:
        """Every ``(topic_id, name)`` of a Metadata or DescribeTopicPartitions
        answer's topics, before the edge filters them."""
        for topic in topics or ():
            name, topic_id = topic.get("name"), topic.get("topic_id")
            if name is not None and topic_id is not None:
                self.learn(topic_id, name)

    def name(self, topic_id: bytes) -> str | None:
        """The name of ``topic_id``; ``None`` when unknown, which starts a refresh
        unless one is running or one started less than the interval ago."""
        found = self._names.get(topic_id)
        if found is None and topic_id != ZERO_ID:
            self._missed()
        return found

    def _missed(self) -> None:
        if self.refresh is None or self._in_flight:
            return
        now = self.clock()
        if self._last is not None and now - self._last < self._interval:
            return
        self._in_flight, self._last = True, now
        self.refresh()

    @property
    def refreshing(self) -> bool:
        """Whether a refresh is running."""
        return self._in_flight

    def refreshed(self, topics: Iterable[dict[str, Any]] | None) -> None:
        """The refresh's answer (a Metadata response's topics)."""
        self._in_flight = False
        self.learn_topics(topics)

    def refresh_failed(self) -> None:
        """The refresh got no answer: the next miss, an interval on, tries again."""
        self._in_flight = False
