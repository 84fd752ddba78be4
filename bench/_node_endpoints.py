"""A bench-only prototype: rewrite the ``NodeEndpoints`` of Fetch v16+ and Produce v10+.

KIP-951 puts the broker addresses a client may follow (``NodeEndpoints``,
tag 0) in the top-level tagged fields of FetchResponse (v16+) and
ProduceResponse (v10+), written after every topic, partition and record set:
to reach them, the whole response is held and walked. The walk reads only
the structure (compact arrays and strings, tagged-field sections) and skips
each partition's records by their length; the endpoints found are rewritten
to the front door's host and ``port_base + node id``, the rest is copied as
it came, and the payload is re-framed by the caller.

This is what the front door would have to do instead of capping Produce at
v9 and Fetch at v15; ``bench_rewrite.py`` measures it. It is not shipped.
Schemas: Kafka's ``FetchResponse.json`` and ``ProduceResponse.json``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

from sasl_scram.kafka import MalformedMessage

__all__ = [
    "FETCH",
    "PRODUCE",
    "NodeEndpoint",
    "encode_endpoints",
    "encode_tags",
    "node_endpoints",
    "rewrite_node_endpoints",
    "tags_offset",
    "varint",
]

FETCH = 1
PRODUCE = 0
_NODE_ENDPOINTS_TAG = 0
# The first versions with NodeEndpoints (KIP-951) and with topic ids (KIP-516).
_ENDPOINTS_SINCE = {FETCH: 16, PRODUCE: 10}
_TOPIC_ID_SINCE = {FETCH: 13, PRODUCE: 13}
# The first flexible versions (KIP-482): compact arrays and tagged fields.
_FLEXIBLE_SINCE = {FETCH: 12, PRODUCE: 9}
_I32 = struct.Struct(">i")
# Fetch partition: index int32, error int16, high watermark, last stable
# offset and log start offset int64. Produce partition: index, error, base
# offset, log append time, log start offset: the same 30 bytes.
_PARTITION_FIXED = 30
# Fetch: throttle time int32, error code int16, session id int32.
_FETCH_TOP = 10
_UUID = 16
_ABORTED_TXN = 16  # producer id, first offset: two int64


@dataclass(frozen=True, slots=True)
class NodeEndpoint:
    """One broker of ``NodeEndpoints``; ``tags`` is its own tagged-field section, raw."""

    node_id: int
    host: str
    port: int
    rack: str | None
    tags: bytes = b"\x00"


def _uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    if pos < len(buf) and buf[pos] < 0x80:  # lengths and counts under 128: most of them
        return buf[pos], pos + 1
    value = 0
    for i, byte in enumerate(buf[pos : pos + 5]):  # 7 bits a byte: 5 bytes hold 32 bits
        value |= (byte & 0x7F) << (7 * i)
        if byte < 0x80:
            return value, pos + i + 1
    raise MalformedMessage(f"truncated or overlong varint at offset {pos}")


def varint(value: int) -> bytes:
    """An unsigned varint (KIP-482)."""
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _skip_compact(buf: bytes, pos: int) -> int:
    """Past a compact (nullable) string or bytes: length + 1, then the data."""
    n, pos = _uvarint(buf, pos)
    end = pos + max(n - 1, 0)
    if end > len(buf):
        raise MalformedMessage(f"truncated: {n - 1} bytes at offset {pos}")
    return end


def _skip_tag_section(buf: bytes, pos: int) -> int:
    """Past a tagged-field section: count, then (tag, size, data) per field."""
    count, pos = _uvarint(buf, pos)
    for _ in range(count):
        _, pos = _uvarint(buf, pos)
        size, pos = _uvarint(buf, pos)
        pos += size
    if pos > len(buf):
        raise MalformedMessage("truncated tagged fields")
    return pos


def _array(buf: bytes, pos: int) -> tuple[int, int]:
    n, pos = _uvarint(buf, pos)
    return n - 1, pos


def _fetch_partition(buf: bytes, pos: int) -> int:
    pos += _PARTITION_FIXED
    aborted, pos = _array(buf, pos)
    for _ in range(max(aborted, 0)):
        pos = _skip_tag_section(buf, pos + _ABORTED_TXN)
    pos += 4  # preferred read replica
    pos = _skip_compact(buf, pos)  # the records, skipped by their length
    return _skip_tag_section(buf, pos)


def _produce_partition(buf: bytes, pos: int) -> int:
    pos += _PARTITION_FIXED
    errors, pos = _array(buf, pos)
    for _ in range(max(errors, 0)):
        pos = _skip_tag_section(buf, _skip_compact(buf, pos + 4))
    pos = _skip_compact(buf, pos)  # error message
    return _skip_tag_section(buf, pos)


def tags_offset(api_key: int, version: int, payload: bytes) -> int:
    """Where the top-level tagged fields start in a response payload (correlation id on)."""
    if version < _FLEXIBLE_SINCE[api_key]:
        raise ValueError(f"api {api_key} v{version} has no tagged fields")
    pos = _skip_tag_section(payload, 4)  # response header v1: correlation id, tags
    if api_key == FETCH:
        pos += _FETCH_TOP
    partition = _fetch_partition if api_key == FETCH else _produce_partition
    topics, pos = _array(payload, pos)
    for _ in range(max(topics, 0)):
        pos = pos + _UUID if version >= _TOPIC_ID_SINCE[api_key] else _skip_compact(payload, pos)
        partitions, pos = _array(payload, pos)
        for _ in range(max(partitions, 0)):
            pos = partition(payload, pos)
        pos = _skip_tag_section(payload, pos)
    if api_key == PRODUCE:
        pos += 4  # throttle time, after the topics from v1
    if pos > len(payload):
        raise MalformedMessage("truncated response")
    return pos


def _read_tags(payload: bytes, pos: int) -> dict[int, bytes]:
    count, pos = _uvarint(payload, pos)
    tags: dict[int, bytes] = {}
    for _ in range(count):
        tag, pos = _uvarint(payload, pos)
        size, pos = _uvarint(payload, pos)
        tags[tag] = payload[pos : pos + size]
        pos += size
    if pos != len(payload):
        raise MalformedMessage(f"{len(payload) - pos} bytes after the tagged fields")
    return tags


def _compact_string(buf: bytes, pos: int) -> tuple[str | None, int]:
    end = _skip_compact(buf, pos)
    n, start = _uvarint(buf, pos)
    return (None if n == 0 else buf[start:end].decode("utf-8")), end


def _decode_endpoints(data: bytes) -> list[NodeEndpoint]:
    n, pos = _array(data, 0)
    out = []
    for _ in range(n):
        node_id = _I32.unpack_from(data, pos)[0]
        host, pos = _compact_string(data, pos + 4)
        port = _I32.unpack_from(data, pos)[0]
        rack, pos = _compact_string(data, pos + 4)
        end = _skip_tag_section(data, pos)
        out.append(NodeEndpoint(node_id, host or "", port, rack, data[pos:end]))
        pos = end
    if pos != len(data):
        raise MalformedMessage("bytes after NodeEndpoints")
    return out


def _encode_string(value: str | None) -> bytes:
    if value is None:
        return b"\x00"
    data = value.encode("utf-8")
    return varint(len(data) + 1) + data


def encode_endpoints(endpoints: list[NodeEndpoint]) -> bytes:
    parts = [varint(len(endpoints) + 1)]
    for e in endpoints:
        parts += [_I32.pack(e.node_id), _encode_string(e.host), _I32.pack(e.port)]
        parts += [_encode_string(e.rack), e.tags]
    return b"".join(parts)


def encode_tags(tags: dict[int, bytes]) -> bytes:
    """A tagged-field section, tags in ascending order as Kafka writes them."""
    parts = [varint(len(tags))]
    for tag in sorted(tags):
        parts += [varint(tag), varint(len(tags[tag])), tags[tag]]
    return b"".join(parts)


def node_endpoints(api_key: int, version: int, payload: bytes) -> list[NodeEndpoint]:
    """The response's NodeEndpoints (empty when absent)."""
    tags = _read_tags(payload, tags_offset(api_key, version, payload))
    data = tags.get(_NODE_ENDPOINTS_TAG)
    return [] if data is None else _decode_endpoints(data)


def rewrite_node_endpoints(
    api_key: int, version: int, payload: bytes, host: str, port_of: Callable[[int], int]
) -> bytes:
    """The payload with every NodeEndpoint at ``host``, ``port_of(node id)``.

    A response without NodeEndpoints (nearly all) comes back as it was, after
    the walk that proves it has none.
    """
    if version < _ENDPOINTS_SINCE[api_key]:
        return payload
    pos = tags_offset(api_key, version, payload)
    tags = _read_tags(payload, pos)
    data = tags.get(_NODE_ENDPOINTS_TAG)
    if data is None:
        return payload
    endpoints = [
        NodeEndpoint(e.node_id, host, port_of(e.node_id), e.rack, e.tags)
        for e in _decode_endpoints(data)
    ]
    tags[_NODE_ENDPOINTS_TAG] = encode_endpoints(endpoints)
    return payload[:pos] + encode_tags(tags)
