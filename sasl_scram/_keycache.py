"""A bounded cache of client-side derived keys, so a reconnect skips PBKDF2.

PBKDF2 dominates a SCRAM client's cost (0.5 ms for SHA-256, 1.3 ms for
SHA-512 at 4096 iterations here) and the salt and iteration count of a user
do not change between connections. The cache key includes a keyed digest of
the password rather than the password, so a changed password misses.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections import OrderedDict

from sasl_scram._mechanism import ScramMechanism

__all__ = ["DEFAULT_KEY_CACHE", "SaltedPasswordCache"]

# One process-wide key: password digests are only comparable within a process.
_DIGEST_KEY = secrets.token_bytes(32)

CacheKey = tuple[ScramMechanism, bytes, int, bytes]


class SaltedPasswordCache:
    """A thread-safe LRU of ``(ClientKey, ServerKey)`` per mechanism, salt,
    iteration count and password.

    Args:
        maxsize: Entries kept; the least recently used entry goes first.
    """

    def __init__(self, maxsize: int = 256) -> None:
        if maxsize < 0:
            raise ValueError("maxsize must be >= 0")
        self._maxsize = maxsize
        self._entries: OrderedDict[CacheKey, tuple[bytes, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SaltedPasswordCache(maxsize={self._maxsize}, size={len(self._entries)})"

    def __len__(self) -> int:
        return len(self._entries)

    @staticmethod
    def make_key(
        mechanism: ScramMechanism, salt: bytes, iterations: int, password: bytes
    ) -> CacheKey:
        digest = hmac.digest(_DIGEST_KEY, password, hashlib.sha256)
        return (mechanism, salt, iterations, digest)

    def get(self, key: CacheKey) -> tuple[bytes, bytes] | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: CacheKey, value: tuple[bytes, bytes]) -> None:
        if self._maxsize == 0:
            return
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self._maxsize:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


#: Shared by every :class:`ScramClient` that is not given its own cache.
DEFAULT_KEY_CACHE = SaltedPasswordCache()
