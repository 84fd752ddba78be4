"""SCRAM's primitives (RFC 5802 section 2.2) and Kafka's random strings.

Every secret comparison in the package goes through :func:`constant_time_equal`
and every random value comes from the OS CSPRNG (:func:`os.urandom`, as :mod:`secrets`;
nonces and salts by the few hundred).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections import deque
from collections.abc import Callable

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

from sasl_scram._mechanism import ScramMechanism

__all__ = [
    "base36",
    "client_key",
    "constant_time_equal",
    "hash_digest",
    "hmac_digest",
    "kafka_random_string",
    "salted_password",
    "server_key",
    "xor",
]

_CRYPTOGRAPHY_HASHES: dict[str, type[hashes.HashAlgorithm]] = {
    "sha256": hashes.SHA256,
    "sha512": hashes.SHA512,
}

# Kafka's ScramFormatter.secureRandomString(): new BigInteger(130, random).toString(36).
_NONCE_BITS = 130
_NONCE_BYTES = (_NONCE_BITS + 7) // 8
_NONCE_SHIFT = _NONCE_BYTES * 8 - _NONCE_BITS
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
_PAIRS = [a + b for a in _DIGITS for b in _DIGITS]


def salted_password(
    mechanism: ScramMechanism, password: bytes, salt: bytes, iterations: int
) -> bytes:
    """Hi(password, salt, i), which is PBKDF2-HMAC with dkLen = hash length.

    ``cryptography``'s PBKDF2HMAC is 1.4-1.7x faster than hashlib's here.
    """
    kdf = PBKDF2HMAC(
        algorithm=_CRYPTOGRAPHY_HASHES[mechanism.hash_name](),
        length=mechanism.digest_size,
        salt=salt,
        iterations=iterations,
    )
    return kdf.derive(password)


def _load_fast_hmac() -> Callable[[bytes, bytes, str], bytes]:
    """OpenSSL's one-shot HMAC without the pure-Python dispatch of ``hmac.digest``."""
    # A module import, not `from _hashlib import hmac_digest`: mypyc binds a
    # function-level from-import to the module's global of the same name,
    # which would replace this module's own hmac_digest.
    try:
        import _hashlib
    except ImportError:  # pragma: no cover - CPython built without OpenSSL
        return hmac.digest
    fast: Callable[[bytes, bytes, str], bytes] = _hashlib.hmac_digest
    return fast


fast_hmac = _load_fast_hmac()


def hmac_digest(mechanism: ScramMechanism, key: bytes, msg: bytes) -> bytes:
    return fast_hmac(key, msg, mechanism.hash_name)


def hash_digest(mechanism: ScramMechanism, data: bytes) -> bytes:
    return hashlib.new(mechanism.hash_name, data).digest()


def client_key(mechanism: ScramMechanism, salted: bytes) -> bytes:
    return fast_hmac(salted, b"Client Key", mechanism.hash_name)


def server_key(mechanism: ScramMechanism, salted: bytes) -> bytes:
    return fast_hmac(salted, b"Server Key", mechanism.hash_name)


def xor(a: bytes, b: bytes) -> bytes:
    """Byte-wise XOR of two equal-length values."""
    if len(a) != len(b):
        # Same wording as Kafka's ScramFormatter.xor.
        raise ValueError("Argument arrays must be of the same length")
    n = len(a)
    return (int.from_bytes(a, "big") ^ int.from_bytes(b, "big")).to_bytes(n, "big")


def constant_time_equal(a: bytes, b: bytes) -> bool:
    """The only way secrets are compared in this package."""
    return hmac.compare_digest(a, b)


def base36(value: int) -> str:
    """Render a non-negative integer like Java's ``BigInteger.toString(36)``."""
    if value == 0:
        return "0"
    out: list[str] = []
    while value:
        value, rem = divmod(value, 1296)
        out.append(_PAIRS[rem])
    text = "".join(reversed(out))
    return text[1:] if text[0] == "0" else text


# Random values for the next nonces, read from the CSPRNG 240 at a time: one
# getrandom() call per login shows in the endpoint's CPU per login. popleft()
# is atomic, so two threads never take the same value; a forked child starts
# with an empty pool, never its parent's next values.
_POOL_SIZE = 240
_pool: deque[int] = deque()
os.register_at_fork(after_in_child=_pool.clear)


def _refill() -> None:
    chunk = os.urandom(_NONCE_BYTES * _POOL_SIZE)
    _pool.extend(
        int.from_bytes(chunk[i : i + _NONCE_BYTES], "big") >> _NONCE_SHIFT
        for i in range(0, len(chunk), _NONCE_BYTES)
    )


def kafka_random_string() -> str:
    """A uniform 130-bit value in base 36, as Kafka makes nonces and salts."""
    # secrets.randbits(130), without its pure-Python SystemRandom dispatch.
    while True:
        try:
            return base36(_pool.popleft())
        except IndexError:
            _refill()
