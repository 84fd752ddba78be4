"""The user's own SCRAM login, which the supervisor uses for token RPCs.

Kafka refuses token requests over a token login, so the supervisor needs the
user's credentials: from a ``client.properties`` file, a ``sasl.jaas.config``
line, or a secret the caller holds.
"""

from __future__ import annotations

from collections.abc import Mapping

import jaas
from sasl_scram.config import ClientConfig

__all__ = ["client_properties_login", "jaas_login", "secret_login"]


def client_properties_login(path: str) -> ClientConfig:
    """The login in a Kafka ``client.properties`` file (``bootstrap.servers``,
    ``security.protocol``, ``sasl.mechanism``, ``sasl.jaas.config``)."""
    return ClientConfig.from_file(path)


def jaas_login(
    bootstrap_servers: str,
    jaas_config: str,
    mechanism: str = "SCRAM-SHA-512",
    security_protocol: str = "SASL_SSL",
    properties: Mapping[str, str] | None = None,
) -> ClientConfig:
    """The login in a ``sasl.jaas.config`` value (a ScramLoginModule line).

    ``properties`` adds client properties such as ``ssl.truststore.location``.
    """
    return ClientConfig.from_properties(
        {
            **(properties or {}),
            "bootstrap.servers": bootstrap_servers,
            "security.protocol": security_protocol,
            "sasl.mechanism": mechanism,
            "sasl.jaas.config": jaas_config,
        }
    )


def secret_login(
    bootstrap_servers: str,
    username: str,
    password: str,
    mechanism: str = "SCRAM-SHA-512",
    security_protocol: str = "SASL_SSL",
    properties: Mapping[str, str] | None = None,
) -> ClientConfig:
    """The login for a user name and a password the caller holds."""
    return jaas_login(
        bootstrap_servers,
        jaas.scram_login_line(username, password),
        mechanism,
        security_protocol,
        properties,
    )
