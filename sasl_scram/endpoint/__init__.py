"""A Kafka-protocol endpoint: real Kafka clients authenticate through our SCRAM
server and credential stores, see a one-broker cluster, and use the KIP-554
admin RPCs. The protocol state is sans-IO (:class:`ServerConnection`); the
asyncio server is a thin adapter (:class:`ScramEndpoint`)."""

from __future__ import annotations

from sasl_scram.endpoint._bootstrap import BootstrapFiles, ensure_bootstrap_user
from sasl_scram.endpoint._config import (
    BOOTSTRAP_FILE_KEY,
    BOOTSTRAP_USER_KEY,
    ENDPOINT_KEYS,
    EVENT_LOOP_KEY,
    EndpointConfig,
    Listener,
    extension_keys,
    zookeeper_store_options,
)
from sasl_scram.endpoint._connection import (
    ApiCall,
    Authenticated,
    Close,
    ConnectionSettings,
    CredentialNeeded,
    Send,
    ServerConnection,
)
from sasl_scram.endpoint._extension import (
    ENTRY_POINT_GROUP,
    EndpointExtension,
    Handler,
    RequestContext,
    load_extensions,
)
from sasl_scram.endpoint._metrics import WorkerBlocks, WorkersMetrics, serve_metrics
from sasl_scram.endpoint._server import ScramEndpoint

__all__ = [
    "BOOTSTRAP_FILE_KEY",
    "BOOTSTRAP_USER_KEY",
    "ENDPOINT_KEYS",
    "ENTRY_POINT_GROUP",
    "EVENT_LOOP_KEY",
    "ApiCall",
    "Authenticated",
    "BootstrapFiles",
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
    "WorkerBlocks",
    "WorkersMetrics",
    "ensure_bootstrap_user",
    "extension_keys",
    "load_extensions",
    "serve_metrics",
    "zookeeper_store_options",
]
