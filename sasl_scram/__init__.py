"""Kafka-exact SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802/7677), client and server.

The core is sans-IO: bytes in, bytes or values out. Credentials reach the
server through a lookup step the caller answers.
"""

from __future__ import annotations

# First, so that every module below is the compiled one when it is built from
# these very sources: importing _native installs it (sasl_scram/_native).
from sasl_scram import _native  # noqa: F401
from sasl_scram._b64 import Base64Error, java_b64decode, java_b64encode
from sasl_scram._client import ScramClient
from sasl_scram._credential import ScramCredential, kafka_salt
from sasl_scram._errors import (
    LEGACY_LIBRDKAFKA_NONCE,
    AuthenticationFailed,
    InvalidCredentialString,
    ScramConfigError,
    ScramError,
    ScramProtocolError,
    ScramServerError,
    ScramStateError,
    ScramUsageError,
)
from sasl_scram._keycache import DEFAULT_KEY_CACHE, SaltedPasswordCache
from sasl_scram._mechanism import (
    MAX_ITERATIONS,
    MIN_ITERATIONS,
    SCRAM_SHA_256,
    SCRAM_SHA_512,
    ScramMechanism,
)
from sasl_scram._messages import (
    ClientFinalMessage,
    ClientFirstMessage,
    ServerFinalMessage,
    ServerFirstMessage,
    escape_username,
    unescape_username,
)
from sasl_scram._saslprep import Normalization, saslprep
from sasl_scram._server import CredentialRequest, DecoyCredentials, Grant, ScramServer, ScramSession
from sasl_scram.config import KafkaPrincipal

__all__ = [
    "DEFAULT_KEY_CACHE",
    "LEGACY_LIBRDKAFKA_NONCE",
    "MAX_ITERATIONS",
    "MIN_ITERATIONS",
    "SCRAM_SHA_256",
    "SCRAM_SHA_512",
    "AuthenticationFailed",
    "Base64Error",
    "ClientFinalMessage",
    "ClientFirstMessage",
    "CredentialRequest",
    "DecoyCredentials",
    "Grant",
    "InvalidCredentialString",
    "KafkaPrincipal",
    "Normalization",
    "SaltedPasswordCache",
    "ScramClient",
    "ScramConfigError",
    "ScramCredential",
    "ScramError",
    "ScramMechanism",
    "ScramProtocolError",
    "ScramServer",
    "ScramServerError",
    "ScramSession",
    "ScramStateError",
    "ScramUsageError",
    "ServerFinalMessage",
    "ServerFirstMessage",
    "escape_username",
    "java_b64decode",
    "java_b64encode",
    "kafka_salt",
    "saslprep",
    "unescape_username",
]
