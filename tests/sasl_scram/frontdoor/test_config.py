"""The upstream. key family, typed."""

from __future__ import annotations

import pytest

from sasl_scram.frontdoor import UpstreamConfig
from sasl_scram.frontdoor import UpstreamConfigError
from sasl_scram.frontdoor import UpstreamIdentity
from sasl_scram.frontdoor import upstream_config

JAAS = (
    "org.apache.kafka.common.security.scram.ScramLoginModule required "
    'username="svc" password="svc-secret";'
)
SASL = {
    "bootstrap.servers": "k1:9092, k2:9093",
    "security.protocol": "SASL_PLAINTEXT",
    "sasl.mechanism": "SCRAM-SHA-512",
    "sasl.jaas.config": JAAS,
}


def test_off_without_keys() -> None:
    assert upstream_config({}, 9092) is None


def test_defaults_and_client_properties() -> None:
    config = upstream_config(SASL, 9092)
    assert isinstance(config, UpstreamConfig)
    assert config.bootstrap == (("k1", 9092), ("k2", 9093))
    assert config.identity is UpstreamIdentity.SERVICE
    assert config.node_port_base == 9093
    assert config.client.username == "svc" and config.client.mechanism_name == "SCRAM-SHA-512"
    assert "svc-secret" not in repr(config)


def test_identity_and_port_base() -> None:
    config = upstream_config({**SASL, "identity": "owner-token", "node.port.base": " 20000 "}, 9092)
    assert config is not None
    assert config.identity is UpstreamIdentity.OWNER_TOKEN
    assert config.node_port_base == 20000
    assert "identity" not in config.client.properties


@pytest.mark.parametrize(
    ("family", "message"),
    [
        (
            {"security.protocol": "SSL"},
            "upstream.bootstrap.servers: required to use upstream.security.protocol",
        ),
        ({"bootstrap.servers": "k1"}, "upstream.bootstrap.servers: "),
        ({**SASL, "identity": "user"}, "upstream.identity: 'user' is not service or owner-token"),
        ({**SASL, "node.port.base": "x"}, "upstream.node.port.base: expected an integer"),
        ({**SASL, "node.port.base": "70000"}, "upstream.node.port.base: 70000 is not a TCP port"),
        ({**SASL, "sasl.mechanism": "PLAIN"}, "upstream.sasl.mechanism: 'PLAIN'"),
        ({**SASL, "security.protocol": "TLS"}, "upstream.security.protocol: 'TLS'"),
        (
            {**SASL, "sasl.jaas.config": JAAS.replace("password", "passwrod")},
            "upstream.sasl.jaas.config: ScramLoginModule ignores option 'passwrod'",
        ),
        (
            {**SASL, "sasl.jaas.config": JAAS.rstrip(";")},
            "upstream.sasl.jaas.config: <sasl.jaas.config>:1:",
        ),
        (
            {**SASL, "sasl.jaas.config": 'garbage "svc-secret"'},
            "upstream.sasl.jaas.config: <sasl.jaas.config>:1:9: expected a control flag "
            '(required, requisite, sufficient or optional), got quoted string "********"',
        ),
    ],
)
def test_one_line_errors_name_the_key(family: dict[str, str], message: str) -> None:
    with pytest.raises(UpstreamConfigError) as caught:
        upstream_config(family, 9092)
    text = str(caught.value)
    assert text.startswith(message) and "\n" not in text
    assert "svc-secret" not in text


def test_a_listener_on_the_last_port_needs_a_base() -> None:
    with pytest.raises(UpstreamConfigError, match="65536 is not a TCP port"):
        upstream_config(SASL, 65535)
