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
protocol, reading ``client.properties`` or a JAAS line, and saying why a
login failed (:func:`check_listener`, :func:`check_holds_topics`,
:data:`LOGIN_FIXES`). Importing it imports no client library and changes
nothing.
"""

from __future__ import annotations

from sasl_scram.integrations._config import ConfigSource
from sasl_scram.integrations._config import config_from_jaas
from sasl_scram.integrations._config import load_client_config
from sasl_scram.integrations._credentials import CredentialsProvider
from sasl_scram.integrations._credentials import CredentialsSource
from sasl_scram.integrations._credentials import PropertiesFileCredentials
from sasl_scram.integrations._credentials import ScramCredentials
from sasl_scram.integrations._credentials import StaticCredentials
from sasl_scram.integrations._credentials import as_provider
from sasl_scram.integrations._credentials import fetch_credentials
from sasl_scram.integrations._credentials import fetch_credentials_async
from sasl_scram.integrations._diagnosis import check_holds_topics
from sasl_scram.integrations._diagnosis import check_listener
from sasl_scram.integrations._errors import LOGIN_FIXES
from sasl_scram.integrations._errors import Cause
from sasl_scram.integrations._errors import CredentialsError
from sasl_scram.integrations._errors import IntegrationError
from sasl_scram.integrations._errors import ListenerError
from sasl_scram.integrations._errors import UnsupportedByClient

__all__ = [
    "LOGIN_FIXES",
    "Cause",
    "ConfigSource",
    "CredentialsError",
    "CredentialsProvider",
    "CredentialsSource",
    "IntegrationError",
    "ListenerError",
    "PropertiesFileCredentials",
    "ScramCredentials",
    "StaticCredentials",
    "UnsupportedByClient",
    "as_provider",
    "check_holds_topics",
    "check_listener",
    "config_from_jaas",
    "fetch_credentials",
    "fetch_credentials_async",
    "load_client_config",
]
