"""Token-capable SCRAM inside the Python Kafka clients people already use.

One module per client, each importing its client library only when called:

* :mod:`sasl_scram.integrations.kafka_python`: a SASL mechanism for
  kafka-python 3.x, installed and removed explicitly;
* :mod:`sasl_scram.integrations.aiokafka`: a reversible patch of aiokafka
  0.14's SCRAM authenticator;
* :mod:`sasl_scram.integrations.pure_sasl`: SCRAM-SHA-256/512 for pure-sasl;
* :mod:`sasl_scram.integrations.confluent`: a confluent-kafka configuration
  builder (user logins only: librdkafka cannot send SCRAM extensions).

This package holds what they share: credentials, the credentials-provider
protocol and reading ``client.properties`` or a JAAS line. Importing it
imports no client library and changes nothing.
"""

from __future__ import annotations

from sasl_scram.integrations._config import ConfigSource, config_from_jaas, load_client_config
from sasl_scram.integrations._credentials import (
    CredentialsProvider,
    CredentialsSource,
    PropertiesFileCredentials,
    ScramCredentials,
    StaticCredentials,
    as_provider,
    fetch_credentials,
    fetch_credentials_async,
)
from sasl_scram.integrations._errors import CredentialsError, IntegrationError, UnsupportedByClient

__all__ = [
    "ConfigSource",
    "CredentialsError",
    "CredentialsProvider",
    "CredentialsSource",
    "IntegrationError",
    "PropertiesFileCredentials",
    "ScramCredentials",
    "StaticCredentials",
    "UnsupportedByClient",
    "as_provider",
    "config_from_jaas",
    "fetch_credentials",
    "fetch_credentials_async",
    "load_client_config",
]
