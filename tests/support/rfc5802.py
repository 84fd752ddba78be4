"""RFC 5802 section 3's keys, proof and signature, computed with hashlib and hmac only.

The tests that forge or re-sign a client-final message compute what a peer that
knows the password would send without the library's own code, so that a fault
in the library cannot hide itself. Kafka does not SASLprep the password: it is
used as its UTF-8 bytes, as here.
"""

from __future__ import annotations

import hashlib
import hmac
from functools import cache

__all__ = ["client_proof", "keys", "server_signature"]


@cache
def keys(hash_name: str, password: str, salt: bytes, iterations: int) -> tuple[bytes, bytes]:
    """``(ClientKey, ServerKey)``: HMAC(SaltedPassword, "Client Key" / "Server Key")."""
    salted = hashlib.pbkdf2_hmac(hash_name, password.encode(), salt, iterations)
    return (
        hmac.digest(salted, b"Client Key", hash_name),
        hmac.digest(salted, b"Server Key", hash_name),
    )


def client_proof(hash_name: str, client_key: bytes, auth_message: bytes) -> bytes:
    """ClientKey XOR HMAC(H(ClientKey), AuthMessage)."""
    stored_key = hashlib.new(hash_name, client_key).digest()
    signature = hmac.digest(stored_key, auth_message, hash_name)
    return bytes(a ^ b for a, b in zip(client_key, signature, strict=True))


def server_signature(hash_name: str, server_key: bytes, auth_message: bytes) -> bytes:
    """HMAC(ServerKey, AuthMessage)."""
    return hmac.digest(server_key, auth_message, hash_name)
