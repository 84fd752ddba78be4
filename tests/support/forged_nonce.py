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
from tests.support import rfc5802

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
    client_key, _ = rfc5802.keys(mechanism.hash_name, password, first.salt, first.iterations)
    proof = rfc5802.client_proof(mechanism.hash_name, client_key, auth)
    return f"{without_proof},p={base64.b64encode(proof).decode('ascii')}".encode("ascii")
