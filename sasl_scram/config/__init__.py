"""Configuration as Kafka writes it: Java ``.properties`` files, Kafka principals
(``User:alice``) and a Kafka client's SASL configuration (``ClientConfig``).

These sit above the SCRAM core: they read files and JAAS text and hand typed
values down to it.
"""

from __future__ import annotations

from sasl_scram.config._client_config import (
    ClientConfig,
    ClientConfigError,
)
from sasl_scram.config._keys import (
    ConfigKey,
    Parser,
    boolean,
    choice,
    integer,
    read_keys,
    suggest_key,
    text,
)
from sasl_scram.config._principal import (
    USER_TYPE,
    KafkaPrincipal,
)
from sasl_scram.config._properties import (
    Properties,
    format_properties,
    parse_properties,
    read_properties,
)

__all__ = [
    "USER_TYPE",
    "ClientConfig",
    "ClientConfigError",
    "ConfigKey",
    "KafkaPrincipal",
    "Parser",
    "Properties",
    "boolean",
    "choice",
    "format_properties",
    "integer",
    "parse_properties",
    "read_keys",
    "read_properties",
    "suggest_key",
    "text",
]
