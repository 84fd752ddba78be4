"""Our own Kafka client side: an authenticated connection, the KIP-554 RPCs and the
front door's owner-token issuer."""

from __future__ import annotations

from sasl_scram.admin._connection import KafkaConnection
from sasl_scram.admin._connection import KafkaConnectionError
from sasl_scram.admin._connection import SaslCredentials
from sasl_scram.admin._scram_admin import RemoteScramAdmin
from sasl_scram.admin._token_issuer import ClusterTokenIssuer

__all__ = [
    "ClusterTokenIssuer",
    "KafkaConnection",
    "KafkaConnectionError",
    "RemoteScramAdmin",
    "SaslCredentials",
]
