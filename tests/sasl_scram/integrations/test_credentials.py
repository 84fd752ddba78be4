"""The shared credentials model, providers and configuration sources."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import jaas
from sasl_scram.config import ClientConfigError
from sasl_scram.integrations import CredentialsError
from sasl_scram.integrations import PropertiesFileCredentials
from sasl_scram.integrations import ScramCredentials
from sasl_scram.integrations import StaticCredentials
from sasl_scram.integrations import as_provider
from sasl_scram.integrations import config_from_jaas
from sasl_scram.integrations import fetch_credentials
from sasl_scram.integrations import fetch_credentials_async
from sasl_scram.integrations import load_client_config
from sasl_scram.integrations._config import resolve

from .conftest import write_properties

SECRET = "s3cr3t-value"


def test_repr_hides_password_and_extension_values() -> None:
    creds = ScramCredentials("alice", SECRET, extensions={"ext": "hidden-value"})
    text = repr(creds) + repr(StaticCredentials(creds))
    assert SECRET not in text and "hidden-value" not in text
    assert "alice" in text and "ext" in text


def test_from_jaas_user_and_token() -> None:
    user = ScramCredentials.from_jaas(jaas.scram_login_line("a,b=c", SECRET))
    assert (user.username, user.password, user.token_auth) == ("a,b=c", SECRET, False)
    token = ScramCredentials.from_jaas(jaas.scram_token_login_line("tid", "aG1hYw=="))
    assert token == ScramCredentials.for_token("tid", "aG1hYw==")
    assert ScramCredentials.from_jaas(token.jaas_line()) == token


def test_from_jaas_errors_name_the_key_not_the_secret() -> None:
    with pytest.raises(CredentialsError, match=r"^sasl\.jaas\.config: ") as info:
        ScramCredentials.from_jaas(f'org.example.Other required password="{SECRET}";')
    assert SECRET not in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"username": "", "password": "p"}, "username"),
        ({"username": "u", "password": ""}, "password"),
        ({"username": "u", "password": "p", "extensions": {"tokenauth": "true"}}, "token_auth"),
    ],
)
def test_invalid_credentials(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(CredentialsError, match=match):
        ScramCredentials(**kwargs)  # type: ignore[arg-type]


def test_properties_file_provider_rereads(tmp_path: Path) -> None:
    path = tmp_path / "client.properties"
    write_properties(path, {"sasl.jaas.config": jaas.scram_login_line("alice", "one")})
    provider = PropertiesFileCredentials(path)
    assert fetch_credentials(provider).password == "one"
    write_properties(path, {"sasl.jaas.config": jaas.scram_token_login_line("tid", "two")})
    assert fetch_credentials(provider) == ScramCredentials.for_token("tid", "two")


def test_provider_failures_are_wrapped_without_their_message() -> None:
    def broken() -> ScramCredentials:
        raise RuntimeError(SECRET)

    with pytest.raises(CredentialsError) as info:
        fetch_credentials(as_provider(broken))
    assert SECRET not in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)
    with pytest.raises(CredentialsError, match="returned str"):
        fetch_credentials(as_provider(lambda: "alice"))  # type: ignore[arg-type, return-value]


def test_async_provider_failures_are_wrapped_and_own_errors_pass() -> None:
    async def broken() -> ScramCredentials:
        raise RuntimeError(SECRET)

    with pytest.raises(CredentialsError) as info:
        asyncio.run(fetch_credentials_async(as_provider(broken)))
    assert SECRET not in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)

    own = CredentialsError("the provider's own words")

    def refuses() -> ScramCredentials:
        raise own

    async def refuses_later() -> ScramCredentials:
        raise own

    with pytest.raises(CredentialsError) as info:
        fetch_credentials(as_provider(refuses))
    assert info.value is own
    for provider in (refuses, refuses_later):
        with pytest.raises(CredentialsError) as info:
            asyncio.run(fetch_credentials_async(as_provider(provider)))
        assert info.value is own


def test_async_provider_needs_an_async_client() -> None:
    async def provide() -> ScramCredentials:
        return ScramCredentials("alice", "pw")

    with pytest.raises(CredentialsError, match="asynchronous"):
        fetch_credentials(as_provider(provide))
    assert asyncio.run(fetch_credentials_async(as_provider(provide))).username == "alice"


def test_jaas_may_be_omitted_only_with_a_provider() -> None:
    props = {
        "bootstrap.servers": "b:9092",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
    }
    with pytest.raises(ClientConfigError, match=r"^sasl\.jaas\.config: required"):
        load_client_config(props)
    config = load_client_config(props, require_jaas=False)
    assert config.username is None and config.password is None
    cfg, provider = resolve(props, ScramCredentials("u", "p"))
    assert cfg.mechanism is not None and cfg.mechanism.mechanism_name == "SCRAM-SHA-512"
    assert provider is not None and fetch_credentials(provider).username == "u"
    with pytest.raises(ClientConfigError, match=r"sasl\.mechanism"):
        resolve({**props, "sasl.mechanism": "PLAIN"}, ScramCredentials("u", "p"))


def test_config_from_jaas() -> None:
    cfg = config_from_jaas(
        jaas.scram_token_login_line("tid", "aG1hYw=="),
        bootstrap_servers="b1:9093,b2:9093",
        security_protocol="SASL_PLAINTEXT",
    )
    assert cfg.token_auth and cfg.username == "tid"
    assert cfg.mechanism is not None and cfg.mechanism.mechanism_name == "SCRAM-SHA-512"


def _ignored_option_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "ignores option" in r.getMessage()]


def test_from_jaas_warns_about_an_option_the_module_ignores(
    caplog: pytest.LogCaptureFixture,
) -> None:
    line = f'{jaas.SCRAM_LOGIN_MODULE} required username="tid" password="{SECRET}" tokenath=true;'
    with caplog.at_level("WARNING"):
        creds = ScramCredentials.from_jaas(line)
        ScramCredentials.from_jaas(line, warn=False)
    # Kafka reads it so too: no tokenauth, the token id goes as a user name.
    assert creds.token_auth is False
    assert _ignored_option_warnings(caplog) == [
        "sasl.jaas.config: ScramLoginModule ignores option 'tokenath' (it reads only "
        "username, password and tokenauth); did you mean 'tokenauth'?"
    ]
    assert SECRET not in caplog.text


def test_a_reread_file_warns_once_per_line(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    path = tmp_path / "client.properties"
    provider = PropertiesFileCredentials(path)

    def write(options: str) -> None:
        line = f"{jaas.SCRAM_LOGIN_MODULE} required {options};"
        path.write_text(f"sasl.jaas.config={line}\n".replace("\\", "\\\\"))

    write('username="a" password="p" tokenauth=ture')
    with caplog.at_level("WARNING"):
        for _ in range(3):
            assert provider.scram_credentials().token_auth is False
        write('username="a" password="p2" tokenauth=ture')
        provider.scram_credentials()
    # Once for the first line, once more when the file changed; not per login.
    warnings = [m for m in caplog.messages if "tokenauth='ture' as false" in m]
    assert len(warnings) == 2
