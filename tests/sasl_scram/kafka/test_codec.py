"""The wire codec: the spec's byte examples, round trips of every API version, and
arbitrary bytes raising only codec errors."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from sasl_scram.kafka import ADDRESS_API_SPECS
from sasl_scram.kafka import API_SPECS
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ApiSpec
from sasl_scram.kafka import FrameBuffer
from sasl_scram.kafka import KafkaCodecError
from sasl_scram.kafka import MalformedMessage
from sasl_scram.kafka import UnsupportedRequest
from sasl_scram.kafka import api_versions_unsupported_response
from sasl_scram.kafka import decode_request
from sasl_scram.kafka import decode_response
from sasl_scram.kafka import encode_request
from sasl_scram.kafka import encode_response
from sasl_scram.kafka._primitives import Reader
from sasl_scram.kafka._primitives import Writer
from sasl_scram.kafka._schema import STRING
from sasl_scram.kafka._schema import Array
from sasl_scram.kafka._schema import Field
from sasl_scram.kafka._schema import Struct


def hx(text: str) -> bytes:
    return bytes.fromhex(text.replace("|", " ").replace(" ", ""))


class TestSpecByteExamples:
    """docs/kafka-facts.md §9.6; each was accepted by real clients."""

    def test_api_versions_unsupported(self) -> None:
        data = api_versions_unsupported_response(1)
        # The spec's example lists 18: 0-3; we advertise 0-4 (the last byte).
        assert data == hx("00 00 00 10 | 00 00 00 01 | 00 23 | 00 00 00 01 | 00 12 00 00 00 04")

    def test_api_versions_v3_request(self) -> None:
        payload = hx(
            "00 12 00 03 00 00 00 01 00 07 72 64 6b 61 66 6b 61 00 | "
            "0b 6c 69 62 72 64 6b 61 66 6b 61 07 32 2e 31 36 2e 30 00"
        )
        header, _, body = decode_request(payload)
        assert (header.api_key, header.api_version, header.correlation_id) == (18, 3, 1)
        assert header.client_id == "rdkafka"
        assert body == {"client_software_name": "librdkafka", "client_software_version": "2.16.0"}
        assert encode_request(18, 3, 1, "rdkafka", body)[4:] == payload

    def test_api_versions_v3_response_has_no_header_tags(self) -> None:
        body = {
            "error_code": 0,
            "api_keys": [
                {"api_key": 18, "min_version": 0, "max_version": 3},
                {"api_key": 3, "min_version": 0, "max_version": 12},
            ],
            "throttle_time_ms": 0,
        }
        data = encode_response(18, 3, 1, body)
        assert data == hx(
            "00 00 00 1a | 00 00 00 01 | 00 00 03 00 12 00 00 00 03 00 00 03 00 00 00 0c 00 00 00 "
            "00 00 00"
        )
        corr, decoded = decode_response(18, 3, data[4:])
        assert corr == 1 and decoded["api_keys"] == body["api_keys"]

    def test_sasl_handshake_v1_response(self) -> None:
        data = encode_response(17, 1, 2, {"mechanisms": ["SCRAM-SHA-256", "SCRAM-SHA-512"]})
        assert data == hx(
            "00 00 00 28 | 00 00 00 02 | 00 00 00 00 00 02 00 0d 53 43 52 41 4d 2d 53 48 41 2d 32 "
            "35 36 00 0d 53 43 52 41 4d 2d 53 48 41 2d 35 31 32"
        )

    def test_sasl_authenticate_v2_response(self) -> None:
        token = b"r=abc,s=c2FsdA==,i=4096"
        data = encode_response(36, 2, 4, {"auth_bytes": token})
        assert data[:13] == hx("00 00 00 29 | 00 00 00 04 00 | 00 00 00 18")
        assert data[13:36] == token
        assert data[36:] == hx("00 00 00 00 00 00 00 00 | 00")

    def test_metadata_v12_response(self) -> None:
        body = {
            "brokers": [{"node_id": 1, "host": "localhost", "port": 9092}],
            "cluster_id": "A" * 22,
            "controller_id": 1,
            "topics": [],
        }
        assert encode_response(3, 12, 5, body) == hx(
            "00 00 00 3b | 00 00 00 05 00 | 00 00 00 00 | 02 00 00 00 01 0a 6c 6f 63 61 6c 68 6f "
            "73 74 00 00 23 84 00 00 | 17" + " 41" * 22 + " | 00 00 00 01 | 01 | 00"
        )

    def test_metadata_v1_response(self) -> None:
        body = {
            "brokers": [{"node_id": 1, "host": "localhost", "port": 9092}],
            "controller_id": 1,
            "topics": [],
        }
        data = encode_response(3, 1, 5, body)
        # The spec's example body; its size prefix (0x21) miscounts: the body is 37 bytes.
        assert data[4:] == hx(
            "00 00 00 05 | 00 00 00 01 00 00 00 01 00 09 6c 6f 63 61 6c 68 6f 73 74 00 00 23 84 "
            "ff ff | 00 00 00 01 | 00 00 00 00"
        )
        assert data[:4] == (37).to_bytes(4, "big")


class TestPrimitives:
    @pytest.mark.parametrize(
        ("value", "encoded"),
        [
            (0, "00"),
            (1, "01"),
            (127, "7f"),
            (128, "8001"),
            (300, "ac02"),
            (2**32 - 1, "ffffffff0f"),
        ],
    )
    def test_uvarint(self, value: int, encoded: str) -> None:
        w = Writer()
        w.uvarint(value)
        assert w.getvalue() == hx(encoded)
        assert Reader(hx(encoded)).uvarint() == value

    def test_uvarint_too_long(self) -> None:
        with pytest.raises(MalformedMessage):
            Reader(hx("ffffffffff01")).uvarint()

    def test_truncated(self) -> None:
        with pytest.raises(MalformedMessage):
            Reader(b"\x00").int32()

    def test_array_count_beyond_data(self) -> None:
        with pytest.raises(MalformedMessage):
            Reader(hx("7fffffff")).array_length(compact=False)

    def test_non_nullable_null_string(self) -> None:
        spec = API_SPECS[ApiKey.SASL_HANDSHAKE]
        with pytest.raises(MalformedMessage):
            spec.request.read(Reader(hx("ffff")), 1, False)

    @pytest.mark.parametrize("flexible", [False, True])
    def test_a_null_element_of_a_string_array_is_malformed(self, flexible: bool) -> None:
        """Kafka's generated readers refuse a null element in any array of
        strings ("non-nullable field ... element was serialized as null"),
        the array's own nullability aside (found by the front door's fuzzing:
        a KIP-848 heartbeat subscribing to a null topic)."""
        s = Struct(Field("names", Array(STRING), nullable_since=0))
        # One element, null; flexible: compact lengths, then no tagged fields.
        null_element = hx("02 00 00") if flexible else hx("00000001 ffff")
        with pytest.raises(MalformedMessage, match="null element of 'names'"):
            s.read(Reader(null_element), 0, flexible)
        assert s.read(Reader(hx("00 00") if flexible else hx("ffffffff")), 0, flexible) == {
            "names": None
        }

    def test_unknown_tags_skipped_and_order_enforced(self) -> None:
        s = Struct(Field("a", Array(Struct(Field("x", Array(Struct()))))))
        # a=[] then tag section with unknown tag 5 of 2 bytes.
        body = s.read(Reader(hx("01 01 05 02 aa bb")), 0, True)
        assert body == {"a": []}
        with pytest.raises(MalformedMessage):
            s.read(Reader(hx("01 02 05 00 05 00")), 0, True)


class TestFrames:
    def test_split_and_limit(self) -> None:
        buf = FrameBuffer(max_size=10)
        buf.feed(hx("00 00 00 02 aa"))
        assert buf.next_frame() is None
        buf.feed(hx("bb 00 00 00 00"))
        assert buf.next_frame() == hx("aa bb")
        assert buf.next_frame() == b""
        buf.feed(hx("00 00 00 0b"))
        with pytest.raises(MalformedMessage, match="exceeds the limit"):
            buf.next_frame()

    def test_negative_size(self) -> None:
        buf = FrameBuffer(max_size=10)
        buf.feed(hx("ff ff ff ff"))
        with pytest.raises(MalformedMessage):
            buf.next_frame()

    def test_unsupported_request(self) -> None:
        with pytest.raises(UnsupportedRequest) as info:
            decode_request(
                encode_request(3, 13, 7, "c", {})[4:].replace(b"\x00\x0d", b"\x00\x0e", 1)
            )
        assert info.value.api_version == 14
        with pytest.raises(UnsupportedRequest):
            decode_request(hx("00 63 00 00 00 00 00 01 ff ff"))


def sample_value(struct: Struct, version: int, flexible: bool, draw: Any) -> dict[str, Any]:
    """A value for every field present in ``version``."""
    out: dict[str, Any] = {}
    for f in struct.fields:
        if not f.present(version) or (f.tag is not None and not flexible):
            continue
        t = f.type
        if isinstance(t, Array):
            el = t.element
            n = draw(st.integers(0, 2))
            if isinstance(el, Struct):
                out[f.name] = [sample_value(el, version, flexible, draw) for _ in range(n)]
            else:
                out[f.name] = [draw(_primitive(el.name)) for _ in range(n)]
            if f.nullable(version) and draw(st.booleans()):
                out[f.name] = None
        elif isinstance(t, Struct):
            out[f.name] = sample_value(t, version, flexible, draw)
            if f.nullable(version) and draw(st.booleans()):
                out[f.name] = None
        else:
            value = draw(_primitive(t.name))
            if f.nullable(version) and draw(st.booleans()):
                value = None
            out[f.name] = value
    return out


def _primitive(name: str) -> st.SearchStrategy[Any]:
    return {
        "int8": st.integers(-128, 127),
        "int16": st.integers(-(2**15), 2**15 - 1),
        "uint16": st.integers(0, 2**16 - 1),
        "int32": st.integers(-(2**31), 2**31 - 1),
        "int64": st.integers(-(2**63), 2**63 - 1),
        "bool": st.booleans(),
        "uuid": st.binary(min_size=16, max_size=16),
        "string": st.text(max_size=12),
        "bytes": st.binary(max_size=12),
        # Never parsed: any bytes stand for a record batch.
        "records": st.binary(max_size=12),
        # Finite: NaN never equals itself, and Kafka's JSON form has no infinities.
        "float64": st.floats(allow_nan=False, allow_infinity=False),
    }[name]


def assert_contains(expected: Any, actual: Any, path: str = "") -> None:
    """Every value in ``expected`` appears in ``actual``; absent fields decode to defaults."""
    if isinstance(expected, dict):
        for key, value in expected.items():
            assert_contains(value, actual[key], f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), path
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            assert_contains(e, a, f"{path}[{i}]")
    else:
        assert actual == expected, path


def every_version(specs: dict[int, ApiSpec]) -> list[tuple[int, int]]:
    return [
        (key, v)
        for key, spec in specs.items()
        for v in range(spec.min_version, spec.max_version + 1)
    ]


ALL_VERSIONS = every_version(API_SPECS)


@pytest.mark.slow
@pytest.mark.parametrize(("key", "version"), ALL_VERSIONS)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_round_trip_every_api_version(key: int, version: int, data: st.DataObject) -> None:
    spec = API_SPECS[key]
    flexible = spec.flexible(version)
    request = sample_value(spec.request, version, flexible, data.draw)
    header, _, decoded = decode_request(encode_request(key, version, 42, "client", request)[4:])
    assert header.correlation_id == 42
    assert_contains(request, decoded)
    response = sample_value(spec.response, version, flexible, data.draw)
    if key == ApiKey.API_VERSIONS and response.get("error_code") == 35:
        response["error_code"] = 0
    corr, decoded = decode_response(key, version, encode_response(key, version, 42, response)[4:])
    assert corr == 42
    assert_contains(response, decoded)


@settings(max_examples=400)
@given(st.binary(max_size=64))
def test_arbitrary_request_bytes_raise_codec_errors_only(payload: bytes) -> None:
    with contextlib.suppress(KafkaCodecError):
        decode_request(payload)


@settings(max_examples=300)
@given(st.sampled_from(ALL_VERSIONS), st.binary(max_size=64))
def test_arbitrary_response_bytes_raise_codec_errors_only(
    kv: tuple[int, int], payload: bytes
) -> None:
    with contextlib.suppress(KafkaCodecError):
        decode_response(kv[0], kv[1], payload)


@pytest.mark.parametrize("version", [0, 1, 2])
@settings(max_examples=60)
@given(
    error=st.integers(-(2**15), 2**15 - 1),
    message=st.one_of(st.none(), st.text(max_size=40)),
    token=st.binary(max_size=300),
    lifetime=st.integers(-(2**63), 2**63 - 1),
    corr=st.integers(-(2**31), 2**31 - 1),
)
def test_sasl_authenticate_fast_encoder_matches_the_schema(
    version: int, error: int, message: str | None, token: bytes, lifetime: int, corr: int
) -> None:
    from sasl_scram.kafka import encode_sasl_authenticate_response

    body = {
        "error_code": error,
        "error_message": message,
        "auth_bytes": token,
        "session_lifetime_ms": lifetime,
    }
    assert encode_sasl_authenticate_response(
        version, corr, error, message, token, lifetime
    ) == encode_response(36, version, corr, body)


def test_frame_response_matches_encode_response() -> None:
    from sasl_scram.kafka import encode_body
    from sasl_scram.kafka import frame_response

    for key, version in ALL_VERSIONS:
        body: dict[str, Any] = {}
        assert frame_response(key, version, 7, encode_body(key, version, body)) == encode_response(
            key, version, 7, body
        )


def _outcome(read: Any, payload: bytes) -> tuple[Any, ...]:
    try:
        header, reader = read(payload)
    except MalformedMessage as exc:
        return ("error", str(exc))
    return ("ok", header, reader.pos)


_HEADERS = st.builds(
    lambda key, version, corr, n, tail: (
        key.to_bytes(2, "big", signed=True)
        + version.to_bytes(2, "big", signed=True)
        + corr.to_bytes(4, "big", signed=True)
        + n.to_bytes(2, "big", signed=True)
        + tail
    ),
    st.integers(-(2**15), 2**15 - 1),
    st.integers(-(2**15), 2**15 - 1),
    st.integers(-(2**31), 2**31 - 1),
    st.integers(-3, 24),
    st.binary(max_size=24) | st.text(max_size=12).map(str.encode),
)


@given(_HEADERS | st.binary(max_size=16))
def test_fast_request_header_reads_exactly_like_the_general_reader(payload: bytes) -> None:
    from sasl_scram.kafka._codec import _read_request_header
    from sasl_scram.kafka._codec import decode_request_header

    assert _outcome(decode_request_header, payload) == _outcome(_read_request_header, payload)


@given(st.sampled_from([0, 1]), st.integers(-3, 12), st.binary(max_size=16))
def test_fast_sasl_handshake_body_matches_the_schema_reader(
    version: int, n: int, tail: bytes
) -> None:
    header = encode_request(ApiKey.SASL_HANDSHAKE, version, 7, "c", {"mechanism": ""})[4:-2]
    payload = header + n.to_bytes(2, "big", signed=True) + tail
    spec = API_SPECS[ApiKey.SASL_HANDSHAKE]

    def general() -> Any:
        reader = Reader(payload, len(header))
        return spec.request.read(reader, version, False)

    assert _result_or_error(lambda: decode_request(payload)[2]) == _result_or_error(general)


@settings(max_examples=150)
@given(
    key_version=st.sampled_from([(17, 0), (17, 1), (36, 0), (36, 1), (36, 2), (17, 2), (36, 3)]),
    corr=st.integers(-(2**31) - 2, 2**31 + 1),
    client_id=st.one_of(st.none(), st.text(max_size=20), st.just("c" * 40000)),
    mechanism=st.one_of(st.text(max_size=30), st.none(), st.just(b"raw")),
    token=st.one_of(st.binary(max_size=300), st.none(), st.just("text")),
)
def test_fast_sasl_request_encoder_matches_the_schema_writer(
    key_version: tuple[int, int],
    corr: int,
    client_id: str | None,
    mechanism: Any,
    token: Any,
) -> None:
    from sasl_scram.kafka._codec import _write_request

    key, version = key_version
    body = {"mechanism": mechanism} if key == 17 else {"auth_bytes": token}

    def outcome(write: Any) -> Any:
        try:
            return ("ok", write(key, version, corr, client_id, body))
        except Exception as exc:  # the same failure, whichever path wrote
            return ("error", type(exc).__name__)

    assert outcome(encode_request) == outcome(_write_request)


def _replace_byte(data: bytes, index: int, value: int) -> bytes:
    if not data:
        return data
    index %= len(data)
    return data[:index] + bytes([value]) + data[index + 1 :]


_AUTH_RESPONSES = st.builds(
    lambda version, corr, error, message, token, lifetime: (
        version,
        encode_response(
            36,
            version,
            corr,
            {
                "error_code": error,
                "error_message": message,
                "auth_bytes": token,
                "session_lifetime_ms": lifetime,
            },
        )[4:],
    ),
    st.sampled_from([0, 1, 2]),
    st.integers(-(2**31), 2**31 - 1),
    st.integers(-(2**15), 2**15 - 1),
    st.one_of(st.none(), st.text(max_size=10)),
    st.binary(max_size=400),
    st.integers(-(2**63), 2**63 - 1),
)


@settings(max_examples=300)
@given(
    st.one_of(
        _AUTH_RESPONSES,
        # Damaged answers: cut short, or a byte changed, near either end.
        st.tuples(_AUTH_RESPONSES, st.integers(1, 12)).map(lambda t: (t[0][0], t[0][1][: -t[1]])),
        st.tuples(_AUTH_RESPONSES, st.integers(-12, 12), st.integers(0, 255)).map(
            lambda t: (t[0][0], _replace_byte(t[0][1], t[1], t[2]))
        ),
        st.tuples(st.sampled_from([0, 1, 2, 3]), st.binary(max_size=40)),
    )
)
def test_fast_sasl_authenticate_response_reads_like_the_general_reader(
    case: tuple[int, bytes],
) -> None:
    from sasl_scram.kafka._codec import _read_response

    version, payload = case

    def outcome(read: Any) -> Any:
        try:
            return ("ok", read(36, version, payload))
        except (MalformedMessage, KeyError, ValueError) as exc:
            return ("error", type(exc).__name__, str(exc))

    assert outcome(decode_response) == outcome(_read_response)


_AUTH_REQUESTS = st.builds(
    lambda version, corr, client_id, token: encode_request(
        36, version, corr, client_id, {"auth_bytes": token}
    )[4:],
    st.sampled_from([0, 1, 2]),
    st.integers(-(2**31), 2**31 - 1),
    st.one_of(st.none(), st.text(max_size=8)),
    st.binary(max_size=400),
)


@settings(max_examples=300)
@given(
    st.one_of(
        _AUTH_REQUESTS,
        st.tuples(_AUTH_REQUESTS, st.integers(1, 12)).map(lambda t: t[0][: -t[1]]),
        st.tuples(_AUTH_REQUESTS, st.integers(-14, 14), st.integers(0, 255)).map(
            lambda t: _replace_byte(t[0], t[1], t[2])
        ),
        # Another version number in front of a valid body.
        st.tuples(_AUTH_REQUESTS, st.integers(-1, 4)).map(
            lambda t: t[0][:2] + t[1].to_bytes(2, "big", signed=True) + t[0][4:]
        ),
    )
)
def test_fast_sasl_authenticate_request_reads_like_the_general_reader(payload: bytes) -> None:
    from sasl_scram.kafka._codec import _read_request
    from sasl_scram.kafka._codec import _read_request_header

    def outcome(read: Any) -> Any:
        try:
            header, spec, body = read(payload)
        except (MalformedMessage, UnsupportedRequest) as exc:
            return ("error", type(exc).__name__, str(exc))
        return ("ok", header, spec, body)

    assert outcome(decode_request) == outcome(
        lambda data: _read_request(*_read_request_header(data))
    )


@settings(max_examples=300)
@given(
    version=st.sampled_from([3, 4]),
    header_tags=st.sampled_from([b"\x00", b"\x01\x00\x00", b""]),
    name=st.text(max_size=20).map(str.encode) | st.binary(max_size=6),
    software_version=st.text(max_size=20).map(str.encode),
    name_len=st.integers(-1, 3),
    tail=st.sampled_from([b"\x00", b"", b"\x01\x00\x01\x05", b"\x00junk"]),
)
def test_fast_api_versions_body_matches_the_schema_reader(
    version: int,
    header_tags: bytes,
    name: bytes,
    software_version: bytes,
    name_len: int,
    tail: bytes,
) -> None:
    """ApiVersions v3+ is read directly; the general reader is the reference."""
    from sasl_scram.kafka._codec import _read_request
    from sasl_scram.kafka._codec import decode_request_header

    head = encode_request(ApiKey.API_VERSIONS, version, 7, "c", {})[4:]
    head = head[: len(head) - 4] + header_tags  # the header before its tags
    encoded_len = len(name) + 1 if name_len == 3 else name_len + 1
    payload = (
        head
        + bytes([encoded_len])
        + name
        + bytes([len(software_version) + 1])
        + software_version
        + tail
    )

    def general() -> Any:
        header, reader = decode_request_header(payload)
        return _read_request(header, reader)[2]

    assert _result_or_error(lambda: decode_request(payload)[2]) == _result_or_error(general)


def _result_or_error(read: Callable[[], Any]) -> Any:
    """What a reader returns, or ("error", its message): both paths must agree on either."""
    try:
        return read()
    except MalformedMessage as exc:
        return ("error", str(exc))


@pytest.mark.parametrize("size", [0, 1, 125, 126, 127, 128, 200])
@pytest.mark.parametrize("message", [None, "bad"])
def test_sasl_authenticate_v2_encoder_at_the_one_byte_varint_boundary(
    size: int, message: str | None
) -> None:
    """The direct v2 encoder's short-token case ends where a length needs two varint bytes."""
    from sasl_scram.kafka import encode_sasl_authenticate_response

    token = bytes(range(256))[:size]
    body = {"error_code": 0, "error_message": message, "auth_bytes": token}
    body["session_lifetime_ms"] = 3_600_000
    assert encode_sasl_authenticate_response(2, 9, 0, message, token, 3_600_000) == encode_response(
        36, 2, 9, body
    )


