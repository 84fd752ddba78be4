"""Codec errors and the one table of Kafka's error codes.

Every Kafka error code this project sends or reads is here, with Kafka's
default message (``org.apache.kafka.common.protocol.Errors``): the endpoint, the
stores' KIP-554 results, the admin client and ``tokenauth`` all use it.
"""

from __future__ import annotations

import enum
from typing import Any

from sasl_scram._errors import ScramError

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
    TOPIC_AUTHORIZATION_FAILED = 29
    GROUP_AUTHORIZATION_FAILED = 30
    CLUSTER_AUTHORIZATION_FAILED = 31
    UNSUPPORTED_SASL_MECHANISM = 33
    ILLEGAL_SASL_STATE = 34
    UNSUPPORTED_VERSION = 35
    NOT_CONTROLLER = 41
    INVALID_REQUEST = 42
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
    SECURITY_DISABLED = 54
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

    @property
    def default_message(self) -> str:
        """Kafka's text for the code when a response carries no message (``Errors``)."""
        return _ERRORS[self][1]

    @property
    def exception_name(self) -> str:
        """The simple name of Kafka's exception for the code, as its tools print it."""
        return _ERRORS[self][0]


# Each code's exception class (org.apache.kafka.common.errors) and default message.
_ERRORS: dict[ErrorCode, tuple[str, str]] = {
    ErrorCode.UNKNOWN_SERVER_ERROR: (
        "UnknownServerException",
        ("The server experienced an unexpected error when processing the request."),
    ),
    ErrorCode.NONE: (
        "",
        "",
    ),
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: (
        "UnknownTopicOrPartitionException",
        "This server does not host this topic-partition.",
    ),
    ErrorCode.LEADER_NOT_AVAILABLE: (
        "LeaderNotAvailableException",
        (
            "There is no leader for this topic-partition as we are in the middle of a "
            "leadership election."
        ),
    ),
    ErrorCode.TOPIC_AUTHORIZATION_FAILED: (
        "TopicAuthorizationException",
        "Topic authorization failed.",
    ),
    ErrorCode.GROUP_AUTHORIZATION_FAILED: (
        "GroupAuthorizationException",
        "Group authorization failed.",
    ),
    ErrorCode.CLUSTER_AUTHORIZATION_FAILED: (
        "ClusterAuthorizationException",
        "Cluster authorization failed.",
    ),
    ErrorCode.UNSUPPORTED_SASL_MECHANISM: (
        "UnsupportedSaslMechanismException",
        ("The broker does not support the requested SASL mechanism."),
    ),
    ErrorCode.ILLEGAL_SASL_STATE: (
        "IllegalSaslStateException",
        "Request is not valid given the current SASL state.",
    ),
    ErrorCode.UNSUPPORTED_VERSION: (
        "UnsupportedVersionException",
        "The version of API is not supported.",
    ),
    ErrorCode.NOT_CONTROLLER: (
        "NotControllerException",
        "This is not the correct controller for this cluster.",
    ),
    ErrorCode.INVALID_REQUEST: (
        "InvalidRequestException",
        (
            "This most likely occurs because of a request being malformed by the client library "
            "or the message was sent to an incompatible broker. See the broker logs for more "
            "details."
        ),
    ),
    ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: (
        "TransactionalIdAuthorizationException",
        "Transactional Id authorization failed.",
    ),
    ErrorCode.SECURITY_DISABLED: (
        "SecurityDisabledException",
        "Security features are disabled.",
    ),
    ErrorCode.SASL_AUTHENTICATION_FAILED: (
        "SaslAuthenticationException",
        "SASL Authentication failed.",
    ),
    ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED: (
        "DelegationTokenDisabledException",
        "Delegation Token feature is not enabled.",
    ),
    ErrorCode.DELEGATION_TOKEN_NOT_FOUND: (
        "DelegationTokenNotFoundException",
        "Delegation Token is not found on server.",
    ),
    ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH: (
        "DelegationTokenOwnerMismatchException",
        "Specified Principal is not valid Owner/Renewer.",
    ),
    ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED: (
        "UnsupportedByAuthenticationException",
        (
            "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on "
            "delegation token authenticated channels."
        ),
    ),
    ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED: (
        "DelegationTokenAuthorizationException",
        "Delegation Token authorization failed.",
    ),
    ErrorCode.DELEGATION_TOKEN_EXPIRED: (
        "DelegationTokenExpiredException",
        "Delegation Token is expired.",
    ),
    ErrorCode.INVALID_PRINCIPAL_TYPE: (
        "InvalidPrincipalTypeException",
        "Supplied principalType is not supported.",
    ),
    ErrorCode.RESOURCE_NOT_FOUND: (
        "ResourceNotFoundException",
        ("A request illegally referred to a resource that does not exist."),
    ),
    ErrorCode.DUPLICATE_RESOURCE: (
        "DuplicateResourceException",
        "A request illegally referred to the same resource twice.",
    ),
    ErrorCode.UNACCEPTABLE_CREDENTIAL: (
        "UnacceptableCredentialException",
        ("Requested credential would not meet criteria for acceptability."),
    ),
    ErrorCode.UNKNOWN_TOPIC_ID: (
        "UnknownTopicIdException",
        "This server does not host this topic ID.",
    ),
}
