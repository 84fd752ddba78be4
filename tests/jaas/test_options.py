"""What a known login module reads: warnings for the options it ignores, and masking.

Kafka's ``ScramLoginModule.initialize`` reads ``username``, ``password`` and
``tokenauth`` (``"true".equalsIgnoreCase``) and ignores every other option, so a
typo there changes the login without a word from Kafka.
"""

from __future__ import annotations

import json

import pytest

import jaas

SCRAM = jaas.SCRAM_LOGIN_MODULE
SECRET = "analytics-secret"


def scram(options: str) -> jaas.LoginModuleEntry:
    return jaas.parse_property(f"{SCRAM} required {options};").entries[0]


def messages(options: str) -> list[str]:
    return [w.message for w in jaas.option_warnings(scram(options))]


def test_a_correct_scram_line_has_no_warning() -> None:
    for value in ("true", "TRUE", "True", "false", "FALSE"):
        assert messages(f'username="u" password="p" tokenauth={value}') == []
    assert messages('username="u" password="p"') == []


def test_a_misspelled_option_is_named_with_the_nearest_known_name() -> None:
    (warning,) = jaas.option_warnings(scram('username="tok" password="h" tokenath=true'))
    assert (warning.module, warning.option, warning.suggestion) == (SCRAM, "tokenath", "tokenauth")
    assert warning.message == (
        "ScramLoginModule ignores option 'tokenath' (it reads only username, password "
        "and tokenauth); did you mean 'tokenauth'?"
    )
    assert str(warning) == warning.message
    assert messages(f'username="alice" passwrod="{SECRET}"') == [
        "ScramLoginModule ignores option 'passwrod' (it reads only username, password "
        "and tokenauth); did you mean 'password'?"
    ]
    # Option names are case-sensitive in Kafka (a HashMap).
    assert jaas.option_warnings(scram('Username="a" password="p"'))[0].suggestion == "username"
    assert jaas.option_warnings(scram('user="a" password="p"'))[0].suggestion == "username"


def test_an_option_far_from_every_known_name_lists_them_without_a_guess() -> None:
    (warning,) = jaas.option_warnings(scram('username="a" password="p" serviceName="kafka"'))
    assert warning.suggestion is None
    assert warning.message == (
        "ScramLoginModule ignores option 'serviceName' (it reads only username, password "
        "and tokenauth)"
    )


def test_a_tokenauth_value_other_than_true_or_false_means_false() -> None:
    (warning,) = jaas.option_warnings(scram('username="t" password="h" tokenauth=ture'))
    assert (warning.option, warning.suggestion) == ("tokenauth", "true")
    assert warning.message == (
        "ScramLoginModule reads tokenauth='ture' as false: only true (in any case) turns "
        "on delegation token login; did you mean 'true'?"
    )
    for value, meant in (("no", "false"), ("1", "true"), ("flase", "false")):
        (warning,) = jaas.option_warnings(scram(f'username="t" password="h" tokenauth="{value}"'))
        assert warning.suggestion == meant


def test_a_tokenauth_value_far_from_a_boolean_is_not_shown() -> None:
    # It may be a secret pasted in the wrong place.
    (warning,) = jaas.option_warnings(scram(f'username="t" password="h" tokenauth="{SECRET}"'))
    assert SECRET not in warning.message and warning.suggestion is None


def test_a_number_used_as_a_name_is_ignored_too() -> None:
    (warning,) = jaas.option_warnings(scram('username="t" password="h" 3="x"'))
    assert warning.option is None and "x" not in warning.message.split("(")[0]


def test_other_login_modules_get_no_warning() -> None:
    entry = jaas.parse_property("com.example.Login required tokenath=true;").entries[0]
    assert jaas.option_warnings(entry) == ()


# Item 3: a misspelled password must not be shown.


def test_unknown_options_of_a_known_module_are_masked_everywhere() -> None:
    entry = scram(f'username="alice" passwrod="{SECRET}" tokenath="{SECRET}" tokenauth=ture')
    shown = [
        repr(entry),
        repr(jaas.Context("KafkaClient", (entry,))),
        jaas.render_property(entry, mask_secrets=True),
        jaas.render_file(jaas.Context("KafkaClient", (entry,)), mask_secrets=True),
        json.dumps(entry.to_dict()),
    ]
    for text in shown:
        assert SECRET not in text, text
        assert "alice" in text and "ture" in text, text  # the harmless ones stay readable


@pytest.mark.parametrize(
    "name", ["passwrod", "pasword", "Passwort", "secert", "keys", "tokn", "hmca", "Token"]
)
def test_names_close_to_a_secret_word_are_masked_on_any_module(name: str) -> None:
    entry = jaas.parse_property(f'com.example.Login required {name}="{SECRET}";').entries[0]
    assert jaas.is_secret_option(entry.module, name)
    assert SECRET not in repr(entry)
    assert SECRET not in jaas.render_entry(entry, mask_secrets=True)


def test_harmless_names_on_unknown_modules_stay_shown() -> None:
    entry = jaas.parse_property('com.example.Login required useKeyTab=true principal="kafka";')
    assert jaas.render_property(entry, mask_secrets=True) == (
        'com.example.Login required useKeyTab=true principal="kafka";'
    )


@pytest.mark.parametrize(
    "text",
    [
        f'{SCRAM} required username="a" passwrod="{SECRET}" x=3;',
        f'{SCRAM} required username="a" foo="{SECRET}" x=3;',
        f'com.example.Login required a="b" 3; {SCRAM} required foo="{SECRET}";',
        f'{SCRAM} required foo="{SECRET}"; com.example.Login required a=3;',
    ],
)
def test_errors_mask_unknown_options_of_a_known_module(text: str) -> None:
    with pytest.raises(jaas.JaasSyntaxError) as info:
        jaas.parse_property(text)
    assert SECRET not in str(info.value)
    assert SECRET not in (info.value.java_message or "")


def test_file_errors_mask_unknown_options_of_a_known_module() -> None:
    text = f'KafkaClient {{\n  {SCRAM} required\n  passwrod="{SECRET}" foo="{SECRET}" x=3;\n}};\n'
    with pytest.raises(jaas.JaasSyntaxError) as info:
        jaas.parse_file(text)
    assert SECRET not in str(info.value)
    assert "  passwrod=******** foo=******** x=********;" in str(info.value)
