"""``.properties`` files read as Kafka reads them, checked against Kafka itself.

Kafka's broker and tools load a ``.properties`` file with
``Utils.loadProps``: ``java.util.Properties.load(InputStream)`` on the file's
bytes, each byte one ISO-8859-1 character. ``tests/java/PropertiesHarness.java``
runs exactly that on the same bytes, and the keys and values must be equal.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from sasl_scram._errors import ScramConfigError
from sasl_scram.config import format_properties
from sasl_scram.config import parse_properties
from sasl_scram.config import read_properties
from tests.support.javaharness import JavaHarness
from tests.support.javaharness import b64
from tests.support.javaharness import unb64


@pytest.fixture(scope="module")
def java_properties() -> Iterator[JavaHarness]:
    harness = JavaHarness("PropertiesHarness")
    yield harness
    harness.close()


def _java(harness: JavaHarness, data: bytes) -> dict[bytes, bytes] | None:
    """Kafka's keys and values (UTF-16BE code units), or None when it refuses the file."""
    fields = harness.call("load", b64(data))
    if fields[0] == "err":
        assert "Malformed \\uxxxx encoding" in unb64(fields[1]).decode(), unb64(fields[1])
        return None
    assert fields[0] == "ok", fields
    pairs = fields[2:]
    return {unb64(pairs[i]): unb64(pairs[i + 1]) for i in range(0, len(pairs), 2)}


def _ours(data: bytes) -> dict[bytes, bytes] | None:
    try:
        props = parse_properties(data, "generated.properties")
    except ScramConfigError:
        return None

    def units(s: str) -> bytes:
        return s.encode("utf-16-be", "surrogatepass")

    return {units(k): units(v) for k, v in props.items()}


# Pieces a generated file is made of: every separator, escape, line ending and
# continuation Java's LineReader and loadConvert treat specially, and bytes that
# are line breaks to Python's str.splitlines but not to Java (0x0b, 0x1c, 0x85).
PIECES = [
    b"key",
    b"a.b",
    b"v",
    b"x y",
    b"=",
    b":",
    b" ",
    b"\t",
    b"\f",
    b" = ",
    b"\t:\t",
    b"==",
    b"\n",
    b"\r",
    b"\r\n",
    b"\n\n",
    b"\\\n",
    b"\\\r\n",
    b"\\\r",
    b"\\\n   ",
    b"\\\\\n",
    b"\\",
    b"\\\\",
    b"\\\\\\",
    b"\\ ",
    b"\\=",
    b"\\:",
    b"\\#",
    b"\\t",
    b"\\n",
    b"\\r",
    b"\\f",
    b"\\b",
    b"\\x",
    b"\\u00e9",
    b"\\u00E9",
    b"\\uD83D\\uDE00",
    b"\\uDE00",
    b"\\u12",
    b"\\u12g4",
    b"#",
    b"!",
    b"# comment",
    b"  # indented comment",
    b"! bang \\",
    b"\xe9",
    b"\xa0",
    b"\x85",
    b"\x0b",
    b"\x1c",
    b"\xff",
    b"\xc3\xa9",
    b"\xe2\x82\xac",
    b"\x00",
]


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES) | st.binary(max_size=3), max_size=40).map(b"".join))
@example(b"# caf\xe9\nlisteners=SASL_PLAINTEXT://127.0.0.1:9092\n")
@example(b"key=caf\xc3\xa9\n")
@example(b"a\\\n# not a comment\nb=\\\n\n c")
@example(b"\\\n#comment after an empty continued line\nk=v")
@example(b"k=v\\")
@example(b"k\x85v\x0bw\n")
def test_same_keys_and_values_as_kafka(java_properties: JavaHarness, data: bytes) -> None:
    assert _ours(data) == _java(java_properties, data)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(), st.text(), max_size=4))
def test_written_files_read_back_the_same_in_kafka(
    java_properties: JavaHarness, values: dict[str, str]
) -> None:
    data = format_properties(values).encode("ascii")

    def units(s: str) -> bytes:
        return s.encode("utf-16-be", "surrogatepass")

    expected = {units(k): units(v) for k, v in values.items()}
    assert _java(java_properties, data) == expected
    assert _ours(data) == expected


def test_iso_8859_1_bytes_are_characters() -> None:
    props = parse_properties(b"# caf\xe9\nname=caf\xe9\n", "server.properties")
    assert props == {"name": "caf\xe9"}


def test_utf8_text_is_read_as_kafka_reads_it_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "client.properties"
    path.write_bytes('# ok\nsasl.jaas.config=x password="pässword";\n'.encode())
    with caplog.at_level(logging.WARNING):
        props = read_properties(path)
    # What Kafka's Java client would use: the two ISO-8859-1 characters of ä's UTF-8.
    assert props["sasl.jaas.config"] == 'x password="p\xc3\xa4ssword";'
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert f"{path}:2" in warnings[0]
    assert "\\u00e4" in warnings[0] or "\\uXXXX" in warnings[0]
    assert "pässword" not in warnings[0] and "p\xc3\xa4ss" not in warnings[0]


def test_a_malformed_escape_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "server.properties"
    path.write_bytes(b"a=1\nb=\\u12\n")
    with pytest.raises(ScramConfigError, match=rf"^{path}:2: malformed \\uXXXX escape"):
        read_properties(path)


def test_an_unreadable_file_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(ScramConfigError, match=r"cannot read .*missing.properties: No such file"):
        read_properties(tmp_path / "missing.properties")