@given(
    chunks=st.lists(st.binary(max_size=12), max_size=4),
    data=st.binary(max_size=12)
    | st.binary(max_size=40).map(lambda b: len(b).to_bytes(4, "big") + b),
    max_size=st.integers(0, 64),
)
def test_whole_frame_shortcut_agrees_with_feeding(
    chunks: list[bytes], data: bytes, max_size: int
) -> None:
    """``FrameBuffer.whole`` gives a payload only where feeding and reading gives the
    same payload and leaves nothing behind; otherwise it changes nothing."""
    shortcut, reference = FrameBuffer(max_size), FrameBuffer(max_size)
    for chunk in chunks:
        shortcut.feed(chunk)
        reference.feed(chunk)
    before = len(shortcut)
    payload = shortcut.whole(data)
    assert len(shortcut) == before
    if payload is not None:
        reference.feed(data)
        assert reference.next_frame() == payload
        assert len(reference) == 0


def test_whole_frame_shortcut_takes_one_whole_frame_and_only_that() -> None:
    assert FrameBuffer(100).whole(b"\x00\x00\x00\x02hi") == b"hi"
    assert FrameBuffer(1).whole(b"\x00\x00\x00\x02hi") is None  # over the limit
    assert FrameBuffer(100).whole(b"\x00\x00\x00\x02hi!") is None  # more than one frame
    assert FrameBuffer(100).whole(b"\x00\x00\x00\x03hi") is None  # a partial frame
    buffered = FrameBuffer(100)
    buffered.feed(b"\x00")
    assert buffered.whole(b"\x00\x00\x00\x02hi") is None  # bytes before it


