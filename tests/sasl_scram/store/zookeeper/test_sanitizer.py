from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from sasl_scram.store import SanitizerError
from sasl_scram.store import desanitize
from sasl_scram.store import sanitize
from sasl_scram.store.zookeeper._format import notification_user
from tests.support.javaharness import JavaHarness
from tests.support.javaharness import b64
from tests.support.javaharness import unb64

# docs/kafka-facts.md §5.2, verified against the JDK.
VECTORS = [
    ("alice", "alice"),
    ("User:alice", "User%3Aalice"),
    ("a b", "a%20b"),
    ("a*b", "a%2Ab"),
    ("a+b", "a%2Bb"),
    ("~", "%7E"),
    ("é", "%C3%A9"),
    ("<default>", "%3Cdefault%3E"),
    (
        "CN=Some characters !@#$%&*()_-+=';:,/~",
        "CN%3DSome%20characters%20%21%40%23%24%25%26%2A%28%29_-%2B%3D%27%3B%3A%2C%2F%7E",
    ),
]


@pytest.mark.parametrize(("name", "sanitized"), VECTORS)
def test_kafka_vectors(name: str, sanitized: str) -> None:
    assert sanitize(name) == sanitized
    assert desanitize(sanitized) == name


@given(st.text(alphabet=st.characters(exclude_categories=["Cs"])))
def test_round_trip_and_alphabet(name: str) -> None:
    encoded = sanitize(name)
    assert all(c.isascii() and (c.isalnum() or c in "._-%") for c in encoded)
    assert desanitize(encoded) == name


def test_desanitize_is_java_urldecoder() -> None:
    assert desanitize("a+b") == "a b"
    assert desanitize("%E2") == "\ufffd"
    with pytest.raises(SanitizerError, match="Incomplete trailing escape"):
        desanitize("a%4")
    with pytest.raises(SanitizerError, match="Illegal hex characters"):
        desanitize("a%zzb")
    with pytest.raises(SanitizerError):
        sanitize("\ud800")
    # Integer.parseInt reads each escape: a sign and any Unicode digit are hex to it.
    assert desanitize("%+1%-0") == "\x01\x00"
    assert desanitize("%\u0664\u0661%\uff14\uff41") == "AJ"
    with pytest.raises(SanitizerError, match="Illegal hex characters"):
        desanitize("%-1")


def test_notification_parsing() -> None:
    assert notification_user(b'{"version":2,"entity_path":"users/a%20b"}') == "a%20b"
    assert notification_user(b'{"version":2,"entity_path":"users/a/clients/c"}') is None
    assert notification_user(b'{"version":2,"entity_path":"topics/t"}') is None
    assert notification_user(b'{"version":1,"entity_type":"clients","entity_name":"c"}') is None


# Names as users type them, and as anything may: the characters URLEncoder and
# Kafka treat specially beside any other Unicode (Java cannot encode a lone surrogate).
_SPECIAL = st.sampled_from([*"*%+ @~.-_=:/,;&?#!'\"<>", "\u00e9", "\u2028", "\U0001f600"])
NAMES = st.lists(st.one_of(_SPECIAL, st.characters(exclude_categories=["Cs"])), max_size=24).map(
    "".join
)
# znode names: escapes well and badly formed, invalid UTF-8 byte runs, and "+". The odd
# escapes test Java's Integer.parseInt(s, i + 1, i + 3, 16): a sign, Unicode digits
# (ARABIC-INDIC ONE) and fullwidth letters are hex to it.
_ODD_ESCAPES = ["%+1", "%-1", "%-0", "%+f", "% 1", "%\u0661\u0661", "%\uff21\uff46", "%1\uff47"]
_ESCAPES = st.one_of(
    st.integers(0, 255).map(lambda b: f"%{b:02X}"),
    st.integers(0, 255).map(lambda b: f"%{b:02x}"),
    st.sampled_from(["%", "%4", "%zz", "+", "a", "\u00e9", *_ODD_ESCAPES]),
)
ZNODE_NAMES = st.one_of(NAMES.map(sanitize), st.lists(_ESCAPES, max_size=12).map("".join))


def _ours(function: Callable[[str], str], name: str) -> str | None:
    try:
        return function(name)
    except SanitizerError:
        return None


def _kafkas(kafka_java: JavaHarness, command: str, name: str) -> str | None:
    status, value = kafka_java.call(command, b64(name))
    return unb64(value).decode("utf-8") if status == "ok" else None


@settings(max_examples=300, deadline=None)
@given(NAMES)
def test_sanitize_is_kafkas_sanitizer(kafka_java: JavaHarness, name: str) -> None:
    """``org.apache.kafka.common.utils.Sanitizer.sanitize`` on the same name."""
    assert sanitize(name) == _kafkas(kafka_java, "sanitize", name)


# Invalid UTF-8 runs where Java's String(bytes, UTF_8) and Python's "replace" differ
# in how many U+FFFD they give: encoded surrogates, truncated and overlong sequences.
@example("%ED%A0")
@example("%ED%A0%80")
@example("%ED%BF%BFa")
@example("%E0%80%80")
@example("%F0%90%80")
@example("%F0%90%80%41")
@example("%F4%90%80%80")
@example("%F5%80")
@example("%C0%80%C2")
@settings(max_examples=300, deadline=None)
@given(ZNODE_NAMES)
def test_desanitize_is_kafkas_sanitizer(kafka_java: JavaHarness, name: str) -> None:
    """``Sanitizer.desanitize``: the same name, or both refuse it."""
    assert _ours(desanitize, name) == _kafkas(kafka_java, "desanitize", name)
