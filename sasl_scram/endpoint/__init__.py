"""A Kafka-protocol endpoint: real Kafka clients authenticate through our SCRAM
server and credential stores, see a one-broker cluster, and use the KIP-554
admin RPCs. The protocol state is sans-IO (:class:`ServerConnection`); the
asyncio server is a thin adapter (:class:`ScramEndpoint`); :func:`run` serves an
:class:`EndpointConfig` in one or more worker processes until stopped."""

from __future__ import annotations

from sasl_scram.endpoint._config import BOOTSTRAP_FILE_KEY
from sasl_scram.endpoint._config import BOOTSTRAP_USER_KEY
from sasl_scram.endpoint._config import ENDPOINT_KEYS
from sasl_scram.endpoint._config import EVENT_LOOP_KEY
from sasl_scram.endpoint._config import SSL_KEYSTORE_KEYS
from sasl_scram.endpoint._config import STORE_KEYS
from sasl_scram.endpoint._config import STORE_PATH_KEY
from sasl_scram.endpoint._config import EndpointConfig
from sasl_scram.endpoint._config import extension_keys
from sasl_scram.endpoint._config import store_location
from sasl_scram.endpoint._extension import ENTRY_POINT_GROUP
from sasl_scram.endpoint._extension import EXTENSIONS_KEY
from sasl_scram.endpoint._extension import CloseRequest
from sasl_scram.endpoint._extension import EndpointExtension
from sasl_scram.endpoint._extension import Handler
from sasl_scram.endpoint._extension import RequestContext
from sasl_scram.endpoint._extension import installed_extensions
from sasl_scram.endpoint._extension import load_extensions
from sasl_scram.endpoint._keystore import SslKeystore
from sasl_scram.endpoint._listeners import ListenerAddress
from sasl_scram.endpoint._metrics import METRICS_LISTENER_KEY
from sasl_scram.endpoint.login import ApiCall
from sasl_scram.endpoint.login import Authenticated
from sasl_scram.endpoint.login import Close
from sasl_scram.endpoint.login import ConnectionSettings
from sasl_scram.endpoint.login import CredentialNeeded
from sasl_scram.endpoint.login import Send
from sasl_scram.endpoint.login import ServerConnection
from sasl_scram.endpoint.runtime import LOG_FORMAT
from sasl_scram.endpoint.runtime import BootstrapFiles
from sasl_scram.endpoint.runtime import ScramEndpoint
from sasl_scram.endpoint.runtime import ensure_bootstrap_user
from sasl_scram.endpoint.runtime import run

__all__ = [
    "BOOTSTRAP_FILE_KEY",
    "BOOTSTRAP_USER_KEY",
    "ENDPOINT_KEYS",
    "ENTRY_POINT_GROUP",
    "EVENT_LOOP_KEY",
    "EXTENSIONS_KEY",
    "LOG_FORMAT",
    "METRICS_LISTENER_KEY",
    "SSL_KEYSTORE_KEYS",
    "STORE_KEYS",
    "STORE_PATH_KEY",
    "ApiCall",
    "Authenticated",
    "BootstrapFiles",
    "Close",
    "CloseRequest",
    "ConnectionSettings",
    "CredentialNeeded",
    "EndpointConfig",
    "EndpointExtension",
    "Handler",
    "ListenerAddress",
    "RequestContext",
    "ScramEndpoint",
    "Send",
    "ServerConnection",
    "SslKeystore",
    "ensure_bootstrap_user",
    "extension_keys",
    "installed_extensions",
    "load_extensions",
    "run",
    "store_location",
]
