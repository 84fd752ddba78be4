"""The Kafka wire protocol subset this project speaks, sans-IO.

Schemas are data (:mod:`._apis`); one generic codec encodes and decodes
requests and responses for both the endpoint and our own admin client.
"""

from __future__ import annotations

from sasl_scram.kafka._apis import API_SPECS, ApiKey, ApiSpec
from sasl_scram.kafka._codec import (
    FrameBuffer,
    RequestHeader,
    api_versions_unsupported_response,
    decode_request,
    decode_request_header,
    decode_response,
    encode_body,
    encode_request,
    encode_response,
    encode_sasl_authenticate_response,
    frame,
    frame_response,
)
from sasl_scram.kafka._errors import (
    ErrorCode,
    KafkaCodecError,
    MalformedMessage,
    UnsupportedRequest,
)

__all__ = [
    "API_SPECS",
    "ApiKey",
    "ApiSpec",
    "ErrorCode",
    "FrameBuffer",
    "KafkaCodecError",
    "MalformedMessage",
    "RequestHeader",
    "UnsupportedRequest",
    "api_versions_unsupported_response",
    "decode_request",
    "decode_request_header",
    "decode_response",
    "encode_body",
    "encode_request",
    "encode_response",
    "encode_sasl_authenticate_response",
    "frame",
    "frame_response",
]
