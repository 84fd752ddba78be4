"""The SASL_SSL listeners' keystore: five keys read once into one typed value."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from sasl_scram import ScramConfigError
from sasl_scram.endpoint import EndpointConfig
from sasl_scram.endpoint import SslKeystore
from tests.support.tls import self_signed

BASE = {"listeners": "SASL_SSL://localhost:9093", "scram.credential.store.path": "/tmp/x.db"}
KEY_PASSWORD = "key-secret"


def _pem_parts(keystore: Path) -> tuple[str, str]:
    """The certificate and the private key of a ``self_signed`` keystore."""
    text = keystore.read_text()
    cut = text.index("-----BEGIN CERTIFICATE-----")
    return text[cut:], text[:cut]


def test_the_five_keys_are_one_typed_value(tmp_path: Path) -> None:
    _, keystore = self_signed(tmp_path, key_password=KEY_PASSWORD)
    chain, key = _pem_parts(keystore)
    config = EndpointConfig.from_properties(
        {
            **BASE,
            "ssl.keystore.type": "pem",
            "ssl.keystore.certificate.chain": chain,
            "ssl.keystore.key": key,
            "ssl.key.password": KEY_PASSWORD,
        },
        (),
    )
    assert config.ssl_keystore == SslKeystore(
        type="pem", certificate_chain=chain, key=key, key_password=KEY_PASSWORD
    )
    # Inline PEM, as Kafka allows: the context loads it, with the key's password.
    assert isinstance(config.ssl_keystore.server_context(), ssl.SSLContext)
    # Neither the key nor its password in a repr, the configuration's or its own.
    for text in (repr(config), repr(config.ssl_keystore)):
        assert KEY_PASSWORD not in text and "PRIVATE KEY" not in text


def test_a_location_loads_and_no_keystore_is_the_empty_value(tmp_path: Path) -> None:
    _, keystore = self_signed(tmp_path)
    config = EndpointConfig.from_properties({**BASE, "ssl.keystore.location": str(keystore)}, ())
    assert config.ssl_keystore == SslKeystore(location=str(keystore))
    assert isinstance(config.ssl_keystore.server_context(), ssl.SSLContext)
    plain = {**BASE, "listeners": "SASL_PLAINTEXT://localhost:9092"}
    assert EndpointConfig.from_properties(plain, ()).ssl_keystore == SslKeystore()


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({"ssl.keystore.type": "JKS", "ssl.keystore.location": "/k.pem"}, "only PEM"),
        ({}, "SASL_SSL listener needs ssl.keystore.location"),
    ],
)
def test_a_sasl_ssl_listener_checks_its_keystore(keys: dict[str, str], message: str) -> None:
    with pytest.raises(ScramConfigError, match=message):
        EndpointConfig.from_properties({**BASE, **keys}, ())


def test_an_unreadable_keystore_names_the_key_never_the_password(tmp_path: Path) -> None:
    missing = SslKeystore(location=str(tmp_path / "none.pem"), key_password=KEY_PASSWORD)
    with pytest.raises(ScramConfigError) as caught:
        missing.server_context()
    text = str(caught.value)
    assert text.startswith("ssl.keystore.location: cannot load the TLS key and certificate")
    assert KEY_PASSWORD not in text
