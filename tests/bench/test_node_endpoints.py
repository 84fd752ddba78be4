"""The bench's NodeEndpoints walker (bench/_node_endpoints.py) on hand-built
Fetch v16 and Produce v10 responses, laid out as Kafka's FetchResponse.json and
ProduceResponse.json say: it must find the top-level tagged fields behind
every topic, partition and record set, and rewrite only the endpoints."""

from __future__ import annotations

import struct

import pytest

from bench._node_endpoints import FETCH
from bench._node_endpoints import PRODUCE
from bench._node_endpoints import NodeEndpoint
from bench._node_endpoints import encode_endpoints
from bench._node_endpoints import encode_tags
from bench._node_endpoints import node_endpoints
from bench._node_endpoints import rewrite_node_endpoints
from bench._node_endpoints import tags_offset
from sasl_scram.kafka import MalformedMessage

TOPIC_ID = bytes(range(16))
# Record bytes that would read as a tagged-field section if not skipped whole.
RECORDS = b"\x01\x00\x07" * 700
ENDPOINTS = [
    NodeEndpoint(1, "broker-1.internal", 9092, "rack-a"),
    NodeEndpoint(2, "broker-2.internal", 19092, None),
]
# An unknown top-level tag, kept as it came.
OTHER_TAG = {5: b"kept"}


def _partition_head(index: int, error: int) -> bytes:
    return struct.pack(">ihqqq", index, error, 100, 100, 0)


def fetch_v16(tags: dict[int, bytes]) -> tuple[bytes, int]:
    """A Fetch v16 response payload and where its top-level tags start."""
    body = struct.pack(">i", 7) + b"\x00"  # correlation id; header tags
    body += struct.pack(">ihi", 0, 0, 0) + b"\x02" + TOPIC_ID + b"\x03"
    # Partition 0: one aborted transaction, 2100 bytes of records (2101 as a uvarint).
    body += _partition_head(0, 0) + b"\x02" + struct.pack(">qq", 5, 6) + b"\x00"
    body += struct.pack(">i", -1) + b"\xb5\x10" + RECORDS + b"\x00"
    # Partition 1: NOT_LEADER_OR_FOLLOWER, CurrentLeader (tag 1), no records.
    body += _partition_head(1, 6) + b"\x00" + struct.pack(">i", -1) + b"\x00"
    body += b"\x01\x01\x08" + struct.pack(">ii", 2, 3)
    body += b"\x00"  # the topic's tags
    return body + encode_tags(tags), len(body)


def produce_v10(tags: dict[int, bytes]) -> tuple[bytes, int]:
    body = struct.pack(">i", 9) + b"\x00" + b"\x02" + b"\x06topic"
    body += b"\x02" + _partition_head(0, 6) + b"\x02" + struct.pack(">i", 3) + b"\x04bad\x00"
    body += b"\x06error" + b"\x00" + b"\x00" + struct.pack(">i", 0)
    return body + encode_tags(tags), len(body)


def port_of(node_id: int) -> int:
    return 40000 + node_id


@pytest.mark.parametrize(
    ("api_key", "version", "build"), [(FETCH, 16, fetch_v16), (PRODUCE, 10, produce_v10)]
)
def test_the_walker_finds_and_rewrites_the_node_endpoints(
    api_key: int, version: int, build: object
) -> None:
    assert callable(build)
    payload, at = build({0: encode_endpoints(ENDPOINTS), **OTHER_TAG})
    assert tags_offset(api_key, version, payload) == at
    assert node_endpoints(api_key, version, payload) == ENDPOINTS

    new = rewrite_node_endpoints(api_key, version, payload, "door", port_of)

    assert new[:at] == payload[:at]  # records and everything before them untouched
    assert node_endpoints(api_key, version, new) == [
        NodeEndpoint(1, "door", 40001, "rack-a"),
        NodeEndpoint(2, "door", 40002, None),
    ]
    expected, _ = build({0: encode_endpoints(node_endpoints(api_key, version, new)), **OTHER_TAG})
    assert new == expected


def test_a_response_without_node_endpoints_is_passed_back_unchanged() -> None:
    payload, _ = fetch_v16(OTHER_TAG)
    assert node_endpoints(FETCH, 16, payload) == []
    assert rewrite_node_endpoints(FETCH, 16, payload, "door", port_of) is payload
    # Before KIP-951's versions there is nothing to look for.
    assert rewrite_node_endpoints(FETCH, 15, b"", "door", port_of) == b""


def test_a_truncated_or_overlong_response_is_malformed() -> None:
    payload, _ = fetch_v16({0: encode_endpoints(ENDPOINTS)})
    with pytest.raises(MalformedMessage):
        rewrite_node_endpoints(FETCH, 16, payload[:-3], "door", port_of)
    with pytest.raises(MalformedMessage):
        rewrite_node_endpoints(FETCH, 16, payload + b"\x00", "door", port_of)
