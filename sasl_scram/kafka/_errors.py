"""Codec errors and Kafka's error codes (``org.apache.kafka.common.protocol.Errors``)."""

from __future__ import annotations

import enum
from typing import Any

from .._errors import ScramError

__all__ = ["ErrorCode", "KafkaCodecError", "MalformedMessage", "UnsupportedRequest"]


class KafkaCodecError(ScramError):
    """Root of the wire codec's errors: the peer sent bytes we cannot decode."""


class MalformedMessage(KafkaCodecError):
    """Truncated data, a negative length where none is allowed, an oversized frame..."""


class UnsupportedRequest(KafkaCodecError):
    """An API key or version this endpoint does not serve."""

    def __init__(self, api_key: int, api_version: int, header: Any = None) -> None:
        super().__init__(f"unsupported API key {api_key} version {api_version}")
        self.api_key = api_key
        self.api_version = api_version
        #: The request header (a ``RequestHeader``), so the caller can still answer.
        self.header = header


class ErrorCode(enum.IntEnum):
    """The error codes used on the paths served here. Values never change in Kafka."""

    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    UNKNOWN_TOPIC_OR_PARTITION = 3
    LEADER_NOT_AVAILABLE = 5
    CLUSTER_AUTHORIZATION_FAILED = 31
    UNSUPPORTED_SASL_MECHANISM = 33
    ILLEGAL_SASL_STATE = 34
    UNSUPPORTED_VERSION = 35
    NOT_CONTROLLER = 41
    INVALID_REQUEST = 42
    SASL_AUTHENTICATION_FAILED = 58
    DELEGATION_TOKEN_AUTH_DISABLED = 61
    DELEGATION_TOKEN_NOT_FOUND = 62
    DELEGATION_TOKEN_OWNER_MISMATCH = 63
    DELEGATION_TOKEN_REQUEST_NOT_ALLOWED = 64
    DELEGATION_TOKEN_AUTHORIZATION_FAILED = 65
    DELEGATION_TOKEN_EXPIRED = 66
    INVALID_PRINCIPAL_TYPE = 67
    RESOURCE_NOT_FOUND = 91
    DUPLICATE_RESOURCE = 92
    UNACCEPTABLE_CREDENTIAL = 93
    UNKNOWN_TOPIC_ID = 100
