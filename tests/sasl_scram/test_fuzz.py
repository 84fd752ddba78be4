"""Hypothesis: arbitrary bytes and arbitrary call orders only ever raise our own errors."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from sasl_scram import SCRAM_SHA_256
from sasl_scram import ClientFinalMessage
from sasl_scram import ClientFirstMessage
from sasl_scram import Grant
from sasl_scram import ScramClient
from sasl_scram import ScramCredential
from sasl_scram import ScramError
from sasl_scram import ScramServer
from sasl_scram import ServerFinalMessage
from sasl_scram import ServerFirstMessage
from sasl_scram import escape_username
from sasl_scram import java_b64decode
from sasl_scram import unescape_username
from sasl_scram._b64 import Base64Error

CRED = ScramCredential.from_password(SCRAM_SHA_256, "pw", salt=b"fixed-salt-1234")

# Bytes that look like SCRAM: attribute-ish fragments mixed with noise.
fragments = st.sampled_from(
    [
        b"n,",
        b",",
        b"n=",
        b"r=",
        b"s=",
        b"i=",
        b"c=",
        b"p=",
        b"v=",
        b"e=",
        b"a=",
        b"m=",
        b"=2C",
        b"=3D",
        b"biws",
        b"4096",
        b"QUJD",
        b"==",
        b"tokenauth=true",
        b"\xff",
        b"\x00",
        b"y,",
    ]
)
scramish = st.one_of(
    st.binary(max_size=80),
    st.lists(st.one_of(fragments, st.binary(max_size=4)), max_size=16).map(b"".join),
)

PARSERS: list[Callable[[bytes], object]] = [
    ClientFirstMessage.parse,
    ServerFirstMessage.parse,
    ClientFinalMessage.parse,
    ServerFinalMessage.parse,
]


@pytest.mark.slow
@settings(max_examples=300)
@given(scramish)
def test_parsers_raise_only_scram_errors(data: bytes) -> None:
    for parse in PARSERS:
        with contextlib.suppress(ScramError):
            parse(data)


@settings(max_examples=200)
@given(st.text(max_size=20))
def test_escape_round_trip(name: str) -> None:
    assert unescape_username(escape_username(name)) == name


@settings(max_examples=300)
@given(st.binary(max_size=40))
def test_java_b64_round_trip(data: bytes) -> None:
    import base64

    assert java_b64decode(base64.b64encode(data)) == data
    assert java_b64decode(base64.b64encode(data).rstrip(b"=")) == data


@pytest.mark.slow
@settings(max_examples=300)
@given(st.text(max_size=12))
def test_java_b64_errors_are_typed(text: str) -> None:
    with contextlib.suppress(Base64Error):
        java_b64decode(text)


@settings(max_examples=200)
@given(st.text(max_size=120))
def test_credential_parser_raises_only_scram_errors(text: str) -> None:
    with contextlib.suppress(ScramError):
        ScramCredential.from_kafka_string(text)


server_calls = st.lists(
    st.tuples(st.sampled_from(["first", "provide", "final", "step", "session"]), scramish),
    max_size=6,
)


@pytest.mark.slow
@settings(max_examples=300)
@given(server_calls, st.booleans())
def test_server_any_call_order(calls: list[tuple[str, bytes]], grant: bool) -> None:
    server = ScramServer(SCRAM_SHA_256, lookup=lambda r: Grant.of(CRED) if grant else None)
    for op, data in calls:
        try:
            if op == "first":
                server.receive_client_first(data)
            elif op == "provide":
                server.provide(Grant.of(CRED) if grant else None)
            elif op == "final":
                server.receive_client_final(data)
            elif op == "step":
                server.step(data)
            else:
                _ = server.session
        except ScramError:
            pass
    # Whatever happened, a completed server only ever holds a verified session. Random
    # bytes almost never get that far: test_mutated_exchanges.py drives the server from
    # valid exchanges with one field changed, and checks when it completes.
    if server.complete:
        assert server.session.username


client_calls = st.lists(
    st.tuples(st.sampled_from(["first", "server_first", "server_final", "step"]), scramish),
    max_size=6,
)


@pytest.mark.slow
@settings(max_examples=300)
@given(client_calls)
def test_client_any_call_order(calls: list[tuple[str, bytes]]) -> None:
    client = ScramClient(SCRAM_SHA_256, "u", "pw", nonce_factory=lambda: "n", key_cache=None)
    for op, data in calls:
        try:
            if op == "first":
                client.client_first()
            elif op == "server_first":
                client.receive_server_first(data)
            elif op == "server_final":
                client.receive_server_final(data)
            else:
                client.step(data)
        except ScramError:
            pass
    # Random bytes can never forge a server signature.
    assert not client.complete


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=127), min_size=1, max_size=16))
def test_any_ascii_username_authenticates(user: str) -> None:
    server = ScramServer(
        SCRAM_SHA_256, lookup=lambda r: Grant.of(CRED) if r.username == user else None
    )
    client = ScramClient(SCRAM_SHA_256, user, "pw")
    s1 = server.step(client.client_first())
    client.receive_server_final(server.step(client.receive_server_first(s1)))
    assert client.complete and server.session.username == user


@pytest.mark.slow
@settings(max_examples=500)
@given(scramish)
def test_server_fast_client_final_split_agrees_with_parser(data: bytes) -> None:
    from sasl_scram._messages import split_client_final

    try:
        full = ClientFinalMessage.parse(data)
    except ScramError:
        full = None
    try:
        fast = split_client_final(data)
    except ScramError:
        fast = None
    if full is None:
        assert fast is None
    else:
        assert fast == (full.nonce, full.proof, full.without_proof)


@pytest.mark.slow
@settings(max_examples=1000)
@given(st.text(alphabet="AQYRab09+/=-_ \n", max_size=14))
def test_java_b64_fast_path_agrees_with_the_careful_rules(text: str) -> None:
    from sasl_scram._b64 import _careful_decode

    try:
        expected: bytes | None = _careful_decode(text.encode())
    except Base64Error:
        expected = None
    try:
        got: bytes | None = java_b64decode(text)
    except Base64Error:
        got = None
    assert got == expected


@pytest.mark.slow
@settings(max_examples=2000)
@given(st.text(alphabet="AQb9+/=,é -_", max_size=13))
def test_decode_padded_accepts_exactly_kafkas_base64_pattern(text: str) -> None:
    import base64
    import re

    from sasl_scram._b64 import decode_padded
    from sasl_scram._messages import _BASE64

    matches = re.fullmatch(_BASE64, text) is not None
    decoded = decode_padded(text)
    assert (decoded is not None) == matches
    if matches:
        assert decoded == base64.b64decode(text)
