"""``ClientConfig``: the options of ``sasl.jaas.config`` that Kafka's ScramLoginModule
ignores are logged once per configuration (and refused when ``strict``)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import jaas
from sasl_scram.config import ClientConfig
from sasl_scram.config import ClientConfigError
from sasl_scram.config import format_properties
from sasl_scram.integrations import config_from_jaas

HMAC = "aGVsbG8gd29ybGQ="


def props(line: str) -> dict[str, str]:
    return {
        "bootstrap.servers": "broker:9093",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.jaas.config": line,
    }


def line(options: str) -> str:
    return f"{jaas.SCRAM_LOGIN_MODULE} required {options};"


def warned(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "sasl_scram.config" and r.levelno == logging.WARNING
    ]


def test_a_misspelled_tokenauth_is_a_warning_once(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        config = ClientConfig.from_properties(
            props(line(f'username="tok" password="{HMAC}" tokenath=true'))
        )
    # Kafka reads it so too: the token id is sent as a user name.
    assert config.token_auth is False
    assert warned(caplog) == [
        "sasl.jaas.config: ScramLoginModule ignores option 'tokenath' (it reads only "
        "username, password and tokenauth); did you mean 'tokenauth'?"
    ]
    assert HMAC not in caplog.text


def test_every_integration_path_warns(caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    path = tmp_path / "client.properties"
    path.write_text(format_properties(props(line('username="a" password="p" tokenauth=ture'))))
    with caplog.at_level(logging.WARNING):
        ClientConfig.from_file(path)
        config_from_jaas(line('username="a" password="p" tokenauth=ture'), bootstrap_servers="b:1")
    assert len(warned(caplog)) == 2
    assert all("tokenauth='ture' as false" in m for m in warned(caplog))


def test_a_correct_line_is_silent(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        ClientConfig.from_properties(props(line('username="a" password="p" tokenauth=TRUE')))
    assert warned(caplog) == []


def test_strict_refuses_what_would_be_a_warning() -> None:
    with pytest.raises(ClientConfigError) as info:
        ClientConfig.from_properties(
            props(line('username="a" passwrod="analytics-secret"')), strict=True
        )
    assert str(info.value).startswith(
        "sasl.jaas.config: ScramLoginModule ignores option 'passwrod'"
    )
    assert "analytics-secret" not in str(info.value)
    config = ClientConfig.from_properties(props(line('username="a" password="p"')), strict=True)
    assert config.username == "a"
