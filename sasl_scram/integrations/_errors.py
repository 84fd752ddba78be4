"""Errors raised by the client integrations.

They extend :class:`sasl_scram.ScramConfigError`: each one means that the
configuration asks for something the integration or the client library cannot
do. Messages name the key or the capability, never a secret.
"""

from __future__ import annotations

from sasl_scram._errors import ScramConfigError

__all__ = ["CredentialsError", "IntegrationError", "UnsupportedByClient"]


class IntegrationError(ScramConfigError):
    """A client integration cannot be set up as asked."""


class CredentialsError(IntegrationError):
    """Credentials are missing or invalid, or a credentials provider failed.

    A provider's own exception is chained as ``__cause__``; its message is not
    repeated here, in case it holds a secret.
    """


class UnsupportedByClient(IntegrationError):
    """The client library itself cannot do what the configuration asks.

    For example librdkafka cannot send SCRAM extensions, so confluent-kafka
    cannot log in with a delegation token (``tokenauth=true``).
    """
