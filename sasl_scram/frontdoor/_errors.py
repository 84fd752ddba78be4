"""The front door's errors: one root, a configuration branch and a remote one."""

from __future__ import annotations

from sasl_scram._errors import ScramConfigError
from sasl_scram._errors import ScramError

__all__ = [
    "ClusterAdminError",
    "FrontDoorError",
    "OwnerTokenError",
    "PeerProtocolError",
    "UpstreamConfigError",
]


class FrontDoorError(ScramError):
    """Root of the front door's errors."""


class UpstreamConfigError(FrontDoorError, ScramConfigError):
    """An ``upstream.`` key is missing or invalid; the message names the key."""


class PeerProtocolError(FrontDoorError):
    """A peer (the client or the cluster) broke the framing or the request order.

    The connection cannot go on: Kafka's own ``NetworkClient`` drops a
    connection whose response does not match its oldest in-flight request.
    """


class OwnerTokenError(FrontDoorError):
    """The cluster would not issue, renew or expire an owner token.

    One line naming the cause and the fix; never a token's HMAC.

    Attributes:
        error_code: Kafka's error code when the cluster answered with one;
            ``None`` when it could not be reached or the login failed.
    """

    def __init__(self, message: str, error_code: int | None = None) -> None:
        super().__init__(message)
        self.error_code = error_code


class ClusterAdminError(FrontDoorError):
    """``upstream.identity=service`` and the ``upstream.`` login is a cluster
    administrator (or the cluster will not say): every edge user would be one.
    One line naming the ways out."""
