"""Every API's request and response schema, built from Kafka's own specs.

:mod:`sasl_scram.kafka._message_data` holds, one JSON text per API, what
``tools/gen_kafka_schemas.py`` read from the ``common/message/*.json`` files
of the kafka-clients jars of Kafka 4.4.0 and 3.9.2: every API either defines,
over the union of their versions, one tree per request and per response with
each field's own versions. :func:`message_spec` turns one API's text into
:class:`~sasl_scram.kafka._schema.Struct` trees on first use, so a process
pays only for the APIs it reads (importing the data costs a millisecond).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sasl_scram.kafka._errors import MalformedMessage
from sasl_scram.kafka._message_data import MESSAGES
from sasl_scram.kafka._primitives import Reader
from sasl_scram.kafka._primitives import Writer
from sasl_scram.kafka._schema import BOOL
from sasl_scram.kafka._schema import BYTES
from sasl_scram.kafka._schema import FLOAT64
from sasl_scram.kafka._schema import INT8
from sasl_scram.kafka._schema import INT16
from sasl_scram.kafka._schema import INT32
from sasl_scram.kafka._schema import INT64
from sasl_scram.kafka._schema import RECORDS
from sasl_scram.kafka._schema import STRING
from sasl_scram.kafka._schema import UINT16
from sasl_scram.kafka._schema import UUID
from sasl_scram.kafka._schema import Array
from sasl_scram.kafka._schema import Field
from sasl_scram.kafka._schema import Struct

__all__ = ["MessageSpec", "known_api_keys", "message_spec"]

_PRIMITIVES = {
    "int8": INT8,
    "int16": INT16,
    "int32": INT32,
    "int64": INT64,
    "uint16": UINT16,
    "float64": FLOAT64,
    "string": STRING,
    "bytes": BYTES,
    "records": RECORDS,
    "bool": BOOL,
    "uuid": UUID,
}
#: ApiKeys.CONTROLLED_SHUTDOWN, whose v0 has a request header of its own.
_CONTROLLED_SHUTDOWN = 7
#: ApiKeys.API_VERSIONS, whose response header is always v0.
_API_VERSIONS = 18


@dataclass(frozen=True)
class MessageSpec:
    """One API: its versions, and its request and response schemas.

    Attributes:
        api_key: the API key.
        name: Kafka's name for it (``ApiKeys``: ``Produce``, ``Metadata``).
        min_version, max_version: the stable versions Kafka 3.9 or 4.x define.
        flexible_from: the first flexible version (KIP-482), or ``None``.
    """

    api_key: int
    name: str
    min_version: int
    max_version: int
    flexible_from: int | None
    _request: Struct
    _response: Struct

    def flexible(self, version: int) -> bool:
        return self.flexible_from is not None and version >= self.flexible_from

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version

    def _check(self, version: int) -> None:
        if not self.supports(version):
            raise MalformedMessage(f"{self.name} has no version {version}")

    def request(self, version: int) -> Struct:
        """The request schema of ``version`` (one tree serves every version)."""
        self._check(version)
        return self._request

    def response(self, version: int) -> Struct:
        self._check(version)
        return self._response

    def request_header_version(self, version: int) -> int:
        """ApiMessageType.requestHeaderVersion: 2 when flexible, else 1, but 0
        for ControlledShutdown v0, whose header has no client id."""
        if self.flexible(version):
            return 2
        return 0 if self.api_key == _CONTROLLED_SHUTDOWN and version == 0 else 1

    def response_header_version(self, version: int) -> int:
        """ApiMessageType.responseHeaderVersion: 1 when flexible, else 0, but
        always 0 for ApiVersions (KIP-511: a client reads it before it knows
        the versions the server speaks)."""
        return 1 if self.flexible(version) and self.api_key != _API_VERSIONS else 0

    def request_body_start(self, version: int, payload: bytes) -> int:
        """Where a request's body starts in ``payload`` (the frame without its
        size): after api key, version and correlation id, then the client id
        (request header v1+) and the header's tagged fields (v2)."""
        r = Reader(payload, 8)
        header = self.request_header_version(version)
        if header >= 1:
            r.string(False)
        if header >= 2:
            _skip_tags(r)
        return r.pos

    def response_body_start(self, version: int, payload: bytes) -> int:
        """Where a response's body starts: after the correlation id and, in
        response header v1, its tagged fields."""
        r = Reader(payload, 4)
        if self.response_header_version(version) >= 1:
            _skip_tags(r)
        return r.pos

    def read_request_body(self, version: int, payload: bytes, start: int) -> dict[str, Any]:
        """The request body that starts at ``payload[start]`` (after the header)."""
        r = Reader(payload, start)
        r.keep_unknown_tags = True
        body = self.request(version).read(r, version, self.flexible(version))
        if r.remaining():
            raise MalformedMessage(f"{r.remaining()} bytes after a {self.name} request")
        return body

    def read_response_body(self, version: int, payload: bytes, start: int) -> dict[str, Any]:
        """The response body that starts at ``payload[start]`` (after the header)."""
        r = Reader(payload, start)
        r.keep_unknown_tags = True
        return self.response(version).read(r, version, self.flexible(version))

    def write_request_body(self, version: int, body: dict[str, Any]) -> bytes:
        w = Writer()
        self.request(version).write(w, body, version, self.flexible(version))
        return w.getvalue()

    def write_response_body(self, version: int, body: dict[str, Any]) -> bytes:
        w = Writer()
        self.response(version).write(w, body, version, self.flexible(version))
        return w.getvalue()


def _skip_tags(r: Reader) -> None:
    for _ in range(r.uvarint()):
        r.uvarint()
        r.raw(r.uvarint())


def _field(data: Sequence[Any]) -> Field:
    name, shape, since, until, nullable_since, tag, default, children = data
    element: Any
    if shape.endswith("struct"):
        element = _struct(children)
    else:
        element = _PRIMITIVES[shape.removeprefix("[]")]
    kind = Array(element) if shape.startswith("[]") else element
    return Field(
        name,
        kind,
        since=since,
        until=until,
        nullable_since=nullable_since,
        default=None if default == "null" else default,
        tag=tag,
        null_default=default == "null",
    )


def _struct(fields: Sequence[Sequence[Any]]) -> Struct:
    return Struct(*(_field(each) for each in fields))


@functools.cache
def message_spec(api_key: int) -> MessageSpec:
    """The schemas of ``api_key``; ``KeyError`` for a key Kafka does not define."""
    name, low, high, flexible_from, request, response = json.loads(MESSAGES[api_key])
    return MessageSpec(api_key, name, low, high, flexible_from, _struct(request), _struct(response))


def known_api_keys() -> frozenset[int]:
    """Every API key Kafka 3.9 or 4.x defines a stable version of."""
    return frozenset(MESSAGES)
