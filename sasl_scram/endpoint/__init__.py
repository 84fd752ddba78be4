"""A Kafka-protocol endpoint: real Kafka clients authenticate through our SCRAM
server and credential stores, see a one-broker cluster, and use the KIP-554
admin RPCs. The protocol state is sans-IO (:class:`ServerConnection`); the
asyncio server is a thin adapter (:class:`ScramEndpoint`)."""

from __future__ import annotations

from ._config import EndpointConfig, Listener, zookeeper_store_options
from ._connection import (
    ApiCall,
    Authenticated,
    Close,
    ConnectionSettings,
    CredentialNeeded,
    Send,
    ServerConnection,
)
from ._extension import ENTRY_POINT_GROUP, EndpointExtension, Handler, RequestContext
from ._server import ScramEndpoint

__all__ = [
    "ENTRY_POINT_GROUP",
    "ApiCall",
    "Authenticated",
    "Close",
    "ConnectionSettings",
    "CredentialNeeded",
    "EndpointConfig",
    "EndpointExtension",
    "Handler",
    "Listener",
    "RequestContext",
    "ScramEndpoint",
    "Send",
    "ServerConnection",
    "zookeeper_store_options",
]
