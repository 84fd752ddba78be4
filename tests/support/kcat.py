"""Debian's ``kcat`` (librdkafka 2.0.2) as a Kafka client in tests: one metadata request.

librdkafka before 2.6.1 repeats the client nonce in its SCRAM client-final
message (``r=<clientNonce><clientNonce><serverNonce>``, confluentinc/librdkafka#4895),
which is what the tests of the nonce rule need a real client for.
"""

from __future__ import annotations

import subprocess

__all__ = ["kcat_metadata"]


def kcat_metadata(
    bootstrap: str, mechanism: str, user: str, password: str, wait_s: int = 5
) -> subprocess.CompletedProcess[str]:
    """``kcat -L`` over SASL_PLAINTEXT with ``mechanism``; waits ``wait_s`` for metadata.

    A refused login exits non-zero with ``SASL authentication error: <text>`` on stderr.
    """
    return subprocess.run(
        [
            "kcat",
            "-L",
            "-b",
            bootstrap,
            "-m",
            str(wait_s),
            "-X",
            "security.protocol=SASL_PLAINTEXT",
            "-X",
            f"sasl.mechanisms={mechanism}",
            "-X",
            f"sasl.username={user}",
            "-X",
            f"sasl.password={password}",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
