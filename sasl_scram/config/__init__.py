"""Configuration as Kafka writes it: Java ``.properties`` files, Kafka principals
(``User:alice``) and a Kafka client's SASL configuration (``ClientConfig``).

These sit above the SCRAM core: they read files and JAAS text and hand typed
values down to it. :func:`install_hint` says how to install an extra a
configuration needs (the package is on no index: from where it came from).
"""

from __future__ import annotations

from sasl_scram.config._addresses import bootstrap_servers
from sasl_scram.config._addresses import format_host_port
from sasl_scram.config._addresses import zookeeper_connect
from sasl_scram.config._client_config import SASL_PROTOCOLS
from sasl_scram.config._client_config import SECURITY_PROTOCOLS
from sasl_scram.config._client_config import ClientConfig
from sasl_scram.config._client_config import ClientConfigError
from sasl_scram.config._client_config import SaslCredentials
from sasl_scram.config._client_config import read_jaas_login
from sasl_scram.config._extras import install_hint
from sasl_scram.config._extras import install_source
from sasl_scram.config._keys import ConfigKey
from sasl_scram.config._keys import ConfigValueError
from sasl_scram.config._keys import Parser
from sasl_scram.config._keys import boolean
from sasl_scram.config._keys import build
from sasl_scram.config._keys import choice
from sasl_scram.config._keys import integer
from sasl_scram.config._keys import is_known
from sasl_scram.config._keys import read_keys
from sasl_scram.config._keys import suggest_key
from sasl_scram.config._keys import text
from sasl_scram.config._keys import verbatim
from sasl_scram.config._principal import USER_TYPE
from sasl_scram.config._principal import KafkaPrincipal
from sasl_scram.config._properties import Properties
from sasl_scram.config._properties import format_properties
from sasl_scram.config._properties import parse_properties
from sasl_scram.config._properties import read_properties

__all__ = [
    "SASL_PROTOCOLS",
    "SECURITY_PROTOCOLS",
    "USER_TYPE",
    "ClientConfig",
    "ClientConfigError",
    "ConfigKey",
    "ConfigValueError",
    "KafkaPrincipal",
    "Parser",
    "Properties",
    "SaslCredentials",
    "boolean",
    "bootstrap_servers",
    "build",
    "choice",
    "format_host_port",
    "format_properties",
    "install_hint",
    "install_source",
    "integer",
    "is_known",
    "parse_properties",
    "read_jaas_login",
    "read_keys",
    "read_properties",
    "suggest_key",
    "text",
    "verbatim",
    "zookeeper_connect",
]
