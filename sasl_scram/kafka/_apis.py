"""The API subset this project speaks itself, and the versions it speaks.

The schemas are the generated table's (:mod:`._message_table`, from Kafka's
own ``common/message/*.json``); what is written here is only which APIs the
edge answers and at which versions (docs/kafka-facts.md §9.3): Kafka 3.9's
ranges, plus Metadata v13 from Kafka 4.x; DescribeClientQuotas' 0-1 are both
versions' ranges. FindCoordinator 0-6 and DescribeCluster 0-2 are Kafka 4.x's
ranges: the front door rewrites the broker addresses they carry
(``ADDRESS_API_SPECS``)."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import replace
from typing import Any

from sasl_scram.kafka._message_table import message_spec
from sasl_scram.kafka._primitives import Reader
from sasl_scram.kafka._primitives import Writer
from sasl_scram.kafka._schema import Array
from sasl_scram.kafka._schema import Field
from sasl_scram.kafka._schema import Struct

__all__ = ["ADDRESS_API_SPECS", "API_SPECS", "ApiKey", "ApiSpec"]


class ApiKey(enum.IntEnum):
    PRODUCE = 0
    FETCH = 1
    METADATA = 3
    FIND_COORDINATOR = 10
    SASL_HANDSHAKE = 17
    API_VERSIONS = 18
    DESCRIBE_ACLS = 29
    CREATE_ACLS = 30
    DELETE_ACLS = 31
    SASL_AUTHENTICATE = 36
    CREATE_DELEGATION_TOKEN = 38
    RENEW_DELEGATION_TOKEN = 39
    EXPIRE_DELEGATION_TOKEN = 40
    DESCRIBE_DELEGATION_TOKEN = 41
    DESCRIBE_CLIENT_QUOTAS = 48
    DESCRIBE_USER_SCRAM_CREDENTIALS = 50
    ALTER_USER_SCRAM_CREDENTIALS = 51
    DESCRIBE_CLUSTER = 60


@dataclass(frozen=True)
class ApiSpec:
    key: ApiKey
    min_version: int
    max_version: int
    flexible_from: int | None
    request: Struct
    response: Struct

    def flexible(self, version: int) -> bool:
        return self.flexible_from is not None and version >= self.flexible_from

    def request_header_version(self, version: int) -> int:
        return 2 if self.flexible(version) else 1

    def response_header_version(self, version: int) -> int:
        # KIP-511: the ApiVersions response header is always v0, so a client can
        # read it before it knows which versions the server supports.
        if self.key is ApiKey.API_VERSIONS:
            return 0
        return 1 if self.flexible(version) else 0

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version

    def read_response_body(self, version: int, payload: bytes) -> tuple[int, dict[str, Any], int]:
        """A response payload (after the size) read as ``(body start, body, body end)``.

        The header (correlation id, and its tagged fields in header v1) is skipped,
        not decoded, so a caller that rewrites the body can keep its bytes; tagged
        fields the schema does not know are kept (``UNKNOWN_TAGS``) and written back.
        """
        r = Reader(payload, 4)
        r.keep_unknown_tags = True
        if self.response_header_version(version) == 1:
            for _ in range(r.uvarint()):
                r.uvarint()
                r.raw(r.uvarint())
        start = r.pos
        body = self.response.read(r, version, self.flexible(version))
        return start, body, r.pos

    def write_response_body(self, version: int, body: dict[str, Any]) -> bytes:
        w = Writer()
        self.response.write(w, body, version, self.flexible(version))
        return w.getvalue()

    def write_request_body(self, version: int, body: dict[str, Any]) -> bytes:
        w = Writer()
        self.request.write(w, body, version, self.flexible(version))
        return w.getvalue()


def _generated(key: ApiKey, low: int, high: int) -> ApiSpec:
    """``key`` at versions ``low``..``high``, in the generated table's schemas
    (one tree per request and response serves every version), without the
    fields of other versions only: a body read has the keys of the versions
    spoken (an ApiVersions v3 request has no ``cluster_id``, a v5 field)."""
    spec = message_spec(key)
    if not spec.supports(low) or not spec.supports(high):
        raise AssertionError(f"Kafka has no {spec.name} v{low}-{high}")  # pragma: no cover

    def spoken(f: Field) -> Field | None:
        return None if f.since > high or (f.until is not None and f.until < low) else f

    request, response = spec.request(low), spec.response(low)
    return ApiSpec(
        key, low, high, spec.flexible_from, _rebuilt(request, spoken), _rebuilt(response, spoken)
    )


def _answered(key: ApiKey, low: int, high: int) -> ApiSpec:
    """An API the edge answers itself: the generated schemas, but for one
    deliberate difference in what the edge writes (never in what it reads).

    Kafka's generated classes default an unset error text to "" where the JSON
    gives no default (SaslAuthenticate, the KIP-554 and KIP-546 responses);
    the edge's answers have always written null for it, as in the byte
    examples of docs/kafka-facts.md §9.6 that every client tried accepts, and
    go on doing so: its handlers set the text only when there is one.
    """

    def null_text(f: Field) -> Field:
        if f.name == "error_message" and f.nullable_since is not None:
            return replace(f, default=None, null_default=True)
        return f

    spec = _generated(key, low, high)
    return replace(spec, response=_rebuilt(spec.response, null_text))


def _rebuilt(struct: Struct, change: Callable[[Field], Field | None]) -> Struct:
    """``struct`` with ``change`` applied to every field at every depth (None
    drops the field); the same object when nothing changes, so its compiled
    plans are shared."""
    fields: list[Field] = []
    for f in struct.fields:
        kind = f.type
        if isinstance(kind, Struct):
            kind = _rebuilt(kind, change)
        elif isinstance(kind, Array) and isinstance(kind.element, Struct):
            element = _rebuilt(kind.element, change)
            kind = kind if element is kind.element else Array(element)
        changed = change(f if kind is f.type else replace(f, type=kind))
        if changed is not None:
            fields.append(changed)
    same = len(fields) == len(struct.fields) and all(
        new is old for new, old in zip(fields, struct.fields, strict=True)
    )
    return struct if same else Struct(*fields)


#: The APIs the edge answers itself, at the versions it answers (Kafka 4.x
#: defines ApiVersions v5, KIP-1242's cluster and node id checks, which the
#: edge does not speak).
API_SPECS: dict[int, ApiSpec] = {
    key: _answered(key, low, high)
    for key, low, high in (
        (ApiKey.API_VERSIONS, 0, 4),
        (ApiKey.SASL_HANDSHAKE, 0, 1),
        (ApiKey.SASL_AUTHENTICATE, 0, 2),
        (ApiKey.METADATA, 0, 13),
        (ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, 0),
        (ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, 0),
        # KIP-546. Kafka's tools ask for quotas before SCRAM credentials when
        # describing users (ConfigCommand.describeClientQuotaAndUserScramCredentialConfigs).
        (ApiKey.DESCRIBE_CLIENT_QUOTAS, 0, 1),
        (ApiKey.CREATE_DELEGATION_TOKEN, 0, 3),
        (ApiKey.RENEW_DELEGATION_TOKEN, 0, 2),
        (ApiKey.EXPIRE_DELEGATION_TOKEN, 0, 2),
        (ApiKey.DESCRIBE_DELEGATION_TOKEN, 0, 3),
        # The ACL RPCs, answered at the edge when it authorizes (Kafka 4.x's
        # versions: 4.0 removed v0, KIP-896).
        (ApiKey.DESCRIBE_ACLS, 1, 3),
        (ApiKey.CREATE_ACLS, 1, 3),
        (ApiKey.DELETE_ACLS, 1, 3),
    )
}

#: The responses that carry broker addresses, by API key, at the versions whose
#: addresses the front door rewrites: Metadata's brokers, FindCoordinator's
#: coordinator (one up to v3, a KIP-699 batch from v4) and DescribeCluster's
#: brokers (KIP-700; v1 adds the endpoint type, KIP-919, v2 fenced brokers,
#: Kafka 4.0). FindCoordinator and DescribeCluster are kept out of
#: ``API_SPECS`` so the endpoint keeps refusing them as unknown.
ADDRESS_API_SPECS: dict[int, ApiSpec] = {
    key: API_SPECS.get(key) or _generated(key, low, high)
    for key, low, high in (
        (ApiKey.METADATA, 0, 13),
        (ApiKey.FIND_COORDINATOR, 0, 6),
        (ApiKey.DESCRIBE_CLUSTER, 0, 2),
    )
}
