"""The API subset this project speaks, transcribed from Kafka's message JSON
(docs/kafka-facts.md §9.3). Versions: Kafka 3.9 ranges, plus Metadata v13
from Kafka 4.x; DescribeClientQuotas' 0-1 are both versions' ranges.
FindCoordinator 0-6 and DescribeCluster 0-2 are Kafka 4.x's ranges: the front
door rewrites the broker addresses they carry (``ADDRESS_API_SPECS``)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from sasl_scram.kafka._message_table import message_spec
from sasl_scram.kafka._primitives import Reader
from sasl_scram.kafka._primitives import Writer
from sasl_scram.kafka._schema import BOOL
from sasl_scram.kafka._schema import BYTES
from sasl_scram.kafka._schema import FLOAT64
from sasl_scram.kafka._schema import INT8
from sasl_scram.kafka._schema import INT16
from sasl_scram.kafka._schema import INT32
from sasl_scram.kafka._schema import INT64
from sasl_scram.kafka._schema import STRING
from sasl_scram.kafka._schema import UUID
from sasl_scram.kafka._schema import Array
from sasl_scram.kafka._schema import Field
from sasl_scram.kafka._schema import Struct

__all__ = ["ADDRESS_API_SPECS", "API_SPECS", "ApiKey", "ApiSpec"]

_INT32_MIN = -(2**31)


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


# Every response's optional error text: nullable, null unless set.
_ERROR_MESSAGE = Field("error_message", STRING, nullable_since=0, null_default=True)
# KIP-554: each user's entry in Describe- and AlterUserScramCredentials' responses
# opens with these (then Describe adds the credential infos).
_USER_OUTCOME = (Field("user", STRING), Field("error_code", INT16), _ERROR_MESSAGE)
_PRINCIPAL = Struct(Field("principal_type", STRING), Field("principal_name", STRING))


def _version_ranges(key: Field, low: str, high: str) -> Array:
    """ApiVersions' arrays of ``key`` with an INT16 version range (names and order differ)."""
    return Array(Struct(key, Field(low, INT16), Field(high, INT16)))


_API_VERSIONS = ApiSpec(
    ApiKey.API_VERSIONS,
    0,
    4,
    3,
    Struct(
        Field("client_software_name", STRING, since=3),
        Field("client_software_version", STRING, since=3),
    ),
    Struct(
        Field("error_code", INT16),
        Field("api_keys", _version_ranges(Field("api_key", INT16), "min_version", "max_version")),
        Field("throttle_time_ms", INT32, since=1),
        Field(
            "supported_features",
            _version_ranges(Field("name", STRING), "min_version", "max_version"),
            since=3,
            tag=0,
        ),
        Field("finalized_features_epoch", INT64, since=3, tag=1, default=-1),
        Field(
            "finalized_features",
            # max before min, as in Kafka's ApiVersionsResponse.json.
            _version_ranges(Field("name", STRING), "max_version_level", "min_version_level"),
            since=3,
            tag=2,
        ),
        Field("zk_migration_ready", BOOL, since=3, tag=3),
    ),
)

_SASL_HANDSHAKE = ApiSpec(
    ApiKey.SASL_HANDSHAKE,
    0,
    1,
    None,
    Struct(Field("mechanism", STRING)),
    Struct(Field("error_code", INT16), Field("mechanisms", Array(STRING))),
)

_SASL_AUTHENTICATE = ApiSpec(
    ApiKey.SASL_AUTHENTICATE,
    0,
    2,
    2,
    Struct(Field("auth_bytes", BYTES)),
    Struct(
        Field("error_code", INT16),
        _ERROR_MESSAGE,
        Field("auth_bytes", BYTES),
        Field("session_lifetime_ms", INT64, since=1),
    ),
)

_METADATA = ApiSpec(
    ApiKey.METADATA,
    0,
    13,
    9,
    Struct(
        Field(
            "topics",
            Array(
                Struct(
                    Field("topic_id", UUID, since=10),
                    Field("name", STRING, nullable_since=10),
                )
            ),
            nullable_since=1,
        ),
        Field("allow_auto_topic_creation", BOOL, since=4, default=True),
        Field("include_cluster_authorized_operations", BOOL, since=8, until=10),
        Field("include_topic_authorized_operations", BOOL, since=8),
    ),
    Struct(
        Field("throttle_time_ms", INT32, since=3),
        Field(
            "brokers",
            Array(
                Struct(
                    Field("node_id", INT32),
                    Field("host", STRING),
                    Field("port", INT32),
                    Field("rack", STRING, since=1, nullable_since=1, null_default=True),
                )
            ),
        ),
        Field("cluster_id", STRING, since=2, nullable_since=2, null_default=True),
        Field("controller_id", INT32, since=1, default=-1),
        Field(
            "topics",
            Array(
                Struct(
                    Field("error_code", INT16),
                    Field("name", STRING, nullable_since=12),
                    Field("topic_id", UUID, since=10),
                    Field("is_internal", BOOL, since=1),
                    Field(
                        "partitions",
                        Array(
                            Struct(
                                Field("error_code", INT16),
                                Field("partition_index", INT32),
                                Field("leader_id", INT32),
                                Field("leader_epoch", INT32, since=7, default=-1),
                                Field("replica_nodes", Array(INT32)),
                                Field("isr_nodes", Array(INT32)),
                                Field("offline_replicas", Array(INT32), since=5),
                            )
                        ),
                    ),
                    Field("topic_authorized_operations", INT32, since=8, default=_INT32_MIN),
                )
            ),
        ),
        Field("cluster_authorized_operations", INT32, since=8, until=10, default=_INT32_MIN),
        Field("error_code", INT16, since=13),
    ),
)

