"""Errors raised by the client integrations.

They extend :class:`sasl_scram.ScramConfigError`: each one means that the
configuration asks for something the integration or the client library cannot
do. Messages name the key or the capability, never a secret.
"""

from __future__ import annotations

from sasl_scram._errors import ScramConfigError
from sasl_scram._errors import ScramError
from sasl_scram._errors import ScramServerError

__all__ = ["CredentialsError", "IntegrationError", "UnsupportedByClient", "refusal"]


def refusal(exc: ScramError) -> str:
    """What a client library's authentication error says for a failed exchange.

    An ``e=`` reply is the server's own words (RFC 5802 section 7) and safe to
    show; any other SCRAM error message names the problem, never a secret.
    """
    if isinstance(exc, ScramServerError):
        return f"server refused the login: e={exc.error}"
    return str(exc)


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
