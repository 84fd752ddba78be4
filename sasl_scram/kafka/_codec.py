"""Frames and headers: the entry points of the wire codec (sans-IO).

A frame is an int32 size then that many bytes (docs/kafka-facts.md §9.1). The
request header's client id is always the classic int16 string, even in header
v2, so it can be read before the API version is known to be supported.
"""

from __future__ import annotations

import struct
from typing import Any
from typing import Final

from sasl_scram.kafka._apis import ADDRESS_API_SPECS
from sasl_scram.kafka._apis import API_SPECS
from sasl_scram.kafka._apis import ApiKey
from sasl_scram.kafka._apis import ApiSpec
from sasl_scram.kafka._errors import ErrorCode
from sasl_scram.kafka._errors import MalformedMessage
from sasl_scram.kafka._errors import UnsupportedRequest
from sasl_scram.kafka._primitives import Reader
from sasl_scram.kafka._primitives import Writer

_SIZE = struct.Struct(">i")
_I16 = struct.Struct(">h")
_I64 = struct.Struct(">q")
_ONE_BYTE = [bytes([i]) for i in range(0x80)]
_HEADER = struct.Struct(">hhih")  # api key, version, correlation id, client id length
_REQUEST_HEAD = struct.Struct(">ihhih")  # frame size, then _HEADER
# SaslAuthenticate v0/v1 answer: correlation id, error, message length, token length.
_AUTH_V0_HEAD = struct.Struct(">ihhi")
Body = dict[str, Any]
_SASL_AUTHENTICATE_SPEC = API_SPECS[ApiKey.SASL_AUTHENTICATE]
_API_VERSIONS_SPEC = API_SPECS[ApiKey.API_VERSIONS]
_SASL_HANDSHAKE_SPEC = API_SPECS[ApiKey.SASL_HANDSHAKE]
# SaslAuthenticate v2's usual answer up to the token: frame size, correlation
# id, header tags, error, null message, token length (one varint byte); after
# the token: session lifetime, body tags.
_AUTH_V2_HEAD = struct.Struct(">iiBhBB")
_AUTH_V2_TAIL = struct.Struct(">qB")


def frame(payload: bytes) -> bytes:
    return _SIZE.pack(len(payload)) + payload


class FrameBuffer:
    """Splits a byte stream into frames, refusing any frame above ``max_size``.

    The size check happens on the 4-byte prefix, before any of the frame is
    buffered, so an announced 2 GB frame costs nothing (Kafka's
    ``sasl.server.max.receive.size`` / ``socket.request.max.bytes``).
    """

    __slots__ = ("_buf", "max_size")

    def __init__(self, max_size: int) -> None:
        self._buf = bytearray()
        self.max_size = max_size

    def __len__(self) -> int:
        return len(self._buf)

    def feed(self, data: bytes) -> None:
        self._buf += data

    def missing(self) -> int:
        """Bytes still to come before the first buffered frame is whole (at least
        1 while fewer than the 4 size bytes are here; 0 once it is whole)."""
        buf = self._buf
        if len(buf) < 4:
            return 4 - len(buf)
        size: int = _SIZE.unpack_from(buf)[0]
        return max(4 + size - len(buf), 0)

    def whole(self, data: bytes) -> bytes | None:
        """The payload of ``data`` when nothing is buffered and ``data`` is exactly
        one frame within the limit (how requests usually arrive), without
        buffering; otherwise ``None``, and the caller feeds ``data`` instead."""
        if self._buf or len(data) < 4:
            return None
        (size,) = _SIZE.unpack_from(data)
        if size != len(data) - 4 or size > self.max_size:
            return None
        return data[4:]

    def take(self) -> bytes:
        """Everything buffered, whole frames or not; the buffer is left empty."""
        data = bytes(self._buf)
        self._buf.clear()
        return data

    def next_frame(self) -> bytes | None:
        buf = self._buf
        if len(buf) < 4:
            return None
        (size,) = _SIZE.unpack_from(buf)
        if size < 0 or size > self.max_size:
            raise MalformedMessage(f"frame of {size} bytes exceeds the limit of {self.max_size}")
        end = 4 + size
        if len(buf) < end:
            return None
        payload = bytes(buf[4:end])
        del buf[:end]
        return payload


