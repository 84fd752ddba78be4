"""Where an integration's configuration comes from: ``client.properties`` or a JAAS line.

Everything is read by :class:`sasl_scram.config.ClientConfig`, so the
key names, checks and error messages are Kafka's. When credentials come from a
provider instead of ``sasl.jaas.config``, the JAAS line may be left out.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TypeAlias

from sasl_scram._errors import ScramConfigError
from sasl_scram.config import ClientConfig
from sasl_scram.config import ClientConfigError
from sasl_scram.config import read_properties
from sasl_scram.integrations._credentials import CredentialsProvider
from sasl_scram.integrations._credentials import CredentialsSource
from sasl_scram.integrations._credentials import ScramCredentials
from sasl_scram.integrations._credentials import StaticCredentials
from sasl_scram.integrations._credentials import as_provider

__all__ = ["ConfigSource", "config_from_jaas", "load_client_config", "resolve"]

#: A ``ClientConfig``, a path to a ``client.properties`` file, or its properties.
ConfigSource: TypeAlias = ClientConfig | str | os.PathLike[str] | Mapping[str, str]

# Stands in for a missing sasl.jaas.config while ClientConfig checks the other
# keys; it is dropped again and never used to log in.
_PLACEHOLDER_JAAS = (
    'org.apache.kafka.common.security.scram.ScramLoginModule required username="-" password="-";'
)


def _properties(source: str | os.PathLike[str] | Mapping[str, str]) -> tuple[dict[str, str], str]:
    if isinstance(source, Mapping):
        return dict(source), "<properties>"
    path = Path(source)
    try:
        return read_properties(path), str(path)
    except ScramConfigError as exc:
        raise ClientConfigError(str(exc)) from None


def load_client_config(source: ConfigSource, *, require_jaas: bool = True) -> ClientConfig:
    """Read a client configuration.

    Args:
        source: A ``ClientConfig``, a ``client.properties`` path, or properties.
        require_jaas: ``False`` when credentials come from a provider: a SASL
            configuration may then omit ``sasl.jaas.config``.

    Raises:
        ClientConfigError: A key is missing or invalid; the message names it.
    """
    if isinstance(source, ClientConfig):
        return source
    props, _ = _properties(source)
    if require_jaas or props.get("sasl.jaas.config"):
        return ClientConfig.from_properties(props)
    checked = ClientConfig.from_properties({**props, "sasl.jaas.config": _PLACEHOLDER_JAAS})
    return dataclasses.replace(
        checked, username=None, password=None, token_auth=False, properties=props
    )


def config_from_jaas(
    line: str,
    *,
    bootstrap_servers: str,
    mechanism: str = "SCRAM-SHA-512",
    security_protocol: str = "SASL_SSL",
    properties: Mapping[str, str] | None = None,
) -> ClientConfig:
    """A client configuration from a ``sasl.jaas.config`` line and a bootstrap list.

    Args:
        line: The JAAS line (a user, or ``tokenauth=true`` with a token).
        bootstrap_servers: ``host:port[,host:port...]``.
        mechanism: ``sasl.mechanism``.
        security_protocol: ``SASL_SSL`` (default) or ``SASL_PLAINTEXT``.
        properties: Further properties, e.g. ``ssl.truststore.location``.

    Raises:
        ClientConfigError: A value is invalid; the message names the key.
    """
    props = {
        **(properties or {}),
        "bootstrap.servers": bootstrap_servers,
        "security.protocol": security_protocol,
        "sasl.mechanism": mechanism,
        "sasl.jaas.config": line,
    }
    return ClientConfig.from_properties(props)


def resolve(
    source: ConfigSource, credentials: CredentialsSource | None = None
) -> tuple[ClientConfig, CredentialsProvider | None]:
    """The configuration and the credentials provider an integration should use.

    ``credentials`` wins over ``sasl.jaas.config``; without it the JAAS line
    becomes a static provider. A configuration without SASL gets ``None``.

    Raises:
        ClientConfigError: The configuration is invalid.
        CredentialsError: ``credentials`` is not usable.
    """
    config = load_client_config(source, require_jaas=credentials is None)
    if credentials is not None:
        if not config.uses_sasl:
            raise ClientConfigError(
                f"security.protocol: {config.security_protocol} does not authenticate; "
                "credentials need SASL_PLAINTEXT or SASL_SSL"
            )
        return config, as_provider(credentials)
    if not config.uses_sasl:
        return config, None
    return config, StaticCredentials(ScramCredentials.from_client_config(config))
