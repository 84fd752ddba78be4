"""SASL_SSL listeners: PEM keystore, our client and librdkafka over TLS."""

from __future__ import annotations

import datetime
import ssl
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from sasl_scram import SCRAM_SHA_512
from sasl_scram.admin import KafkaConnection, KafkaConnectionError, SaslCredentials
from sasl_scram.client_config import ClientConfig
from tests.endpoint_harness import ALICE, RunningEndpoint


def self_signed(tmp_path: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    keystore = tmp_path / "server.pem"
    keystore.write_bytes(cert_pem + key_pem)
    truststore = tmp_path / "ca.pem"
    truststore.write_bytes(cert_pem)
    return keystore, truststore


def test_sasl_ssl_listener(tmp_path: Path) -> None:
    keystore, truststore = self_signed(tmp_path)
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

    keystore, truststore = self_signed(tmp_path)
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
