"""Hypothesis: rendering then parsing gives the model back; parsers fail only with JaasError."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import jaas

texts = st.text(max_size=12)
entries = st.builds(
    jaas.LoginModuleEntry,
    module=st.text(min_size=1, max_size=12),
    flag=st.sampled_from(jaas.ControlFlag),
    options=st.dictionaries(texts, texts, max_size=4),
    null_key_value=st.none() | texts,
)
file_entries = st.builds(
    jaas.LoginModuleEntry,
    module=st.text(min_size=1, max_size=12),
    flag=st.sampled_from(jaas.ControlFlag),
    options=st.dictionaries(texts, texts.filter(lambda v: "${" not in v), max_size=4),
)
contexts = st.builds(
    jaas.Context, name=st.none() | texts, entries=st.lists(file_entries, max_size=3).map(tuple)
)
configurations = st.lists(contexts, max_size=4, unique_by=lambda c: c.name).map(
    lambda cs: jaas.Configuration(tuple(cs))
)


@pytest.mark.slow
@settings(max_examples=300)
@given(st.lists(entries, min_size=1, max_size=3))
def test_property_round_trip(values: list[jaas.LoginModuleEntry]) -> None:
    rendered = jaas.render_property(values)
    assert list(jaas.parse_property(rendered).entries) == values


@pytest.mark.slow
@settings(max_examples=300)
@given(configurations)
def test_file_round_trip(config: jaas.Configuration) -> None:
    assert jaas.parse_file(jaas.render_file(config)) == config
    # With expansion on, values without "${" are unchanged too.
    assert jaas.parse_file(jaas.render_file(config), expand_properties={}) == config


@pytest.mark.slow
@settings(max_examples=200)
@given(st.text(max_size=20), st.text(max_size=20))
def test_scram_lines_round_trip(username: str, password: str) -> None:
    entry = jaas.parse_property(jaas.scram_login_line(username, password)).entries[0]
    creds = jaas.ScramLoginCredentials.from_entry(entry)
    assert (creds.username, creds.password, creds.token_auth) == (username, password, False)
    token = jaas.parse_property(jaas.scram_token_login_line(username, password)).entries[0]
    creds = jaas.ScramLoginCredentials.from_entry(token)
    assert (creds.username, creds.password, creds.token_auth) == (username, password, True)
    assert jaas.parse_property(creds.login_line()).entries[0] == token


@pytest.mark.slow
@settings(max_examples=500)
@given(st.text(alphabet=st.sampled_from(list("ab3 =;\"'\\/*{}\n\r-.$é")), max_size=40))
def test_parsers_raise_only_jaas_errors(text: str) -> None:
    for parse in (jaas.parse_property, jaas.parse_file):
        try:
            parse(text)
        except jaas.JaasSyntaxError as exc:
            assert exc.line >= 1 and exc.column >= 1
            assert str(exc).count("\n") == 2
