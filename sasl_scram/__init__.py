"""Kafka-exact SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802/7677), client and server.

The core is sans-IO: bytes in, bytes or values out. Credentials reach the
server through a lookup step the caller answers.
"""

from __future__ import annotations

from importlib import metadata as _metadata

# First, so that every module below is the compiled one when it is built from
# these very sources: importing _native installs it (sasl_scram/_native).
from sasl_scram import _native  # noqa: F401
from sasl_scram._b64 import Base64Error
from sasl_scram._b64 import java_b64decode
from sasl_scram._b64 import java_b64encode
from sasl_scram._client import ScramClient
from sasl_scram._credential import ScramCredential
from sasl_scram._credential import kafka_salt
from sasl_scram._errors import LEGACY_LIBRDKAFKA_NONCE
from sasl_scram._errors import AuthenticationFailed
from sasl_scram._errors import InvalidCredentialString
from sasl_scram._errors import ScramConfigError
from sasl_scram._errors import ScramError
from sasl_scram._errors import ScramProtocolError
from sasl_scram._errors import ScramServerError
from sasl_scram._errors import ScramStateError
from sasl_scram._errors import ScramUsageError
from sasl_scram._keycache import DEFAULT_KEY_CACHE
from sasl_scram._keycache import SaltedPasswordCache
from sasl_scram._mechanism import MAX_ITERATIONS
from sasl_scram._mechanism import MIN_ITERATIONS
from sasl_scram._mechanism import SCRAM_SHA_256
from sasl_scram._mechanism import SCRAM_SHA_512
from sasl_scram._mechanism import ScramMechanism
from sasl_scram._messages import ClientFinalMessage
from sasl_scram._messages import ClientFirstMessage
from sasl_scram._messages import ServerFinalMessage
from sasl_scram._messages import ServerFirstMessage
from sasl_scram._messages import escape_username
from sasl_scram._messages import unescape_username
from sasl_scram._saslprep import Normalization
from sasl_scram._saslprep import saslprep
from sasl_scram._server import CredentialRequest
from sasl_scram._server import DecoyCredentials
from sasl_scram._server import Grant
from sasl_scram._server import ScramServer
from sasl_scram._server import ScramSession
from sasl_scram.config import KafkaPrincipal

try:
    #: The installed distribution's version (``kafka-scram``: this package,
    #: ``tokenauth`` and ``jaas``), as ``pip`` and ``kafka-scram --version`` say it.
    __version__ = _metadata.version("kafka-scram")
except _metadata.PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

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
