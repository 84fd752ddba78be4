"""Kafka's JaasContext rules, SCRAM credentials and secret masking."""

from __future__ import annotations

import logging

import pytest

import jaas

SCRAM = jaas.SCRAM_LOGIN_MODULE
JNDI = "com.sun.security.auth.module.JndiLoginModule"
STATIC = jaas.parse_file(
    f'KafkaClient {{ {SCRAM} required username="file" password="file-pw"; }};\n'
    f'KafkaServer {{ {SCRAM} required username="broker" password="b-pw"; }};\n'
    f'sasl_ssl.KafkaServer {{ {SCRAM} required username="listener" password="l-pw"; }};\n'
    "sasl_plaintext.KafkaServer { };\n",
    "/etc/kafka/jaas.conf",
)


def _user(context: jaas.Context) -> str:
    return jaas.ScramLoginCredentials.from_context(context).username


def test_client_property_beats_static_file() -> None:
    line = jaas.scram_login_line("alice", "pw")
    assert _user(jaas.load_client_context(line, STATIC)) == "alice"
    context = jaas.load_client_context(None, STATIC)
    assert (context.name, _user(context)) == ("KafkaClient", "file")


def test_client_without_any_configuration() -> None:
    with pytest.raises(jaas.JaasConfigurationError) as info:
        jaas.load_client_context(None)
    assert str(info.value) == (
        "Could not find a 'KafkaClient' entry in the JAAS configuration. "
        "System property 'java.security.auth.login.config' is not set"
    )


def test_property_must_hold_exactly_one_module() -> None:
    with pytest.raises(jaas.JaasConfigurationError, match="contains 2 login modules"):
        jaas.load_client_context("a required; b required;")


def test_server_order(caplog: pytest.LogCaptureFixture) -> None:
    key = jaas.server_property_name("SASL_SSL", "SCRAM-SHA-256")
    assert key == "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config"
    config = {key: jaas.scram_login_line("dynamic", "pw")}
    assert _user(jaas.load_server_context("SASL_SSL", "SCRAM-SHA-256", config, STATIC)) == (
        "dynamic"
    )
    # Without the property: <listener>.KafkaServer, then KafkaServer.
    context = jaas.load_server_context("SASL_SSL", "SCRAM-SHA-512", config, STATIC)
    assert (context.name, _user(context)) == ("sasl_ssl.KafkaServer", "listener")
    # An empty listener context counts as missing, as in the JDK.
    context = jaas.load_server_context("SASL_PLAINTEXT", "SCRAM-SHA-256", {}, STATIC)
    assert (context.name, _user(context)) == ("KafkaServer", "broker")
    with caplog.at_level(logging.WARNING, logger="jaas"):
        jaas.load_server_context("X", "PLAIN", {"sasl.jaas.config": "ignored"}, STATIC)
    assert "should be prefixed with SASL mechanism name" in caplog.text


def test_server_not_found_message() -> None:
    with pytest.raises(jaas.JaasConfigurationError) as info:
        jaas.load_server_context("SASL_SSL", "PLAIN", {}, jaas.Configuration(filename="/j.conf"))
    assert str(info.value) == (
        "Could not find a 'KafkaServer' or 'sasl_ssl.KafkaServer' entry in the JAAS "
        "configuration. System property 'java.security.auth.login.config' is /j.conf"
    )


def test_login_module_policy() -> None:
    jndi = jaas.LoginModuleEntry("com.sun.security.auth.module.JndiLoginModule")
    with pytest.raises(jaas.JaasConfigurationError, match="is deprecated"):
        jaas.LoginModulePolicy().check(jndi)
    static = jaas.Configuration((jaas.Context("KafkaClient", (jndi,)),))
    with pytest.raises(jaas.JaasConfigurationError, match="JndiLoginModule is not allowed"):
        jaas.load_client_context(None, static)
    policy = jaas.LoginModulePolicy.from_system_properties(
        {jaas.ALLOWED_LOGIN_MODULES_PROPERTY: f" {SCRAM} , {JNDI},"}
    )
    policy.check(jndi)
    with pytest.raises(jaas.JaasConfigurationError) as info:
        policy.check(jaas.LoginModuleEntry("x.Other"))
    assert str(info.value) == (
        "x.Other is not allowed. Update System property "
        "'org.apache.kafka.allowed.login.modules' to allow x.Other"
    )
    custom = jaas.LoginModulePolicy.from_system_properties(
        {jaas.DISALLOWED_LOGIN_MODULES_PROPERTY: "x.Bad"}
    )
    custom.check(jndi)
    with pytest.raises(jaas.JaasConfigurationError):
        custom.check(jaas.LoginModuleEntry("  x.Bad"))


