"""The exception hierarchy of ``sasl_scram``.

One root, with branches for "you called me wrong" (local), "the peer sent
something invalid" (remote) and bad configuration or stored data, after h11's
split. At the authentication boundary the server raises exactly one opaque
type, :class:`AuthenticationFailed`; its reason only reaches a debug log.
"""

from __future__ import annotations

__all__ = [
    "LEGACY_LIBRDKAFKA_NONCE",
    "AuthenticationFailed",
    "InvalidCredentialString",
    "ScramConfigError",
    "ScramError",
    "ScramProtocolError",
    "ScramServerError",
    "ScramStateError",
    "ScramUsageError",
]


class ScramError(Exception):
    """Root of every error raised by ``sasl_scram``."""


class ScramUsageError(ScramError, ValueError):
    """The caller passed an invalid argument (local error)."""


class ScramStateError(ScramError):
    """A method was called in a state that does not allow it (local error).

    Also raised by every call after a failure: failures are sticky.
    """


class ScramConfigError(ScramError, ValueError):
    """Configuration or stored data is invalid."""


class InvalidCredentialString(ScramConfigError):
    """A Kafka credential string (``salt=...,stored_key=...``) could not be parsed.

    The message names the problem but never contains key material.
    """


class ScramProtocolError(ScramError):
    """The peer sent a message that breaks the SCRAM grammar or its rules (remote error)."""


class ScramServerError(ScramProtocolError):
    """The server answered with an ``e=`` server-final message.

    Attributes:
        error: The ``server-error-value`` the server sent (RFC 5802 section 7).
    """

    def __init__(self, mechanism_name: str, error: str) -> None:
        # Kafka's client words it the same way (ScramSaslClient): the error
        # value comes from the server, never from our secrets.
        super().__init__(f"Sasl authentication using {mechanism_name} failed with error: {error}")
        self.error = error


class AuthenticationFailed(ScramError):
    """Authentication did not succeed. Deliberately opaque.

    The server raises this for every failure after the exchange starts: unknown
    user, wrong password, malformed message, nonce mismatch, low iterations. The
    reason is logged at DEBUG level on the ``sasl_scram`` logger without any
    secret; callers and peers only learn that authentication failed.

    Attributes:
        kafka_error_message: The text Kafka itself would send to the client in
            the SaslAuthenticate response, or ``None`` when Kafka sends its
            generic "invalid credentials" text. Kafka reveals the reason only
            for an authorization id that differs from the user name.
        server_final: In RFC mode, the ``e=`` server-final message to send to
            the peer; ``None`` in Kafka mode, where Kafka never sends ``e=``.
        cause: A failure the operator can act on, for the server's own log,
            never for the peer: :data:`LEGACY_LIBRDKAFKA_NONCE`, or ``None``.
    """

    def __init__(
        self,
        kafka_error_message: str | None = None,
        server_final: bytes | None = None,
        cause: str | None = None,
    ) -> None:
        super().__init__("Authentication failed")
        self.kafka_error_message = kafka_error_message
        self.server_final = server_final
        self.cause = cause


#: :attr:`AuthenticationFailed.cause` of a client-final nonce in librdkafka < 2.6.1's
#: form (its client nonce repeated in front of the server-first nonce,
#: confluentinc/librdkafka#4895), refused because the server requires equality.
LEGACY_LIBRDKAFKA_NONCE = "legacy-librdkafka-nonce"