_DESCRIBE_SCRAM = ApiSpec(
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
    0,
    0,
    0,
    Struct(Field("users", Array(Struct(Field("name", STRING))), nullable_since=0)),
    Struct(
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        _ERROR_MESSAGE,
        Field(
            "results",
            Array(
                Struct(
                    *_USER_OUTCOME,
                    Field(
                        "credential_infos",
                        Array(Struct(Field("mechanism", INT8), Field("iterations", INT32))),
                    ),
                )
            ),
        ),
    ),
)

_ALTER_SCRAM = ApiSpec(
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
    0,
    0,
    0,
    Struct(
        Field("deletions", Array(Struct(Field("name", STRING), Field("mechanism", INT8)))),
        Field(
            "upsertions",
            Array(
                Struct(
                    Field("name", STRING),
                    Field("mechanism", INT8),
                    Field("iterations", INT32),
                    Field("salt", BYTES),
                    Field("salted_password", BYTES),
                )
            ),
        ),
    ),
    Struct(
        Field("throttle_time_ms", INT32),
        Field("results", Array(Struct(*_USER_OUTCOME))),
    ),
)


# KIP-546. Kafka's tools ask for quotas before SCRAM credentials when describing
# users (ConfigCommand.describeClientQuotaAndUserScramCredentialConfigs); Kafka
# 3.9 to 4.x speak versions 0-1, flexible from 1.
_DESCRIBE_CLIENT_QUOTAS = ApiSpec(
    ApiKey.DESCRIBE_CLIENT_QUOTAS,
    0,
    1,
    1,
    Struct(
        Field(
            "components",
            Array(
                Struct(
                    Field("entity_type", STRING),
                    Field("match_type", INT8),
                    Field("match", STRING, nullable_since=0),
                )
            ),
        ),
        Field("strict", BOOL),
    ),
    Struct(
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        _ERROR_MESSAGE,
        Field(
            "entries",
            Array(
                Struct(
                    Field(
                        "entity",
                        Array(
                            Struct(
                                Field("entity_type", STRING),
                                Field("entity_name", STRING, nullable_since=0),
                            )
                        ),
                    ),
                    Field("values", Array(Struct(Field("key", STRING), Field("value", FLOAT64)))),
                )
            ),
            nullable_since=0,
        ),
    ),
)


def _token_fields(timestamp_suffix: str) -> tuple[Field, ...]:
    """A token as CreateDelegationToken's response and each DescribeDelegationToken
    entry carry it, in the same order; only the timestamps' names differ
    (``IssueTimestampMs`` in Create, ``IssueTimestamp`` in Describe)."""
    return (
        Field("principal_type", STRING),
        Field("principal_name", STRING),
        Field("token_requester_principal_type", STRING, since=3),
        Field("token_requester_principal_name", STRING, since=3),
        Field(f"issue_timestamp{timestamp_suffix}", INT64),
        Field(f"expiry_timestamp{timestamp_suffix}", INT64),
        Field(f"max_timestamp{timestamp_suffix}", INT64),
        Field("token_id", STRING),
        Field("hmac", BYTES),
    )


_CREATE_TOKEN = ApiSpec(
    ApiKey.CREATE_DELEGATION_TOKEN,
    0,
    3,
    2,
    Struct(
        Field("owner_principal_type", STRING, since=3, nullable_since=3),
        Field("owner_principal_name", STRING, since=3, nullable_since=3),
        Field("renewers", Array(_PRINCIPAL)),
        Field("max_lifetime_ms", INT64),
    ),
    Struct(
        Field("error_code", INT16),
        *_token_fields("_ms"),
        Field("throttle_time_ms", INT32),
    ),
)


def _token_period_spec(key: ApiKey, period: str) -> ApiSpec:
    """Renew and Expire: Kafka's two schemas differ only in the period's name
    (``RenewPeriodMs``, ``ExpiryTimePeriodMs``)."""
    return ApiSpec(
        key,
        0,
        2,
        2,
        Struct(Field("hmac", BYTES), Field(period, INT64)),
        Struct(
            Field("error_code", INT16),
            Field("expiry_timestamp_ms", INT64),
            Field("throttle_time_ms", INT32),
        ),
    )