class RequestHeader:
    """Request header v1/v2 fields, read-only.

    A slotted class: four are built per login, and it is built in one step
    (about 20 ns compiled), where a named tuple's ``__new__`` runs as Python
    code (85 ns) and a frozen dataclass sets each field through
    ``object.__setattr__``.
    """

    __slots__ = ("api_key", "api_version", "client_id", "correlation_id")

    def __init__(
        self, api_key: int, api_version: int, correlation_id: int, client_id: str | None
    ) -> None:
        self.api_key: Final[int] = api_key
        self.api_version: Final[int] = api_version
        self.correlation_id: Final[int] = correlation_id
        self.client_id: Final[str | None] = client_id

    def _key(self) -> tuple[int, int, int, str | None]:
        return (self.api_key, self.api_version, self.correlation_id, self.client_id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RequestHeader) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"RequestHeader(api_key={self.api_key}, api_version={self.api_version}, "
            f"correlation_id={self.correlation_id}, client_id={self.client_id!r})"
        )


def decode_request_header(payload: bytes) -> tuple[RequestHeader, Reader]:
    """Read the header fields common to v1 and v2; the caller handles tags."""
    header, pos = _header(payload)
    return header, Reader(payload, pos)


def _header(payload: bytes) -> tuple[RequestHeader, int]:
    """The header and where the rest begins. No :class:`Reader` is built: the
    fast paths below read the three requests of every login without one."""
    if len(payload) >= _HEADER.size:
        # One unpack for the fixed part: three of these arrive with every login.
        api_key, api_version, correlation_id, n = _HEADER.unpack_from(payload)
        end = _HEADER.size + n
        if n >= -1 and end <= len(payload):
            if n == -1:
                return RequestHeader(api_key, api_version, correlation_id, None), _HEADER.size
            try:
                client_id = payload[_HEADER.size : end].decode("utf-8")
            except UnicodeDecodeError:
                raise MalformedMessage("string is not valid UTF-8") from None
            return RequestHeader(api_key, api_version, correlation_id, client_id), end
    # Short or bad client id: the general reader names the exact problem.
    header, r = _read_request_header(payload)
    return header, r.pos


def _read_request_header(payload: bytes) -> tuple[RequestHeader, Reader]:
    """The general header reader; the reference for the fast path above."""
    r = Reader(payload)
    api_key = r.int16()
    api_version = r.int16()
    correlation_id = r.int32()
    client_id = r.string(compact=False)
    return RequestHeader(api_key, api_version, correlation_id, client_id), r


def decode_request(
    payload: bytes, max_array: int | None = None
) -> tuple[RequestHeader, ApiSpec, Body]:
    """Decode one request frame's payload.

    ``max_array`` caps the elements of every array in the body, so a peer
    cannot make us build millions of dicts from one frame.

    Raises:
        UnsupportedRequest: unknown API key or version (the header is attached).
        MalformedMessage: the body does not decode.
    """
    header, pos = _header(payload)
    key = header.api_key
    if key == ApiKey.SASL_AUTHENTICATE:
        token = _sasl_authenticate_token(header.api_version, payload, pos)
        if token is not None:
            return header, _SASL_AUTHENTICATE_SPEC, {"auth_bytes": token}
    elif key == ApiKey.API_VERSIONS and 3 <= header.api_version <= _API_VERSIONS_SPEC.max_version:
        software = _api_versions_software(payload, pos)
        if software is not None:
            return header, _API_VERSIONS_SPEC, software
    elif key == ApiKey.SASL_HANDSHAKE and 0 <= header.api_version <= 1:
        mechanism = _handshake_mechanism(payload, pos)
        if mechanism is not None:
            return header, _SASL_HANDSHAKE_SPEC, {"mechanism": mechanism}
    r = Reader(payload, pos)
    if max_array is not None:
        r.max_array = max_array
    return _read_request(header, r)


