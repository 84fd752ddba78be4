"""The wire codec against Kafka's generated message classes, an implementation nobody
here wrote (``org.apache.kafka.common.message.*Data`` in kafka-clients 4.4.0 and 3.9.2).

For every API and version the endpoint speaks, generated messages (nulls, empty and
non-empty arrays, tagged fields, any Unicode) go both ways, with their headers:

- ours writes the payload; Kafka reads all of it and writes back the same bytes;
- Kafka writes the same message from its JSON form (its own ``*JsonConverter``), so the
  bytes come from Kafka's code alone: they equal ours, and ours reads them back to the
  message. A swapped pair of same-typed fields would survive the first check, not this.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from sasl_scram.kafka import API_SPECS
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import api_versions_unsupported_response
from sasl_scram.kafka import decode_request
from sasl_scram.kafka import decode_response
from sasl_scram.kafka import encode_request
from sasl_scram.kafka import encode_response
from sasl_scram.kafka import encode_sasl_authenticate_response
from tests.sasl_scram.kafka.kafka_classes import KafkaMessageClasses
from tests.sasl_scram.kafka.kafka_classes import kafka_json
from tests.sasl_scram.kafka.kafka_classes import open_all
from tests.sasl_scram.kafka.test_codec import ALL_VERSIONS
from tests.sasl_scram.kafka.test_codec import assert_contains
from tests.sasl_scram.kafka.test_codec import sample_value

INT32 = st.integers(-(2**31), 2**31 - 1)
CLIENT_IDS = st.one_of(st.none(), st.text(max_size=12))


@pytest.fixture(scope="module")
def kafkas() -> Iterator[list[KafkaMessageClasses]]:
    peers = open_all()
    yield peers
    for peer in peers:
        peer.close()


def _speaking(kafkas: list[KafkaMessageClasses], key: int, version: int) -> list[Any]:
    return [k for k in kafkas if k.supported(key)[0] <= version <= k.supported(key)[1]]


def test_kafka_has_every_version_we_speak(kafkas: list[KafkaMessageClasses]) -> None:
    """Each version of ours is checked below against at least one Kafka's classes."""
    unchecked = [(key, v) for key, v in ALL_VERSIONS if not _speaking(kafkas, key, v)]
    assert unchecked == []


def _request_round_trip(
    kafka: KafkaMessageClasses, key: int, version: int, body: dict[str, Any], corr: int, cid: Any
) -> None:
    spec = API_SPECS[key]
    payload = encode_request(key, version, corr, cid, body)[4:]
    header = {
        "requestApiKey": key,
        "requestApiVersion": version,
        "correlationId": corr,
        "clientId": cid,
    }
    message = {
        "header": header,
        "body": kafka_json(spec.request, body, version, spec.flexible(version)),
    }
    written = kafka.write("req", key, version, payload, message)
    assert written.reread.hex() == payload.hex(), "Kafka read ours and wrote other bytes"
    assert written.from_json.hex() == payload.hex(), "Kafka writes this message otherwise"
    got_header, _, got = decode_request(written.from_json)
    assert (got_header.api_key, got_header.api_version) == (key, version)
    assert (got_header.correlation_id, got_header.client_id) == (corr, cid)
    assert_contains(body, got)


def _response_round_trip(
    kafka: KafkaMessageClasses, key: int, version: int, body: dict[str, Any], corr: int
) -> None:
    spec = API_SPECS[key]
    payload = encode_response(key, version, corr, body)[4:]
    json_body = kafka_json(spec.response, body, version, spec.flexible(version))
    message = {"header": {"correlationId": corr}, "body": json_body}
    written = kafka.write("resp", key, version, payload, message)
    assert written.reread.hex() == payload.hex(), "Kafka read ours and wrote other bytes"
    assert written.from_json.hex() == payload.hex(), "Kafka writes this message otherwise"
    got_corr, got = decode_response(key, version, written.from_json)
    assert got_corr == corr
    assert_contains(body, got)
    if key == ApiKey.SASL_AUTHENTICATE:
        # The hot path's own encoder, beside the schema's.
        fast = encode_sasl_authenticate_response(
            version,
            corr,
            body["error_code"],
            body["error_message"],
            body["auth_bytes"],
            body.get("session_lifetime_ms", 0),
        )
        assert fast[4:].hex() == written.from_json.hex()


@pytest.mark.parametrize(("key", "version"), ALL_VERSIONS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), corr=INT32, cid=CLIENT_IDS)
def test_kafka_classes_write_our_bytes(
    kafkas: list[KafkaMessageClasses],
    key: int,
    version: int,
    data: st.DataObject,
    corr: int,
    cid: str | None,
) -> None:
    spec = API_SPECS[key]
    flexible = spec.flexible(version)
    request = sample_value(spec.request, version, flexible, data.draw)
    response = sample_value(spec.response, version, flexible, data.draw)
    if key == ApiKey.API_VERSIONS and response["error_code"] == 35:
        # KIP-511: error 35 means a v0 body whatever the version; checked below.
        response["error_code"] = 0
    for kafka in _speaking(kafkas, key, version):
        _request_round_trip(kafka, key, version, request, corr, cid)
        _response_round_trip(kafka, key, version, response, corr)


def test_api_versions_unsupported_answer_is_kafkas_v0_body(
    kafkas: list[KafkaMessageClasses],
) -> None:
    """KIP-511: the answer to a too-new ApiVersions is a v0 body Kafka reads as such."""
    payload = api_versions_unsupported_response(7)[4:]
    spec = API_SPECS[ApiKey.API_VERSIONS]
    body = {
        "error_code": 35,
        "api_keys": [{"api_key": 18, "min_version": spec.min_version, "max_version": 4}],
    }
    message = {"header": {"correlationId": 7}, "body": kafka_json(spec.response, body, 0, False)}
    for kafka in kafkas:
        written = kafka.write("resp", ApiKey.API_VERSIONS, 0, payload, message)
        assert written.reread == written.from_json == payload
