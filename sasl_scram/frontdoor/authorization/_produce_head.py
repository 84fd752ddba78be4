"""A Produce request's head: what the edge decides a one-topic Produce on
before its record batches arrive, so those stream through unread.

From the client id on (request header v1, plus tagged fields from v9's
header v2): the transactional id (v3+), ``acks``, ``timeout_ms``, the number
of topics, and the first topic's name (ProduceRequest.json; compact strings
and arrays from v9, KIP-482).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final

__all__ = ["ProduceHead", "produce_head"]

_I16: Final = struct.Struct(">h")
_I32: Final = struct.Struct(">i")
_TRANSACTIONAL_SINCE: Final = 3
_FLEXIBLE_SINCE: Final = 9

Buffer = bytes | bytearray | memoryview


@dataclass(frozen=True, slots=True)
class ProduceHead:
    transactional_id: str | None
    acks: int
    topics: int
    first_topic: str | None


class _More(Exception):
    """The head goes on past the bytes read so far."""


class _Cursor:
    __slots__ = ("buf", "end", "pos")

    def __init__(self, buf: Buffer, pos: int, end: int) -> None:
        self.buf, self.pos, self.end = buf, pos, end

    def take(self, n: int) -> int:
        at = self.pos
        if n < 0 or at + n > self.end:
            raise _More
        self.pos = at + n
        return at

    def uvarint(self) -> int:
        value = shift = 0
        while shift < 35:
            byte = self.buf[self.take(1)]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
        raise ValueError("varint longer than 5 bytes")

    def string(self, flexible: bool) -> str | None:
        length = self.uvarint() - 1 if flexible else _I16.unpack_from(self.buf, self.take(2))[0]
        if length < 0:
            return None
        at = self.take(length)
        return bytes(self.buf[at : at + length]).decode("utf-8", "replace")


def produce_head(buf: Buffer, start: int, end: int, version: int) -> ProduceHead | None:
    """The head of the Produce whose client id starts at ``buf[start]``;
    ``None`` when ``buf[start:end]`` ends before it does."""
    flexible = version >= _FLEXIBLE_SINCE
    cursor = _Cursor(buf, start, end)
    try:
        cursor.string(False)  # the client id: a classic string in every header
        if flexible:
            for _ in range(cursor.uvarint()):
                cursor.uvarint()
                cursor.take(cursor.uvarint())
        transactional_id = cursor.string(flexible) if version >= _TRANSACTIONAL_SINCE else None
        acks = _I16.unpack_from(buf, cursor.take(2))[0]
        cursor.take(4)  # timeout_ms
        topics = cursor.uvarint() - 1 if flexible else _I32.unpack_from(buf, cursor.take(4))[0]
        first = cursor.string(flexible) if topics > 0 else None
    except _More:
        return None
    return ProduceHead(transactional_id, acks, topics, first)