def _api_versions_software(payload: bytes, pos: int) -> Body | None:
    """ApiVersions v3+ as Java clients send it (no tagged fields, short strings),
    read directly: it opens every connection (``NetworkClient``). Anything else
    returns ``None`` for :func:`_read_request`, which gives the same body or
    names the problem."""
    if pos >= len(payload) or payload[pos] != 0:
        return None
    name = _compact_bytes_span(payload, pos + 1)
    if name is None:
        return None
    version = _compact_bytes_span(payload, name[1])
    if version is None or version[1] >= len(payload) or payload[version[1]] != 0:
        return None
    try:
        return {
            "client_software_name": payload[name[0] : name[1]].decode("utf-8"),
            "client_software_version": payload[version[0] : version[1]].decode("utf-8"),
        }
    except UnicodeDecodeError:
        return None


def _handshake_mechanism(payload: bytes, pos: int) -> str | None:
    """SaslHandshake v0/v1's one string, read directly: it opens every login.
    Anything unusual returns ``None`` for :func:`_read_request`, which gives the
    same body or names the problem."""
    if pos + 2 > len(payload):
        return None
    (length,) = _I16.unpack_from(payload, pos)
    end = pos + 2 + length
    if length < 0 or end > len(payload):
        return None
    try:
        return payload[pos + 2 : end].decode("utf-8")
    except UnicodeDecodeError:
        return None


def _sasl_authenticate_token(version: int, payload: bytes, pos: int) -> bytes | None:
    """The token of a usual SaslAuthenticate request (no tagged fields), read
    directly: every login sends two. Anything else returns ``None`` and goes to
    :func:`_read_request`, which gives the same body or names the problem."""
    n = len(payload)
    if version == 2:
        # Header tags (none), compact bytes, body tags (none).
        if pos + 2 > n or payload[pos] != 0:
            return None
        span = _compact_bytes_span(payload, pos + 1)
        if span is None or span[1] >= n or payload[span[1]] != 0:
            return None
        return payload[span[0] : span[1]]
    if version == 0 or version == 1:
        if pos + 4 > n:
            return None
        length = _SIZE.unpack_from(payload, pos)[0]
        end = pos + 4 + length
        if length < 0 or end > n:
            return None
        return payload[pos + 4 : end]
    return None


def _compact_bytes_span(payload: bytes, pos: int) -> tuple[int, int] | None:
    """Where the non-null compact bytes field at ``pos`` lies: ``(start, end)``.

    Lengths of one or two varint bytes (SCRAM messages are far shorter than
    16 KiB); ``None`` for anything else, left to the general reader.
    """
    n = len(payload)
    if pos >= n:
        return None
    first = payload[pos]
    if first & 0x80:
        if pos + 1 >= n or payload[pos + 1] & 0x80:
            return None
        length = ((first & 0x7F) | (payload[pos + 1] << 7)) - 1
        start = pos + 2
    else:
        length = first - 1
        start = pos + 1
    end = start + length
    if length < 0 or end > n:
        return None
    return start, end


def _read_request(header: RequestHeader, r: Reader) -> tuple[RequestHeader, ApiSpec, Body]:
    """The schema-driven request reader after the header; the reference for the
    SaslAuthenticate fast path. SaslHandshake's one string is read directly."""
    spec = API_SPECS.get(header.api_key)
    if spec is None or not spec.supports(header.api_version):
        raise UnsupportedRequest(header.api_key, header.api_version, header)
    version = header.api_version
    flexible = spec.flexible(version)
    if flexible:
        _skip_tags(r)
    if header.api_key == ApiKey.SASL_HANDSHAKE:
        # The first request of every login: one non-nullable string.
        mechanism = r.string(False)
        if mechanism is None:
            raise MalformedMessage("null string for non-nullable field 'mechanism'")
        return header, spec, {"mechanism": mechanism}
    body = spec.request.read(r, version, flexible)
    # Trailing bytes are tolerated, as Kafka's readers do for forward compatibility.
    return header, spec, body


def _skip_tags(r: Reader) -> None:
    count = r.uvarint()
    for _ in range(count):
        r.uvarint()
        r.raw(r.uvarint())


def encode_body(api_key: int, version: int, body: Body) -> bytes:
    """A response body alone, for callers that cache constant bodies."""
    spec = API_SPECS[api_key]
    w = Writer()
    spec.response.write(w, body, version, spec.flexible(version))
    return w.getvalue()


