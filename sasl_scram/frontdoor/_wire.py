"""Big-endian integers and unsigned varints read in place from a frame's bytes.

The forwarding path reads a few integers of every frame (its size, a
request's header, a Produce request's ``acks``, a response's correlation
id). Typed ``bytes``, each read compiles (mypyc) to a bounds-checked byte
load, where ``struct.Struct.unpack_from`` costs a method call, a buffer
request and a tuple per integer. A read past the end raises ``IndexError``:
callers check the length first.
"""

from __future__ import annotations

from sasl_scram.frontdoor._errors import PeerProtocolError

__all__ = ["read_i16", "read_i32", "read_uvarint"]


def read_i16(buf: bytes, pos: int) -> int:
    """The int16 at ``buf[pos:pos + 2]``."""
    value = buf[pos] << 8 | buf[pos + 1]
    return value - 0x10000 if value & 0x8000 else value


def read_i32(buf: bytes, pos: int) -> int:
    """The int32 at ``buf[pos:pos + 4]``."""
    value = buf[pos] << 24 | buf[pos + 1] << 16 | buf[pos + 2] << 8 | buf[pos + 3]
    return value - 0x100000000 if value & 0x80000000 else value


def read_uvarint(buf: bytes, pos: int, end: int) -> tuple[int, int] | None:
    """An unsigned varint (the protocol's compact lengths and tag counts) at
    ``buf[pos:end]`` and the position after it; ``None`` when it runs past
    ``end``. More than 5 bytes is the peer's error: Kafka's
    ``ByteUtils.readUnsignedVarint`` refuses them too."""
    if pos < end and buf[pos] < 0x80:
        # The usual case (no header tags, a short transactional id): one byte.
        return buf[pos], pos + 1
    value = shift = 0
    while pos < end and shift < 35:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
    if shift >= 35:
        raise PeerProtocolError("varint longer than 5 bytes")
    return None
