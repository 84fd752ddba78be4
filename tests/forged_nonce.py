"""A SCRAM client-final message with a chosen nonce and a valid proof.

A well-behaved client (ours, Kafka's) always echoes the server-first nonce;
the tests of the nonce rule need what librdkafka < 2.6.1 sends
(``r=<clientNonce><clientNonce><serverNonce>``, confluentinc/librdkafka#4895)
and other prefixes, each with a proof the server would otherwise accept, so
that only the nonce can be why a login is refused.
"""

from __future__ import annotations

import base64

from sasl_scram import ScramMechanism
from sasl_scram import ServerFirstMessage
from sasl_scram import _crypto

__all__ = ["client_final_with_nonce"]


def client_final_with_nonce(
    mechanism: ScramMechanism, password: str, client_first: bytes, server_first: bytes, nonce: str
) -> bytes:
    """``c=biws,r=<nonce>,p=<proof>`` whose proof is right for this AuthMessage (RFC 5802
    section 3: client-first-bare, server-first, client-final-without-proof)."""
    first = ServerFirstMessage.parse(server_first)
    bare = client_first.decode("ascii").split(",", 2)[2]  # after the "n,," GS2 header
    without_proof = f"c=biws,r={nonce}"
    auth = f"{bare},{server_first.decode('ascii')},{without_proof}".encode("ascii")
    salted = _crypto.salted_password(mechanism, password.encode(), first.salt, first.iterations)
    client_key = _crypto.client_key(mechanism, salted)
    stored_key = _crypto.hash_digest(mechanism, client_key)
    proof = _crypto.xor(client_key, _crypto.hmac_digest(mechanism, stored_key, auth))
    return f"{without_proof},p={base64.b64encode(proof).decode('ascii')}".encode("ascii")
