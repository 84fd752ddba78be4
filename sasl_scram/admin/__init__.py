"""Our own Kafka client side: an authenticated connection and the KIP-554 RPCs."""

from __future__ import annotations

from sasl_scram.admin._connection import KafkaConnection
from sasl_scram.admin._connection import KafkaConnectionError
from sasl_scram.admin._connection import SaslCredentials
from sasl_scram.admin._scram_admin import RemoteScramAdmin

__all__ = ["KafkaConnection", "KafkaConnectionError", "RemoteScramAdmin", "SaslCredentials"]
