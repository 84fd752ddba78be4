"""A SaslHandshake v0 on a logged-in front-door connection cannot re-authenticate
(KIP-368 frames its tokens in SaslAuthenticate, v0's come unframed): the edge
answers ILLEGAL_SASL_STATE (34) and closes with that reason, and nothing of
it, nor of what follows, is counted as forwarded."""

from __future__ import annotations

import struct
import urllib.request

import pytest

from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import KafkaConnectionError
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import encode_request

from .conftest import FrontDoor

pytestmark = [pytest.mark.broker, pytest.mark.jvm]


def _forwarded_metadata(door: FrontDoor) -> float:
    url = f"http://127.0.0.1:{door.metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    name = 'kafka_scram_forwarded_requests_total{api="Metadata"} '
    return sum(float(line[len(name) :]) for line in text.splitlines() if line.startswith(name))


def test_a_v0_handshake_after_login_gets_34_and_closes(edge_reauth_door: FrontDoor) -> None:
    door = edge_reauth_door
    before = _forwarded_metadata(door)
    connection = KafkaConnection(door.bootstrap, door.credentials("SCRAM-SHA-512"), timeout=20)
    try:
        handshake = encode_request(
            ApiKey.SASL_HANDSHAKE, 0, 901, "t", {"mechanism": "SCRAM-SHA-512"}
        )
        metadata = encode_request(ApiKey.METADATA, 12, 902, "t", {"topics": [],
                                  "allow_auto_topic_creation": False})  # fmt: skip
        answer = connection.raw_request(handshake + metadata)
        correlation, error = struct.unpack_from(">ih", answer)
        assert (correlation, error) == (901, 34)
        with pytest.raises(KafkaConnectionError):
            connection.raw_request(metadata)
    finally:
        connection.close()
    assert "SaslHandshake v1" in door.log_tail(200)
    assert _forwarded_metadata(door) == before
