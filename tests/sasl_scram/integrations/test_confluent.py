"""confluent-kafka configuration: user logins against the endpoint; tokens refused clearly."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

import jaas
from sasl_scram.config import ClientConfigError
from sasl_scram.integrations import ScramCredentials
from sasl_scram.integrations import UnsupportedByClient
from sasl_scram.integrations import config_from_jaas
from sasl_scram.integrations import confluent
from tests.support.tls import self_signed

from .conftest import MECHS
from .conftest import TokenEndpoint
from .conftest import client_properties
from .conftest import user_line


@pytest.mark.parametrize("mechanism", MECHS)
def test_user_login(token_endpoint: TokenEndpoint, mechanism: str) -> None:
    config = confluent.client_config(client_properties(token_endpoint.ep, user_line(), mechanism))
    assert config["sasl.mechanism"] == mechanism
    assert config["security.protocol"] == "sasl_plaintext"
    metadata = AdminClient({**config}).list_topics(timeout=10)
    assert [(b.host, b.port) for b in metadata.brokers.values()] == [
        (token_endpoint.ep.host, token_endpoint.ep.port)
    ]


@pytest.mark.slow
def test_wrong_password_is_refused(token_endpoint: TokenEndpoint) -> None:
    line = jaas.scram_login_line("alice", "wrong-secret")
    config = confluent.client_config(client_properties(token_endpoint.ep, line))
    with pytest.raises(KafkaException):
        AdminClient({**config, "log_level": "0"}).list_topics(timeout=2)


def test_from_jaas_line(token_endpoint: TokenEndpoint) -> None:
    cfg = config_from_jaas(
        user_line(), bootstrap_servers=token_endpoint.bootstrap, security_protocol="SASL_PLAINTEXT"
    )
    config = confluent.client_config(cfg, extra={"client.id": "jaas-test"})
    assert config["sasl.username"] == "alice" and config["client.id"] == "jaas-test"
    assert AdminClient({**config}).list_topics(timeout=10).brokers


def test_token_auth_is_refused_with_the_reason() -> None:
    line = jaas.scram_token_login_line("token-id", "aG1hYw==")
    cfg = config_from_jaas(line, bootstrap_servers="b:9093")
    with pytest.raises(UnsupportedByClient, match=r"librdkafka.*cannot send SCRAM extensions"):
        confluent.client_config(cfg)
    with pytest.raises(UnsupportedByClient, match="extensions"):
        confluent.client_config(cfg, credentials=ScramCredentials("u", "p", extensions={"a": "b"}))


def test_ssl_keys_are_translated(tmp_path: Path) -> None:
    ca, keystore = self_signed(tmp_path, "client", key_password="key-pass")
    props = {
        "bootstrap.servers": "b:9093",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": user_line(),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(ca),
        "ssl.keystore.location": str(keystore),
        "ssl.key.password": "key-pass",
        "ssl.endpoint.identification.algorithm": "",
        "client.id": "app",
        "ssl.truststore.password": "ignored-by-pem",
    }
    config = confluent.client_config(props)
    assert config == {
        "bootstrap.servers": "b:9093",
        "security.protocol": "sasl_ssl",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "alice",
        "sasl.password": "alice-secret",
        "client.id": "app",
        "ssl.ca.location": str(ca),
        "ssl.certificate.location": str(keystore),
        "ssl.key.location": str(keystore),
        "ssl.key.password": "key-pass",
        "ssl.endpoint.identification.algorithm": "none",
    }
    AdminClient({**config})  # librdkafka accepts every key and loads the files
    with pytest.raises(ClientConfigError, match=r"^ssl\.truststore\.type: "):
        confluent.client_config({**props, "ssl.truststore.type": "JKS"})
