"""Java ``HashMap`` iteration order for SCRAM extensions.

Kafka keeps SCRAM extensions in a ``HashMap`` and writes them, and rebuilds the
client-first-message-bare for the AuthMessage, in that map's iteration order
(kafka-internals 2.6). A client sending several extensions must send them in
that order or the proof fails against a Kafka broker.

The order is: by bucket ``spread(String.hashCode()) & (capacity - 1)``, and
within a bucket by insertion order (resizes keep relative order). Kafka parses
into a default map (``Utils.parseMap``) and then copies it
(``new HashMap<>(map)`` in ``SaslExtensions``); the copy's capacity depends on
the JDK: 17 sizes it as ``tableSizeFor((int)(s / 0.75f + 1))``, 19 and later as
``tableSizeFor(ceil(s / 0.75))`` (JDK-8281631). They differ for 3, 6, 12, ...
extensions; with the single ``tokenauth`` extension Kafka uses, order is moot.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable

__all__ = ["java_hashmap_order", "java_string_hash"]

_LOAD_FACTOR = 0.75
_DEFAULT_CAPACITY = 16


def java_string_hash(text: str) -> int:
    """``String.hashCode()`` over UTF-16 code units, as an unsigned 32-bit value."""
    h = 0
    units = text.encode("utf-16-be")
    for (unit,) in struct.iter_unpack(">H", units):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h


def _bucket(key: str, capacity: int) -> int:
    h = java_string_hash(key)
    return (h ^ (h >> 16)) & (capacity - 1)


def _table_size_for(cap: int) -> int:
    n = 1
    while n < cap:
        n <<= 1
    return n


def _default_map_capacity(size: int) -> int:
    capacity = _DEFAULT_CAPACITY
    while size > capacity * _LOAD_FACTOR:
        capacity <<= 1
    return capacity


def _copy_capacity(size: int, jdk: int) -> int:
    if jdk >= 19:
        return _table_size_for(math.ceil(size / _LOAD_FACTOR))
    # float32 division as in JDK 17's putMapEntries; exact for the sizes that matter.
    ft = struct.unpack("f", struct.pack("f", size / _LOAD_FACTOR))[0] + 1.0
    return _table_size_for(int(ft))


def _iteration_order(keys: list[str], capacity: int) -> list[str]:
    return [
        key for _, key in sorted(enumerate(keys), key=lambda p: (_bucket(p[1], capacity), p[0]))
    ]


def java_hashmap_order(keys: Iterable[str], jdk: int = 17) -> list[str]:
    """Order distinct ``keys`` (given in insertion order) as Kafka iterates them.

    Args:
        keys: Extension names in the order they were first inserted.
        jdk: The Java feature release the Kafka peer runs on.
    """
    unique = list(dict.fromkeys(keys))
    if len(unique) < 2:
        return unique
    parsed = _iteration_order(unique, _default_map_capacity(len(unique)))
    return _iteration_order(parsed, _copy_capacity(len(unique), jdk))
