"""Delegation-token logins for PySpark's Kafka sources and sinks.

Spark's own Kafka delegation-token support starts only with Kerberos, and a
running query never picks up a new token. This module fills the gap for
everyone else:

* :func:`kafka_options` builds the ``kafka.``-prefixed options that log a
  source or sink in with a token (the JAAS line is the one Spark builds);
* :func:`apply_kafka_options` sets them on a ``DataStreamReader``,
  ``DataStreamWriter``, ``DataFrameReader`` or ``DataFrameWriter`` and refuses
  to replace a different ``kafka.sasl.jaas.config`` unless asked;
* :class:`TokenSupervisor` runs on the driver: it obtains a token with the
  user's SCRAM login, renews it, and before its maximum lifetime replaces it
  and restarts the streaming query from its checkpoint.

pyspark is an optional extra (``pip install '.[spark]'`` in the source tree); nothing
here imports it. Secrets never reach a log line, a ``repr`` or an exception
message. See docs/spark.md.
"""

from __future__ import annotations

from tokenauth.spark._login import client_properties_login
from tokenauth.spark._login import jaas_login
from tokenauth.spark._login import secret_login
from tokenauth.spark._options import JAAS_OPTION
from tokenauth.spark._options import KAFKA_PREFIX
from tokenauth.spark._options import JaasConflictError
from tokenauth.spark._options import KafkaOptions
from tokenauth.spark._options import OptionsNotInspectableError
from tokenauth.spark._options import OptionTarget
from tokenauth.spark._options import SparkTokenError
from tokenauth.spark._options import TokenLike
from tokenauth.spark._options import apply_kafka_options
from tokenauth.spark._options import existing_option
from tokenauth.spark._options import kafka_options
from tokenauth.spark._policy import StreamingQueryLike
from tokenauth.spark._policy import SupervisorError
from tokenauth.spark._policy import SupervisorPolicy
from tokenauth.spark._policy import SupervisorState
from tokenauth.spark._policy import TokenClient
from tokenauth.spark._policy import Transition
from tokenauth.spark._supervisor import TokenSupervisor

__all__ = [
    "JAAS_OPTION",
    "KAFKA_PREFIX",
    "JaasConflictError",
    "KafkaOptions",
    "OptionTarget",
    "OptionsNotInspectableError",
    "SparkTokenError",
    "StreamingQueryLike",
    "SupervisorError",
    "SupervisorPolicy",
    "SupervisorState",
    "TokenClient",
    "TokenLike",
    "TokenSupervisor",
    "Transition",
    "apply_kafka_options",
    "client_properties_login",
    "existing_option",
    "jaas_login",
    "kafka_options",
    "secret_login",
]