def frame_response(api_key: int, version: int, correlation_id: int, body: bytes) -> bytes:
    """Frame an encoded body with the response header Kafka's generator picks."""
    spec = API_SPECS[api_key]
    tags = b"\x00" if spec.response_header_version(version) == 1 else b""
    return _SIZE.pack(4 + len(tags) + len(body)) + _SIZE.pack(correlation_id) + tags + body


def encode_sasl_authenticate_response(
    version: int, correlation_id: int, error: int, message: str | None, token: bytes, lifetime: int
) -> bytes:
    """SaslAuthenticate's response, written directly: it is on every login's hot path.

    Same bytes as :func:`encode_response` (the codec tests compare them).
    """
    if not 0 <= version <= 2:
        raise ValueError(f"SaslAuthenticate version {version} is not supported")
    if version == 2 and message is None and len(token) < 0x7F:
        # Every login's two answers: no message, a token under 127 bytes.
        head = _AUTH_V2_HEAD.pack(18 + len(token), correlation_id, 0, error, 0, len(token) + 1)
        return head + token + _AUTH_V2_TAIL.pack(lifetime, 0)
    parts = [_I16.pack(error)]
    raw = None if message is None else message.encode("utf-8")
    if version == 2:
        parts.append(_uvarint(0 if raw is None else len(raw) + 1))
        if raw is not None:
            parts.append(raw)
        parts.append(_uvarint(len(token) + 1))
        parts.append(token)
        parts.append(_I64.pack(lifetime))
        parts.append(b"\x00")
        body = b"".join(parts)
        return _SIZE.pack(5 + len(body)) + _SIZE.pack(correlation_id) + b"\x00" + body
    parts.append(_I16.pack(-1) if raw is None else _I16.pack(len(raw)) + raw)
    parts.append(_SIZE.pack(len(token)))
    parts.append(token)
    if version == 1:
        parts.append(_I64.pack(lifetime))
    body = b"".join(parts)
    return _SIZE.pack(4 + len(body)) + _SIZE.pack(correlation_id) + body


def _uvarint(value: int) -> bytes:
    if value < 0x80:
        return _ONE_BYTE[value]
    w = Writer()
    w.uvarint(value)
    return w.getvalue()


def encode_response(api_key: int, version: int, correlation_id: int, body: Body) -> bytes:
    """A framed response with the header version Kafka's generator picks."""
    spec = API_SPECS[api_key]
    w = Writer()
    w.int32(correlation_id)
    if spec.response_header_version(version) == 1:
        w.uvarint(0)
    spec.response.write(w, body, version, spec.flexible(version))
    return frame(w.getvalue())


def api_versions_unsupported_response(correlation_id: int) -> bytes:
    """KIP-511: for a too-new ApiVersions, a v0 body with error 35 listing key 18."""
    spec = API_SPECS[ApiKey.API_VERSIONS]
    body = {
        "error_code": ErrorCode.UNSUPPORTED_VERSION,
        "api_keys": [
            {
                "api_key": ApiKey.API_VERSIONS,
                "min_version": spec.min_version,
                "max_version": spec.max_version,
            }
        ],
    }
    return encode_response(ApiKey.API_VERSIONS, 0, correlation_id, body)


def encode_request(
    api_key: int, version: int, correlation_id: int, client_id: str | None, body: Body
) -> bytes:
    """A framed request (client side)."""
    if api_key == ApiKey.SASL_AUTHENTICATE or api_key == ApiKey.SASL_HANDSHAKE:
        fast = _encode_sasl_request(api_key, version, correlation_id, client_id, body)
        if fast is not None:
            return fast
    return _write_request(api_key, version, correlation_id, client_id, body)


def _client_spec(api_key: int) -> ApiSpec:
    """The schema of a request we send: any we hold, those the endpoint answers
    and those only a front door reads (DescribeCluster: its own start-up look),
    which the endpoint's reader keeps refusing as unknown."""
    spec = API_SPECS.get(api_key)
    return spec if spec is not None else ADDRESS_API_SPECS[api_key]


def _write_request(
    api_key: int, version: int, correlation_id: int, client_id: str | None, body: Body
) -> bytes:
    """The general, schema-driven request writer; the reference for the fast path."""
    spec = _client_spec(api_key)
    w = Writer()
    w.int16(api_key)
    w.int16(version)
    w.int32(correlation_id)
    w.string(client_id, compact=False)
    flexible = spec.flexible(version)
    if flexible:
        w.uvarint(0)
    spec.request.write(w, body, version, flexible)
    return frame(w.getvalue())