_RENEW_TOKEN = _token_period_spec(ApiKey.RENEW_DELEGATION_TOKEN, "renew_period_ms")
_EXPIRE_TOKEN = _token_period_spec(ApiKey.EXPIRE_DELEGATION_TOKEN, "expiry_time_period_ms")

_DESCRIBE_TOKEN = ApiSpec(
    ApiKey.DESCRIBE_DELEGATION_TOKEN,
    0,
    3,
    2,
    Struct(Field("owners", Array(_PRINCIPAL), nullable_since=0)),
    Struct(
        Field("error_code", INT16),
        Field(
            "tokens",
            Array(
                Struct(
                    *_token_fields(""),
                    Field("renewers", Array(_PRINCIPAL)),
                )
            ),
        ),
        Field("throttle_time_ms", INT32),
    ),
)


def _generated(key: ApiKey, low: int, high: int) -> ApiSpec:
    """An API the edge answers, at versions ``low``..``high``, in the schemas
    generated from Kafka's own specs (one layout across those versions)."""
    spec = message_spec(key)
    request, response = spec.request(high), spec.response(high)
    assert spec.request(low) is request and spec.response(low) is response
    return ApiSpec(key, low, high, spec.flexible_from, request, response)


# The ACL RPCs, answered at the edge when it authorizes (Kafka 4.x's versions:
# 4.0 removed v0, KIP-896).
_ACL_SPECS = tuple(
    _generated(key, 1, 3) for key in (ApiKey.DESCRIBE_ACLS, ApiKey.CREATE_ACLS, ApiKey.DELETE_ACLS)
)

API_SPECS: dict[int, ApiSpec] = {
    spec.key: spec
    for spec in (
        _API_VERSIONS,
        _SASL_HANDSHAKE,
        _SASL_AUTHENTICATE,
        _METADATA,
        _DESCRIBE_SCRAM,
        _ALTER_SCRAM,
        _DESCRIBE_CLIENT_QUOTAS,
        _CREATE_TOKEN,
        _RENEW_TOKEN,
        _EXPIRE_TOKEN,
        _DESCRIBE_TOKEN,
        *_ACL_SPECS,
    )
}


# KIP-699 batched FindCoordinator from v4; flexible from v3 (FindCoordinatorResponse.json).
_FIND_COORDINATOR = ApiSpec(
    ApiKey.FIND_COORDINATOR,
    0,
    6,
    3,
    Struct(
        Field("key", STRING, until=3),
        Field("key_type", INT8, since=1),
        Field("coordinator_keys", Array(STRING), since=4),
    ),
    Struct(
        Field("throttle_time_ms", INT32, since=1),
        Field("error_code", INT16, until=3),
        Field("error_message", STRING, since=1, until=3, nullable_since=1),
        Field("node_id", INT32, until=3),
        Field("host", STRING, until=3),
        Field("port", INT32, until=3),
        Field(
            "coordinators",
            Array(
                Struct(
                    Field("key", STRING),
                    Field("node_id", INT32),
                    Field("host", STRING),
                    Field("port", INT32),
                    Field("error_code", INT16),
                    Field("error_message", STRING, nullable_since=4),
                )
            ),
            since=4,
        ),
    ),
)

# KIP-700; v1 adds the endpoint type (KIP-919), v2 fenced brokers (Kafka 4.0).
_DESCRIBE_CLUSTER = ApiSpec(
    ApiKey.DESCRIBE_CLUSTER,
    0,
    2,
    0,
    Struct(
        Field("include_cluster_authorized_operations", BOOL),
        Field("endpoint_type", INT8, since=1, default=1),
        Field("include_fenced_brokers", BOOL, since=2),
    ),
    Struct(
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        _ERROR_MESSAGE,
        Field("endpoint_type", INT8, since=1, default=1),
        Field("cluster_id", STRING),
        Field("controller_id", INT32, default=-1),
        Field(
            "brokers",
            Array(
                Struct(
                    Field("broker_id", INT32),
                    Field("host", STRING),
                    Field("port", INT32),
                    Field("rack", STRING, nullable_since=0, null_default=True),
                    Field("is_fenced", BOOL, since=2),
                )
            ),
        ),
        Field("cluster_authorized_operations", INT32, default=_INT32_MIN),
    ),
)

#: The responses that carry broker addresses, by API key: what a proxy in front
#: of a cluster parses and rewrites. FindCoordinator and DescribeCluster are
#: kept out of ``API_SPECS`` so the endpoint keeps refusing them as unknown.
ADDRESS_API_SPECS: dict[int, ApiSpec] = {
    spec.key: spec for spec in (_METADATA, _FIND_COORDINATOR, _DESCRIBE_CLUSTER)
}
