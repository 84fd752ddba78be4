"""The resources named by the two requests of the data path, read without the
generic decoder: a Produce's head (its first topic comes before its record
batches) and a consumer's Fetch (topic names, or ids, between fixed-size
partitions).

Each reader returns ``None`` when the bytes end before what it needs, and
raises ``ValueError`` on a request that is not well formed (the caller then
reads it whole, whose decoder says what is wrong). Layouts per
ProduceRequest.json and FetchRequest.json; compact strings, arrays and tagged
fields in flexible versions (KIP-482).
"""

from __future__ import annotations

from typing import Final
from typing import NamedTuple

from sasl_scram.frontdoor._wire import read_i16
from sasl_scram.frontdoor._wire import read_i32
from sasl_scram.frontdoor._wire import read_uvarint

__all__ = ["FetchHead", "ProduceHead", "fetch_head", "produce_head"]

_PRODUCE_TRANSACTIONAL_SINCE: Final = 3
_PRODUCE_FLEXIBLE_SINCE: Final = 9
_FETCH_FLEXIBLE_SINCE: Final = 12
#: KIP-516: Fetch names topics by id.
_FETCH_BY_ID_SINCE: Final = 13
#: KIP-903: the replica id moves into the tagged ReplicaState.
_FETCH_REPLICA_STATE_SINCE: Final = 15
_REPLICA_STATE_TAG: Final = 1


class ProduceHead(NamedTuple):
    transactional_id: str | None
    acks: int
    topics: int
    first_topic: str | None


class FetchHead(NamedTuple):
    replica_id: int
    #: Where ``session_epoch`` sits in the buffer (-1 before v7, which has none).
    epoch_at: int
    session_epoch: int
    #: The topics' names (v4-12).
    topics: list[str]
    #: The topics' ids (v13+).
    topic_ids: list[bytes]


def _uvarint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    got = read_uvarint(buf, pos, end)
    if got is None:
        raise IndexError
    return got


def _string(buf: bytes, pos: int, end: int, flexible: bool) -> tuple[str | None, int]:
    if flexible:
        length, pos = _uvarint(buf, pos, end)
        length -= 1
    else:
        if pos + 2 > end:
            raise IndexError
        length = read_i16(buf, pos)
        pos += 2
    if length < 0:
        return None, pos
    if pos + length > end:
        raise IndexError
    return bytes(buf[pos : pos + length]).decode("utf-8", "replace"), pos + length


def _tags(buf: bytes, pos: int, end: int) -> int:
    count, pos = _uvarint(buf, pos, end)
    for _ in range(count):
        _, pos = _uvarint(buf, pos, end)
        size, pos = _uvarint(buf, pos, end)
        pos += size
    if pos > end:
        raise IndexError
    return pos


def _count(buf: bytes, pos: int, end: int, flexible: bool) -> tuple[int, int]:
    if flexible:
        count, pos = _uvarint(buf, pos, end)
        return count - 1, pos
    if pos + 4 > end:
        raise IndexError
    return read_i32(buf, pos), pos + 4


def produce_head(buf: bytes, start: int, end: int, version: int) -> ProduceHead | None:
    """The head of the Produce whose client id starts at ``buf[start]``."""
    flexible = version >= _PRODUCE_FLEXIBLE_SINCE
    try:
        _, pos = _string(buf, start, end, False)  # the client id: classic in every header
        if flexible:
            pos = _tags(buf, pos, end)
        transactional_id = None
        if version >= _PRODUCE_TRANSACTIONAL_SINCE:
            transactional_id, pos = _string(buf, pos, end, flexible)
        if pos + 6 > end:
            return None
        acks = read_i16(buf, pos)
        topics, pos = _count(buf, pos + 6, end, flexible)  # after acks and timeout_ms
        first = _string(buf, pos, end, flexible)[0] if topics > 0 else None
    except IndexError:
        return None
    return ProduceHead(transactional_id, acks, topics, first)


def _partition_size(version: int) -> int:
    """A fetched partition's fixed fields: partition, current leader epoch (v9+),
    fetch offset, last fetched epoch (v12+), log start offset (v5+), max bytes."""
    return 4 + (4 if version >= 9 else 0) + 8 + (4 if version >= 12 else 0) + (
        8 if version >= 5 else 0
    ) + 4  # fmt: skip


def fetch_head(buf: bytes, start: int, version: int) -> FetchHead:
    """A whole Fetch request (``start``: its client id) up to its topics, v4-18:
    topic names up to v12, topic ids (16 bytes each) from v13. From v15 the
    replica id is in the tagged ``ReplicaState`` after the topics, so the rest
    is read too. Raises ``ValueError`` or ``IndexError`` when it is not well
    formed."""
    end = len(buf)
    flexible = version >= _FETCH_FLEXIBLE_SINCE
    by_id = version >= _FETCH_BY_ID_SINCE
    _, pos = _string(buf, start, end, False)
    if flexible:
        pos = _tags(buf, pos, end)
    replica_id = -1
    if version < _FETCH_REPLICA_STATE_SINCE:
        replica_id = read_i32(buf, pos)
        pos += 4
    pos += 4 + 4 + 4 + 1  # max wait, min bytes, max bytes, isolation level
    epoch_at, epoch = -1, -1
    if version >= 7:
        epoch_at = pos + 4  # after the session id
        epoch = read_i32(buf, epoch_at)
        pos += 8
    count, pos = _count(buf, pos, end, flexible)
    size = _partition_size(version)
    topics: list[str] = []
    ids: list[bytes] = []
    for _ in range(count):
        if by_id:
            if pos + 16 > end:
                raise IndexError
            ids.append(bytes(buf[pos : pos + 16]))
            pos += 16
        else:
            name, pos = _string(buf, pos, end, flexible)
            if name is None:
                raise ValueError("a null topic name")
            topics.append(name)
        partitions, pos = _count(buf, pos, end, flexible)
        if partitions < 0:
            raise ValueError("a null partition array")
        if flexible:
            for _ in range(partitions):
                pos = _tags(buf, pos + size, end)
            pos = _tags(buf, pos, end)
        else:
            pos += partitions * size
    if pos > end:
        raise IndexError
    if version >= _FETCH_REPLICA_STATE_SINCE:
        replica_id = _replica_state(buf, pos, end)
    return FetchHead(replica_id, epoch_at, epoch, topics, ids)


def _replica_state(buf: bytes, pos: int, end: int) -> int:
    """The replica id of a v15+ Fetch's tagged ``ReplicaState`` (tag 1), read
    past the forgotten topics (ids) and the rack id; -1 (a consumer) without it."""
    count, pos = _count(buf, pos, end, True)
    for _ in range(max(count, 0)):
        partitions, pos = _count(buf, pos + 16, end, True)
        pos = _tags(buf, pos + 4 * max(partitions, 0), end)
    _, pos = _string(buf, pos, end, True)  # the rack id
    tags, pos = _uvarint(buf, pos, end)
    for _ in range(tags):
        tag, pos = _uvarint(buf, pos, end)
        size, pos = _uvarint(buf, pos, end)
        if tag == _REPLICA_STATE_TAG:
            if size < 4 or pos + 4 > end:
                raise ValueError("a short ReplicaState")
            return read_i32(buf, pos)
        pos += size
    if pos > end:
        raise IndexError
    return -1
