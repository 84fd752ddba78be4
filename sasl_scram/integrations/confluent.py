"""confluent-kafka (librdkafka) configuration from ``client.properties`` or a JAAS line.

librdkafka has its own SCRAM client and no plugin point; its client-first
message is fixed as ``n,,n=<user>,r=<nonce>``, so it cannot send SCRAM
extensions. A delegation-token login (``tokenauth=true``) is therefore
impossible with confluent-kafka, and :func:`client_config` refuses it with
:class:`~sasl_scram.integrations.UnsupportedByClient` instead of letting the
broker reject the token id as an unknown user. User logins work.

Example::

    from confluent_kafka import Consumer
    from sasl_scram.integrations import confluent

    consumer = Consumer({**confluent.client_config("client.properties"), "group.id": "g"})
"""

from __future__ import annotations

from collections.abc import Mapping

from sasl_scram.config import ClientConfig
from sasl_scram.integrations._config import ConfigSource
from sasl_scram.integrations._config import resolve
from sasl_scram.integrations._credentials import CredentialsSource
from sasl_scram.integrations._credentials import fetch_credentials
from sasl_scram.integrations._errors import UnsupportedByClient

__all__ = ["LIBRDKAFKA_NO_EXTENSIONS", "client_config"]

LIBRDKAFKA_NO_EXTENSIONS = (
    "confluent-kafka cannot log in with a delegation token: librdkafka's SCRAM client "
    "cannot send SCRAM extensions such as tokenauth=true (its client-first message is "
    "fixed as n,,n=<user>,r=<nonce>). Use kafka-python or aiokafka with "
    "sasl_scram.integrations for token logins."
)

# Kafka's PEM ssl.* keys -> librdkafka's. Kafka's PEM keystore file holds the
# key and the certificate chain, so it feeds both librdkafka locations.
_SSL_KEYS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ssl.truststore.location", ("ssl.ca.location",)),
    ("ssl.truststore.certificates", ("ssl.ca.pem",)),
    ("ssl.keystore.location", ("ssl.certificate.location", "ssl.key.location")),
    ("ssl.keystore.certificate.chain", ("ssl.certificate.pem",)),
    ("ssl.keystore.key", ("ssl.key.pem",)),
    ("ssl.key.password", ("ssl.key.password",)),
)
# Keys that mean the same in Kafka's Java client and in librdkafka.
_SHARED_KEYS = ("client.id",)


def client_config(
    config: ConfigSource,
    *,
    credentials: CredentialsSource | None = None,
    bootstrap_servers: str | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """A librdkafka configuration dict for ``Producer``, ``Consumer`` or ``AdminClient``.

    Args:
        config: A ``client.properties`` path, its properties, or a ``ClientConfig``
            (see :func:`sasl_scram.integrations.config_from_jaas` for a JAAS line).
        credentials: User credentials (or a synchronous provider, asked once)
            instead of ``sasl.jaas.config``.
        bootstrap_servers: Overrides ``bootstrap.servers``; checked as it is.
        extra: librdkafka properties to add, e.g. ``{"group.id": "g"}``.

    Returns:
        ``bootstrap.servers``, ``security.protocol`` and, as needed,
        ``sasl.mechanism``, ``sasl.username``, ``sasl.password`` and the
        librdkafka ``ssl.*`` keys.

    Raises:
        UnsupportedByClient: The login is a delegation token or has SCRAM
            extensions, which librdkafka cannot send.
        ClientConfigError: A property is missing or invalid (the message names
            it), e.g. a JKS or PKCS#12 store, which this builder does not translate.
    """
    cfg, provider = resolve(config, credentials)
    out: dict[str, str] = {
        "bootstrap.servers": ",".join(cfg.bootstrap_list(bootstrap_servers)),
        "security.protocol": cfg.security_protocol.lower(),
    }
    for key in _SHARED_KEYS:
        if key in cfg.properties:
            out[key] = cfg.properties[key]
    if provider is not None:
        creds = fetch_credentials(provider)
        if creds.token_auth:
            raise UnsupportedByClient(LIBRDKAFKA_NO_EXTENSIONS)
        if creds.extensions:
            raise UnsupportedByClient(
                "confluent-kafka cannot send SCRAM extensions "
                f"({', '.join(sorted(creds.extensions))}): librdkafka has no option for them"
            )
        assert cfg.mechanism_name is not None
        out["sasl.mechanism"] = cfg.mechanism_name
        out["sasl.username"] = creds.username
        out["sasl.password"] = creds.password
    if cfg.uses_ssl:
        out.update(_ssl(cfg))
    out.update(extra or {})
    return out


def _ssl(config: ClientConfig) -> dict[str, str]:
    props = config.pem_ssl_properties("for librdkafka")
    out: dict[str, str] = {}
    for kafka_key, rdkafka_keys in _SSL_KEYS:
        if props.get(kafka_key):
            for rdkafka_key in rdkafka_keys:
                out[rdkafka_key] = props[kafka_key]
    # Kafka: an empty algorithm disables host name checks; librdkafka spells it "none".
    algorithm = props.get("ssl.endpoint.identification.algorithm")
    if algorithm is not None:
        out["ssl.endpoint.identification.algorithm"] = algorithm.strip().lower() or "none"
    return out