def _encode_sasl_request(
    api_key: int, version: int, correlation_id: int, client_id: str | None, body: Body
) -> bytes | None:
    """SaslHandshake and SaslAuthenticate written directly: a login sends three.

    Same bytes as :func:`_write_request` (the codec tests compare them). Returns
    ``None`` for anything unusual, so the general writer reports the problem.
    """
    if not -(2**31) <= correlation_id < 2**31:
        return None
    if client_id is None:
        cid = b""
        cid_len = -1
    elif type(client_id) is str:
        cid = client_id.encode("utf-8")
        cid_len = len(cid)
        if cid_len > 0x7FFF:
            return None
    else:
        return None
    if api_key == ApiKey.SASL_AUTHENTICATE:
        token = body.get("auth_bytes")
        if type(token) is not bytes or not 0 <= version <= 2:
            return None
        if version == 2:  # flexible: header tags, compact bytes, body tags
            size = _uvarint(len(token) + 1)
            tail = b"\x00" + size + token + b"\x00"
        else:
            tail = _SIZE.pack(len(token)) + token
    else:
        mechanism = body.get("mechanism")
        if type(mechanism) is not str or not 0 <= version <= 1:
            return None
        raw = mechanism.encode("utf-8")
        if len(raw) > 0x7FFF:
            return None
        tail = _I16.pack(len(raw)) + raw
    head = _REQUEST_HEAD.pack(
        _HEADER.size + len(cid) + len(tail), api_key, version, correlation_id, cid_len
    )
    return head + cid + tail


def decode_response(api_key: int, version: int, payload: bytes) -> tuple[int, Body]:
    """Decode a response payload (client side): correlation id and body."""
    if api_key == ApiKey.SASL_AUTHENTICATE:
        fast = _sasl_authenticate_response(version, payload)
        if fast is not None:
            return fast
    return _read_response(api_key, version, payload)


def _sasl_authenticate_response(version: int, payload: bytes) -> tuple[int, Body] | None:
    """The usual SaslAuthenticate answer (no error message, no tagged fields)
    read with struct: every login reads two. Anything else returns ``None`` and
    goes to :func:`_read_response`, which gives the same body or names the problem.
    """
    n = len(payload)
    if version == 2:
        # correlation id, header tags (none), error, null compact message, compact bytes.
        if n < 9 or payload[4] != 0 or payload[7] != 0:
            return None
        correlation_id = _SIZE.unpack_from(payload)[0]
        error = _I16.unpack_from(payload, 5)[0]
        span = _compact_bytes_span(payload, 8)
        if span is None:
            return None
        start, end = span
        if end + 9 > n or payload[end + 8] != 0:
            return None
        lifetime = _I64.unpack_from(payload, end)[0]
    elif version == 0 or version == 1:
        if n < _AUTH_V0_HEAD.size:
            return None
        correlation_id, error, message_length, length = _AUTH_V0_HEAD.unpack_from(payload)
        start = _AUTH_V0_HEAD.size
        end = start + length
        if message_length != -1 or length < 0 or end + 8 * version > n:
            return None
        # v0 has no session lifetime (KIP-368); the schema reader gives 0 too.
        lifetime = _I64.unpack_from(payload, end)[0] if version == 1 else 0
    else:
        return None
    return correlation_id, {
        "error_code": error,
        "error_message": None,
        "auth_bytes": payload[start:end],
        "session_lifetime_ms": lifetime,
    }


def _read_response(api_key: int, version: int, payload: bytes) -> tuple[int, Body]:
    """The general, schema-driven response reader; the reference for the fast path above."""
    spec = _client_spec(api_key)
    r = Reader(payload)
    correlation_id = r.int32()
    if spec.response_header_version(version) == 1:
        _skip_tags(r)
    if api_key == ApiKey.API_VERSIONS:
        # KIP-511: an error answer (35) carries a v0 body whatever we asked for.
        start = r.pos
        error = r.int16()
        r.pos = start
        if error == ErrorCode.UNSUPPORTED_VERSION:
            version = 0
    decoded = spec.response.read(r, version, spec.flexible(version))
    return correlation_id, decoded
