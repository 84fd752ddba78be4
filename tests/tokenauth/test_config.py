from __future__ import annotations

import pytest

from sasl_scram.config import parse_properties
from sasl_scram.config import read_keys
from tokenauth import DEFAULT_EXPIRY_CHECK_INTERVAL_MS
from tokenauth import DEFAULT_EXPIRY_TIME_MS
from tokenauth import DEFAULT_MAX_LIFETIME_MS
from tokenauth import TokenConfig
from tokenauth import TokenConfigError
from tokenauth import TokenSecrets
from tokenauth import parse_secret_list
from tokenauth._config import CONFIG_KEYS


def test_defaults_are_kafkas() -> None:
    config = TokenConfig.from_properties({})
    assert not config.enabled
    assert config.secrets is None
    assert DEFAULT_MAX_LIFETIME_MS == config.max_lifetime_ms == 604_800_000
    assert DEFAULT_EXPIRY_TIME_MS == config.expiry_time_ms == 86_400_000
    assert DEFAULT_EXPIRY_CHECK_INTERVAL_MS == config.expiry_check_interval_ms == 3_600_000


def test_all_keys_read() -> None:
    config = TokenConfig.from_properties(
        {
            "delegation.token.secret.key": "s3cret",
            "delegation.token.max.lifetime.ms": " 1000 ",
            "delegation.token.expiry.time.ms": "500",
            "delegation.token.expiry.check.interval.ms": "+20",
            "unrelated.key": "x",
        }
    )
    assert config.enabled
    assert config.secrets == TokenSecrets(["s3cret"])
    assert (config.max_lifetime_ms, config.expiry_time_ms, config.expiry_check_interval_ms) == (
        1000,
        500,
        20,
    )


def test_master_key_is_alias_only_when_secret_key_absent() -> None:
    assert TokenConfig.from_properties({"delegation.token.master.key": "m"}).secrets == (
        TokenSecrets(["m"])
    )
    both = TokenConfig.from_properties(
        {"delegation.token.master.key": "m", "delegation.token.secret.key": "s"}
    )
    assert both.secrets == TokenSecrets(["s"])
    # Present but empty secret key: disabled, the alias is not consulted (Kafka: null only).
    empty = TokenConfig.from_properties(
        {"delegation.token.master.key": "m", "delegation.token.secret.key": ""}
    )
    assert not empty.enabled
    assert not TokenConfig.from_properties({"delegation.token.secret.key": "   "}).enabled


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("delegation.token.max.lifetime.ms", "abc", "Not a number of type LONG"),
        ("delegation.token.max.lifetime.ms", "0", "Value must be at least 1"),
        ("delegation.token.expiry.time.ms", "-5", "Value must be at least 1"),
        ("delegation.token.expiry.check.interval.ms", "1.5", "Not a number of type LONG"),
        ("delegation.token.expiry.time.ms", str(2**63), "Not a number of type LONG"),
    ],
)
def test_bad_long_values_name_the_key(key: str, value: str, message: str) -> None:
    with pytest.raises(TokenConfigError) as info:
        TokenConfig.from_properties({key: value})
    assert key in str(info.value)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("one", ("one",)),
        ("new,old", ("new", "old")),
        ("new, old , older", ("new", "old", "older")),
        (r"a\,b,c", ("a,b", "c")),
        (r"back\\slash", ("back\\slash",)),
        (r"\\\,", ("\\,",)),
        ("", ()),
    ],
)
def test_secret_list_syntax(text: str, expected: tuple[str, ...]) -> None:
    assert parse_secret_list(text) == expected


@pytest.mark.parametrize(
    "text", ["Zq9x,,Yw8v", "Zq9x,", ",Zq9x", r"Zq9x\Yw8v", "Zq9x\\", "Zq9x, ,Yw8v"]
)
def test_secret_list_errors_never_echo_the_secret(text: str) -> None:
    with pytest.raises(TokenConfigError) as info:
        TokenConfig.from_properties({"delegation.token.secret.key": text})
    assert "delegation.token.secret.key" in str(info.value)
    for part in text.replace("\\", ",").split(","):
        if part.strip():
            assert part.strip() not in str(info.value)


def test_master_key_errors_name_the_alias() -> None:
    with pytest.raises(TokenConfigError, match=r"delegation\.token\.master\.key"):
        TokenConfig.from_properties({"delegation.token.master.key": "a,,b"})


def test_secrets_are_redacted() -> None:
    config = TokenConfig.of("topsecret-1", "topsecret-2")
    assert "topsecret" not in repr(config)
    assert "topsecret" not in str(config.secrets)
    assert config.secrets is not None
    assert config.secrets.current == b"topsecret-1"
    assert len(config.secrets) == 2


def test_secrets_validation() -> None:
    with pytest.raises(TokenConfigError):
        TokenSecrets([])
    with pytest.raises(TokenConfigError):
        TokenSecrets(["ok", ""])
    with pytest.raises(TokenConfigError):
        TokenSecrets("abc")
    with pytest.raises(TokenConfigError):
        TokenConfig(max_lifetime_ms=0)


def test_errors_are_the_tables_naming_file_line_and_key() -> None:
    # One parser per key: the same wording as kafka-scram serve gives, with the
    # file and line a Properties remembers.
    props = parse_properties(
        "# tokens\ndelegation.token.max.lifetime.ms=abc\n", "server.properties"
    )
    with pytest.raises(TokenConfigError) as info:
        TokenConfig.from_properties(props)
    assert str(info.value) == (
        "server.properties:2: delegation.token.max.lifetime.ms: invalid value 'abc': "
        "Not a number of type LONG; accepted: an integer from 1 to 9223372036854775807 "
        "(milliseconds)"
    )


def test_from_values_takes_what_the_table_parsed() -> None:
    values = read_keys(
        CONFIG_KEYS,
        {"delegation.token.master.key": "old", "delegation.token.expiry.time.ms": "7"},
    )
    config = TokenConfig.from_values(values)
    assert config.secrets == TokenSecrets(["old"])
    assert config.expiry_time_ms == 7
    assert config.max_lifetime_ms == DEFAULT_MAX_LIFETIME_MS
    assert config == TokenConfig.from_properties(
        {"delegation.token.master.key": "old", "delegation.token.expiry.time.ms": "7"}
    )
