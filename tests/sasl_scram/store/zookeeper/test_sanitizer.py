from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sasl_scram.store import SanitizerError, desanitize, sanitize
from sasl_scram.store.zookeeper._format import notification_user

# Kafka's Sanitizer (URLEncoder), verified against the JDK.
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


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",))))
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


def test_notification_parsing() -> None:
    assert notification_user(b'{"version":2,"entity_path":"users/a%20b"}') == "a%20b"
    assert notification_user(b'{"version":2,"entity_path":"users/a/clients/c"}') is None
    assert notification_user(b'{"version":2,"entity_path":"topics/t"}') is None
    assert notification_user(b'{"version":1,"entity_type":"clients","entity_name":"c"}') is None
