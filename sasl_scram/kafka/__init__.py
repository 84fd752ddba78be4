"""The Kafka wire protocol subset this project speaks, sans-IO.

Schemas are data (:mod:`._apis`; every API's, generated from Kafka's own
specs, through :func:`message_spec`); one generic codec encodes and decodes
requests and responses for both the endpoint and our own admin client.
"""

from __future__ import annotations

from sasl_scram.kafka._apis import ADDRESS_API_SPECS
from sasl_scram.kafka._apis import API_SPECS
from sasl_scram.kafka._apis import ApiKey
from sasl_scram.kafka._apis import ApiSpec
from sasl_scram.kafka._codec import FrameBuffer
from sasl_scram.kafka._codec import RequestHeader
from sasl_scram.kafka._codec import api_versions_unsupported_response
from sasl_scram.kafka._codec import decode_request
from sasl_scram.kafka._codec import decode_request_header
from sasl_scram.kafka._codec import decode_response
from sasl_scram.kafka._codec import encode_body
from sasl_scram.kafka._codec import encode_request
from sasl_scram.kafka._codec import encode_response
from sasl_scram.kafka._codec import encode_sasl_authenticate_response
from sasl_scram.kafka._codec import frame
from sasl_scram.kafka._codec import frame_response
from sasl_scram.kafka._errors import ErrorCode
from sasl_scram.kafka._errors import KafkaCodecError
from sasl_scram.kafka._errors import MalformedMessage
from sasl_scram.kafka._errors import UnsupportedRequest
from sasl_scram.kafka._message_table import MessageSpec
from sasl_scram.kafka._message_table import known_api_keys
from sasl_scram.kafka._message_table import message_spec
from sasl_scram.kafka._software import SOFTWARE_NAME
from sasl_scram.kafka._software import SOFTWARE_PATTERN
from sasl_scram.kafka._software import client_software

__all__ = [
    "ADDRESS_API_SPECS",
    "API_SPECS",
    "SOFTWARE_NAME",
    "SOFTWARE_PATTERN",
    "ApiKey",
    "ApiSpec",
    "ErrorCode",
    "FrameBuffer",
    "KafkaCodecError",
    "MalformedMessage",
    "MessageSpec",
    "RequestHeader",
    "UnsupportedRequest",
    "api_versions_unsupported_response",
    "client_software",
    "decode_request",
    "decode_request_header",
    "decode_response",
    "encode_body",
    "encode_request",
    "encode_response",
    "encode_sasl_authenticate_response",
    "frame",
    "frame_response",
    "known_api_keys",
    "message_spec",
]
