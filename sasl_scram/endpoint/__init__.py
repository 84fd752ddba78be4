"""A Kafka-protocol endpoint: real Kafka clients authenticate through our SCRAM
server and credential stores, see a one-broker cluster, and use the KIP-554
admin RPCs. The protocol state is sans-IO (:class:`ServerConnection`); the
asyncio server is a thin adapter (:class:`ScramEndpoint`)."""

from __future__ import annotations

from sasl_scram.endpoint._bootstrap import BootstrapFiles
from sasl_scram.endpoint._bootstrap import ensure_bootstrap_user
from sasl_scram.endpoint._bootstrap import private_folder
from sasl_scram.endpoint._config import BOOTSTRAP_FILE_KEY
from sasl_scram.endpoint._config import BOOTSTRAP_USER_KEY
from sasl_scram.endpoint._config import ENDPOINT_KEYS
from sasl_scram.endpoint._config import EVENT_LOOP_KEY
from sasl_scram.endpoint._config import STORE_PATH_KEY
from sasl_scram.endpoint._config import EndpointConfig
from sasl_scram.endpoint._config import Listener
from sasl_scram.endpoint._config import extension_keys
from sasl_scram.endpoint._config import zookeeper_store_options
from sasl_scram.endpoint._connection import ApiCall
from sasl_scram.endpoint._connection import Authenticated
from sasl_scram.endpoint._connection import Close
from sasl_scram.endpoint._connection import ConnectionSettings
from sasl_scram.endpoint._connection import CredentialNeeded
from sasl_scram.endpoint._connection import Send
from sasl_scram.endpoint._connection import ServerConnection
from sasl_scram.endpoint._extension import ENTRY_POINT_GROUP
from sasl_scram.endpoint._extension import EndpointExtension
from sasl_scram.endpoint._extension import Handler
from sasl_scram.endpoint._extension import RequestContext
from sasl_scram.endpoint._extension import load_extensions
from sasl_scram.endpoint._metrics import METRICS_LISTENER_KEY
from sasl_scram.endpoint._metrics import WorkerBlocks
from sasl_scram.endpoint._metrics import WorkersMetrics
from sasl_scram.endpoint._metrics import serve_metrics
from sasl_scram.endpoint._server import ScramEndpoint

__all__ = [
    "BOOTSTRAP_FILE_KEY",
    "BOOTSTRAP_USER_KEY",
    "ENDPOINT_KEYS",
    "ENTRY_POINT_GROUP",
    "EVENT_LOOP_KEY",
    "METRICS_LISTENER_KEY",
    "STORE_PATH_KEY",
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
    "private_folder",
    "serve_metrics",
    "zookeeper_store_options",
]
