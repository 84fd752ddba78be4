"""SASL_SSL listeners: PEM keystore, our client and librdkafka over TLS."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from sasl_scram import SCRAM_SHA_512
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import KafkaConnectionError
from sasl_scram.admin import SaslCredentials
from sasl_scram.config._client_config import ClientConfig
from tests.support.endpoint_harness import ALICE
from tests.support.endpoint_harness import RunningEndpoint
from tests.support.tls import self_signed


def test_sasl_ssl_listener(tmp_path: Path) -> None:
    truststore, keystore = self_signed(tmp_path)
    props = {
        "listeners": "SASL_SSL://localhost:0",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(keystore),
    }
    with RunningEndpoint(properties=props) as ep:
        config = ClientConfig.from_properties(
            {
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "SCRAM-SHA-512",
                "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
                'required username="alice" password="alice-secret";',
                "ssl.truststore.type": "PEM",
                "ssl.truststore.location": str(truststore),
            }
        )
        context = config.ssl_context()
        assert context is not None
        with KafkaConnection(
            f"localhost:{ep.port}", SaslCredentials(SCRAM_SHA_512, *ALICE), ssl_context=context
        ) as conn:
            metadata = conn.request(3, {"topics": None})
            assert metadata["brokers"][0]["host"] == "localhost"
        # A client that does not trust the certificate never reaches SASL.
        untrusting = ssl.create_default_context()
        with pytest.raises(KafkaConnectionError, match="certificate verify failed"):
            KafkaConnection(
                f"localhost:{ep.port}",
                SaslCredentials(SCRAM_SHA_512, *ALICE),
                ssl_context=untrusting,
            )


def test_librdkafka_over_sasl_ssl(tmp_path: Path) -> None:
    from confluent_kafka.admin import AdminClient

    truststore, keystore = self_signed(tmp_path)
    props = {"listeners": "SASL_SSL://localhost:0", "ssl.keystore.location": str(keystore)}
    with RunningEndpoint(properties=props) as ep:
        admin = AdminClient(
            {
                "bootstrap.servers": f"localhost:{ep.port}",
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": "SCRAM-SHA-256",
                "sasl.username": "alice",
                "sasl.password": "alice-secret",
                "ssl.ca.location": str(truststore),
            }
        )
        assert list(admin.list_topics(timeout=15).brokers) == [1]
