"""kafka_options and apply_kafka_options without Spark (fake builders)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

import jaas
from tests.support.clock import FakeClock
from tokenauth import DelegationToken
from tokenauth.spark import JAAS_OPTION
from tokenauth.spark import JaasConflictError
from tokenauth.spark import KafkaOptions
from tokenauth.spark import OptionsNotInspectableError
from tokenauth.spark import apply_kafka_options
from tokenauth.spark import existing_option
from tokenauth.spark import kafka_options

from .fakes import FakeBroker


@pytest.fixture
def token() -> DelegationToken:
    return FakeBroker(FakeClock.epoch_ms()).connect().create_token()


class ConnectReader:
    """Shaped like Spark Connect's DataStreamReader: options in a Python dict."""

    def __init__(self) -> None:
        self._options: dict[str, str] = {}

    def option(self, key: str, value: str) -> ConnectReader:
        self._options[key] = value
        return self


class _Proto:
    def __init__(self) -> None:
        self.options: dict[str, str] = {}


class ConnectWriter:
    """Shaped like Spark Connect's DataStreamWriter: options in its protobuf."""

    def __init__(self) -> None:
        self._write_proto = _Proto()

    def option(self, key: str, value: str) -> ConnectWriter:
        self._write_proto.options[key] = value
        return self


class Opaque:
    def option(self, key: str, value: str) -> Opaque:
        return self


def test_kafka_options_are_spark_shaped(token: DelegationToken) -> None:
    options = kafka_options(token, " b1:9093, b2:9093 ,")
    assert list(options) == [
        "kafka.bootstrap.servers",
        "kafka.security.protocol",
        "kafka.sasl.mechanism",
        "kafka.sasl.jaas.config",
    ]
    assert options["kafka.bootstrap.servers"] == "b1:9093,b2:9093"
    assert options["kafka.security.protocol"] == "SASL_SSL"
    assert options["kafka.sasl.mechanism"] == "SCRAM-SHA-512"
    assert options[JAAS_OPTION] == jaas.scram_token_login_line(token.token_id, token.hmac_base64)
    # Spark's KafkaTokenUtil.getTokenJaasParams, minus serviceName (ignored by SCRAM).
    assert options[JAAS_OPTION] == (
        "org.apache.kafka.common.security.scram.ScramLoginModule required tokenauth=true "
        f'username="{token.token_id}" password="{token.hmac_base64}";'
    )
    login = jaas.load_client_context(options[JAAS_OPTION])
    creds = jaas.ScramLoginCredentials.from_context(login)
    assert creds.token_auth and creds.username == token.token_id
    assert creds.password == token.hmac_base64
    assert options.token_id == token.token_id


def test_client_properties_strip_the_prefix_like_spark(token: DelegationToken) -> None:
    options = kafka_options(
        token, "b:1", "scram-sha-256", "sasl_plaintext", extra={"ssl.truststore.type": "PEM"}
    )
    props = options.client_properties()
    assert props == {
        "bootstrap.servers": "b:1",
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.jaas.config": options[JAAS_OPTION],
        "ssl.truststore.type": "PEM",
    }
    mixed = KafkaOptions({"KAFKA.client.id": "x", "subscribe": "t"})
    assert mixed.client_properties() == {"client.id": "x"}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"bootstrap_servers": " "}, "bootstrap_servers"),
        ({"bootstrap_servers": "localhost"}, "bootstrap_servers: 'localhost' is not host:port"),
        ({"bootstrap_servers": "b:99999"}, "bootstrap_servers: port 99999 is out of range"),
        ({"mechanism": "PLAIN"}, "mechanism"),
        ({"security_protocol": "SSL"}, "security_protocol"),
        ({"extra": {"kafka.sasl.jaas.config": "x"}}, "extra"),
        ({"extra": {"SASL.MECHANISM": "x"}}, "extra"),
    ],
)
def test_kafka_options_rejects(token: DelegationToken, kwargs: dict[str, Any], match: str) -> None:
    args: dict[str, Any] = {"bootstrap_servers": "b:1", **kwargs}
    with pytest.raises(ValueError, match=match):
        kafka_options(token, **args)


def test_repr_masks_secrets(token: DelegationToken) -> None:
    pem = "-----BEGIN PRIVATE KEY-----MIIEv-----END PRIVATE KEY-----"
    extra = {"ssl.key.password": "kpw", "ssl.keystore.key": pem}
    options = kafka_options(token, "b:1", extra=extra)
    for text in (repr(options), str(options), f"{options}"):
        assert token.hmac_base64 not in text and "kpw" not in text and "MIIEv" not in text
        assert "********" in text and token.token_id in text
    assert dict(options)[JAAS_OPTION].endswith(f'password="{token.hmac_base64}";')


def test_apply_sets_every_option_and_checks_case_insensitively(
    token: DelegationToken, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="tokenauth")
    options = kafka_options(token, "b:1")
    reader = ConnectReader()
    assert apply_kafka_options(reader, options) is reader
    assert reader._options == dict(options)
    assert token.hmac_base64 not in caplog.text and "set 4 Kafka options" in caplog.text

    other = ConnectWriter().option("Kafka.Sasl.Jaas.Config", jaas.scram_login_line("bob", "pw"))
    assert existing_option(other, JAAS_OPTION) == jaas.scram_login_line("bob", "pw")
    with pytest.raises(JaasConflictError) as info:
        apply_kafka_options(other, options)
    assert "pw" not in str(info.value).replace("overwrite", "")
    assert token.hmac_base64 not in str(info.value)
    apply_kafka_options(other, options, overwrite=True)
    # The user's other spelling is gone: Connect would send both keys.
    held = other._write_proto.options
    assert [k for k in held if k.lower() == JAAS_OPTION] == [JAAS_OPTION]
    assert held[JAAS_OPTION] == options[JAAS_OPTION]


def test_apply_refuses_when_it_cannot_look(token: DelegationToken) -> None:
    options = kafka_options(token, "b:1")
    with pytest.raises(OptionsNotInspectableError, match="overwrite=True"):
        apply_kafka_options(Opaque(), options)
    apply_kafka_options(Opaque(), options, overwrite=True)
    # Options without a login need no check.
    apply_kafka_options(Opaque(), {"kafka.client.id": "x"})