@pytest.mark.slow
@pytest.mark.parametrize(("key", "version"), every_version(ADDRESS_API_SPECS))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_address_responses_round_trip_byte_for_byte(
    key: int, version: int, data: st.DataObject
) -> None:
    spec = ADDRESS_API_SPECS[key]
    response = sample_value(spec.response, version, spec.flexible(version), data.draw)
    body = spec.write_response_body(version, response)
    header = b"\x00\x00\x00\x2a" + (b"\x00" if spec.response_header_version(version) else b"")
    start, decoded, end = spec.read_response_body(version, header + body)
    assert (start, end) == (len(header), len(header) + len(body))
    assert_contains(response, decoded)
    assert spec.write_response_body(version, decoded) == body


@pytest.mark.parametrize("key", [ApiKey.FIND_COORDINATOR, ApiKey.DESCRIBE_CLUSTER])
def test_address_apis_stay_unknown_to_the_request_decoder(key: ApiKey) -> None:
    # The endpoint answers neither: like any API it does not serve, the
    # request is refused as unsupported (and the connection closed).
    payload = b"".join(
        (key.to_bytes(2, "big"), b"\x00\x00", b"\x00\x00\x00\x07", b"\x00\x01c", b"\x00")
    )
    with pytest.raises(UnsupportedRequest):
        decode_request(payload)
