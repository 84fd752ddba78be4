"""Kafka's primitive encodings (KIP-482; docs/kafka-facts.md §9.2): fixed-width
big-endian integers, unsigned varints, classic and compact strings, bytes and
arrays, UUIDs and tagged-field sections."""

from __future__ import annotations

import struct

from sasl_scram.kafka._errors import MalformedMessage

__all__ = ["Reader", "Writer"]

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
# Kafka's uint16 (Readable.readUnsignedShort): a port of the inter-broker registrations.
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_U32 = struct.Struct(">I")
# Kafka's float64: an IEEE 754 double, big-endian (ByteBuffer.putDouble).
_F64 = struct.Struct(">d")

_SMALL = [bytes([i]) for i in range(0x80)]
# A 32-bit unsigned varint takes at most 5 bytes (7 bits per byte).
_MAX_VARINT_BYTES = 5
#: Java's arrays are indexed by int32: no array can announce more.
MAX_ARRAY_LENGTH = 2**31 - 1


class Reader:
    """Reads primitives from one message; every read checks the bounds."""

    __slots__ = ("_data", "_end", "keep_unknown_tags", "max_array", "pos")

    def __init__(self, data: bytes | memoryview, pos: int = 0) -> None:
        self._data = bytes(data)
        self._end = len(self._data)
        self.pos = pos
        #: The most elements one array may announce; a request's caller lowers it
        #: for peers it does not trust (the endpoint's per-user caps).
        self.max_array = MAX_ARRAY_LENGTH
        #: Keep the tagged fields a schema does not know (a proxy rewriting a
        #: message passes them on); others skip them, as Kafka's readers do.
        self.keep_unknown_tags = False

    def remaining(self) -> int:
        return self._end - self.pos

    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > self._end:
            raise MalformedMessage(f"truncated: need {n} bytes at offset {self.pos}")
        start = self.pos
        self.pos = start + n
        return self._data[start : self.pos]

    def _fixed(self, fmt: struct.Struct) -> int:
        pos = self.pos
        end = pos + fmt.size
        if end > self._end:
            raise MalformedMessage(f"truncated: need {fmt.size} bytes at offset {pos}")
        self.pos = end
        value: int = fmt.unpack_from(self._data, pos)[0]
        return value

    def int8(self) -> int:
        return self._fixed(_I8)

    def int16(self) -> int:
        return self._fixed(_I16)

    def uint16(self) -> int:
        return self._fixed(_U16)

    def int32(self) -> int:
        return self._fixed(_I32)

    def int64(self) -> int:
        return self._fixed(_I64)

    def float64(self) -> float:
        value: float = _F64.unpack(self._take(8))[0]
        return value

    def boolean(self) -> bool:
        return self._take(1) != b"\x00"

    def uuid(self) -> bytes:
        return self._take(16)

    def uvarint(self) -> int:
        pos = self.pos
        if pos < self._end:
            byte = self._data[pos]
            if not byte & 0x80:  # the common one-byte case
                self.pos = pos + 1
                return byte
        result = 0
        for i in range(_MAX_VARINT_BYTES):
            byte = self._take(1)[0]
            result |= (byte & 0x7F) << (7 * i)
            if not byte & 0x80:
                return result
        raise MalformedMessage("unsigned varint longer than 5 bytes")

    def raw(self, n: int) -> bytes:
        return self._take(n)

    def length(self, compact: bool, what: str) -> int:
        """A length prefix; -1 means null."""
        if compact:
            return self.uvarint() - 1
        n = self.int16() if what == "string" else self.int32()
        if n < -1:
            raise MalformedMessage(f"negative {what} length {n}")
        return n

    def string(self, compact: bool) -> str | None:
        n = self.length(compact, "string")
        if n < 0:
            return None
        try:
            return self._take(n).decode("utf-8")
        except UnicodeDecodeError:
            raise MalformedMessage("string is not valid UTF-8") from None

    def bytes_(self, compact: bool) -> bytes | None:
        n = self.length(compact, "bytes")
        return None if n < 0 else self._take(n)

    def array_length(self, compact: bool) -> int:
        n = self.length(compact, "array")
        # Each element takes at least one byte: a count beyond the remaining
        # bytes is malformed and must not make us allocate for it.
        if n > self.remaining():
            raise MalformedMessage(f"array of {n} elements in {self.remaining()} bytes")
        if n > self.max_array:
            raise MalformedMessage(f"array of {n} elements exceeds the limit of {self.max_array}")
        return n


class Writer:
    """Accumulates an encoded message."""

    __slots__ = ("_parts",)

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def getvalue(self) -> bytes:
        return b"".join(self._parts)

    def raw(self, data: bytes) -> None:
        self._parts.append(data)

    def int8(self, value: int) -> None:
        self._parts.append(_I8.pack(value))

    def int16(self, value: int) -> None:
        self._parts.append(_I16.pack(value))

    def uint16(self, value: int) -> None:
        self._parts.append(_U16.pack(value))

    def int32(self, value: int) -> None:
        self._parts.append(_I32.pack(value))

    def int64(self, value: int) -> None:
        self._parts.append(_I64.pack(value))

    def uint32(self, value: int) -> None:
        self._parts.append(_U32.pack(value))

    def float64(self, value: float) -> None:
        self._parts.append(_F64.pack(value))

    def boolean(self, value: bool) -> None:
        self._parts.append(b"\x01" if value else b"\x00")

    def uuid(self, value: bytes) -> None:
        if len(value) != 16:
            raise ValueError("a UUID is 16 bytes")
        self._parts.append(value)

    def uvarint(self, value: int) -> None:
        if 0 <= value < 0x80:
            self._parts.append(_SMALL[value])
            return
        if value < 0:
            raise ValueError("unsigned varint must be >= 0")
        out = bytearray()
        while value >= 0x80:
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        out.append(value)
        self._parts.append(bytes(out))

    def length(self, n: int, compact: bool, what: str) -> None:
        if compact:
            self.uvarint(n + 1)
        elif what == "string":
            self.int16(n)
        else:
            self.int32(n)

    def string(self, value: str | None, compact: bool) -> None:
        if value is None:
            self.length(-1, compact, "string")
            return
        data = value.encode("utf-8")
        if not compact and len(data) > 32767:
            raise ValueError("string longer than 32767 bytes")
        self.length(len(data), compact, "string")
        self._parts.append(data)

    def bytes_(self, value: bytes | None, compact: bool) -> None:
        if value is None:
            self.length(-1, compact, "bytes")
            return
        self.length(len(value), compact, "bytes")
        self._parts.append(bytes(value))
