"""The front door's errors: one root, a configuration branch and a remote one."""

from __future__ import annotations

from sasl_scram._errors import ScramConfigError
from sasl_scram._errors import ScramError

__all__ = ["FrontDoorError", "PeerProtocolError", "UpstreamConfigError"]


class FrontDoorError(ScramError):
    """Root of the front door's errors."""


class UpstreamConfigError(FrontDoorError, ScramConfigError):
    """An ``upstream.`` key is missing or invalid; the message names the key."""


class PeerProtocolError(FrontDoorError):
    """A peer (the client or the cluster) broke the framing or the request order.

    The connection cannot go on: Kafka's own ``NetworkClient`` drops a
    connection whose response does not match its oldest in-flight request.
    """
