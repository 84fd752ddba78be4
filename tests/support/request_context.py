"""A handler's :class:`RequestContext`, for calling endpoint handlers directly."""

from __future__ import annotations

from sasl_scram import SCRAM_SHA_256
from sasl_scram import KafkaPrincipal
from sasl_scram import ScramSession
from sasl_scram.endpoint import RequestContext

__all__ = ["request_context"]


def request_context(
    user: str,
    *,
    super_user: bool = False,
    token: bool = False,
    host: str = "127.0.0.1",
    protocol: str = "SASL_PLAINTEXT",
) -> RequestContext:
    """``User:<user>`` logged in with SCRAM-SHA-256 (with a token when ``token``),
    on a listener named after ``protocol``, from ``host``."""
    return RequestContext(
        principal=KafkaPrincipal("User", user),
        session=ScramSession(SCRAM_SHA_256, user, user, token, None),
        security_protocol=protocol,
        listener_name=protocol,
        super_user=super_user,
        client_id=None,
        connection_id=f"{protocol}-0",
        client_host=host,
    )