def test_scram_lines_and_credentials() -> None:
    assert jaas.scram_login_line("alice", "alice-secret") == (
        f'{SCRAM} required username="alice" password="alice-secret";'
    )
    assert jaas.scram_token_login_line("tok", "a/b+c==") == (
        f'{SCRAM} required tokenauth=true username="tok" password="a/b+c==";'
    )
    assert jaas.scram_login_line('a"b', "c\\d") == (
        f'{SCRAM} required username="a\\"b" password="c\\\\d";'
    )
    entry = jaas.parse_property(f"{SCRAM} required username=u password=p tokenauth=TRUE;")
    creds = jaas.ScramLoginCredentials.from_context(entry)
    assert creds.token_auth and creds.password == "p"
    with pytest.raises(jaas.JaasCredentialsError, match="got no password"):
        jaas.ScramLoginCredentials.from_entry(
            jaas.LoginModuleEntry(SCRAM, options={"username": "u"})
        )
    with pytest.raises(jaas.JaasCredentialsError, match="expected login module"):
        jaas.ScramLoginCredentials.from_entry(jaas.LoginModuleEntry("x.Y"))


def test_secrets_are_masked_everywhere() -> None:
    line = jaas.scram_token_login_line("tok", "hmac-value")
    context = jaas.parse_property(line)
    creds = jaas.ScramLoginCredentials.from_context(context)
    entry = jaas.LoginModuleEntry("m", options={"clientSecret": "cs", "tokenHmac": "h"})
    for shown in (repr(context), repr(creds), repr(entry), str(context.to_dict())):
        assert "hmac-value" not in shown and "cs'" not in shown and "'h'" not in shown
    assert "hmac-value" not in jaas.render_property(context, mask_secrets=True)
    assert "hmac-value" in jaas.render_property(context)
    with pytest.raises(jaas.JaasSyntaxError) as info:
        jaas.parse_property('m required password="hunter2" x=1;')
    assert "hunter2" not in str(info.value)
    with pytest.raises(jaas.JaasSyntaxError) as info:
        jaas.parse_file("A { m required password='hunter2'; };")
    assert "hunter2" not in str(info.value) and "hunter2" not in str(info.value.java_message)


@pytest.mark.parametrize("separator", [" ", ":", "\n  "])
def test_a_secret_without_its_equals_sign_is_masked_too(separator: str) -> None:
    # A missing '=' is reported at the value's token: the value must not show.
    options = f'username="alice" password{separator}"hunter2"'
    with pytest.raises(jaas.JaasSyntaxError) as info:
        jaas.parse_property(f"m required {options};")
    assert "hunter2" not in str(info.value) and "hunter2" not in str(info.value.java_message)
    with pytest.raises(jaas.JaasSyntaxError) as info:
        jaas.parse_file(f"A {{ m required {options}; }};")
    assert "hunter2" not in str(info.value) and "hunter2" not in str(info.value.java_message)


def test_model_rules() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        jaas.LoginModuleEntry("")
    with pytest.raises(ValueError, match="duplicate context"):
        jaas.Configuration((jaas.Context("A"), jaas.Context("A")))
    entry = jaas.parse_property('m required k="1" j=x k="2";').entries[0]
    assert list(entry.options.items()) == [("k", "2"), ("j", "x")]
    assert jaas.ControlFlag.parse("OpTiOnAl") is jaas.ControlFlag.OPTIONAL
    assert jaas.parse_file("A { m required; };").entries("A") is not None
    assert jaas.parse_file("A { };").entries("A") is None


@pytest.mark.parametrize(
    "value",
    [
        "alice hunter2",  # a space in an unquoted password
        'alice"hunter2"',  # a quote in the middle of one
        "alice hunter2 more",  # and what follows the word after it
        "alice hunter2 more words",
        "alice hunter2\n  more",  # the rest on the next line
    ],
)
@pytest.mark.parametrize("module", [SCRAM, "m"])
@pytest.mark.parametrize("end", [";", ""])
def test_the_rest_of_a_secret_value_that_needs_quotes_is_masked(
    value: str, module: str, end: str
) -> None:
    # A secret written without the quotes its space or quote needs: the
    # tokenizer takes the part after the space for the next option's name.
    # That part is the secret's, so neither the message, the line shown nor
    # Java's message names it; the hint says to quote the value.
    options = f'username="alice" password={value}{end}'
    with pytest.raises(jaas.JaasSyntaxError) as info:
        jaas.parse_property(f"{module} required {options}")
    for shown in (str(info.value), str(info.value.java_message)):
        assert "hunter2" not in shown and "more" not in shown and "words" not in shown
    assert "double quotes" in str(info.value)
    if end:
        with pytest.raises(jaas.JaasSyntaxError) as info:
            jaas.parse_file(f"KafkaClient {{\n  {module} required {options}\n}};\n")
        for shown in (str(info.value), str(info.value.java_message)):
            assert "hunter2" not in shown and "more" not in shown and "words" not in shown
        assert "double quotes" in str(info.value)
