"""The scaling row's load generator (bench/_fetch_load.py) writes Fetch v15 by
hand: its request, field by field as Kafka's FetchRequest.json lays v15 out."""

from __future__ import annotations

import struct
import uuid

from bench import _fetch_load
from sasl_scram.kafka import decode_request_header

TOPIC_ID = uuid.UUID("12345678-9abc-def0-1234-56789abcdef0").bytes


def test_the_fetch_is_framed_with_a_v2_header() -> None:
    request = _fetch_load.fetch_request(TOPIC_ID, 7, 65536)
    (size,) = struct.unpack(">i", request[:4])
    assert size == len(request) - 4
    header, _ = decode_request_header(request[4:])
    assert (header.api_key, header.api_version, header.correlation_id) == (1, 15, 7)
    assert header.client_id == "fetch-load"


def test_the_body_asks_for_partition_zero_from_offset_zero_by_topic_id() -> None:
    request = _fetch_load.fetch_request(TOPIC_ID, 7, 65536)
    body = request[4 + 2 + 2 + 4 + 2 + len("fetch-load") + 1 :]  # after the header's tags
    # v15 has no ReplicaId (KIP-903 moved it to ReplicaState, a tagged field):
    # MaxWaitMs, MinBytes, MaxBytes, IsolationLevel, SessionId, SessionEpoch.
    assert struct.unpack(">iiibii", body[:21]) == (0, 1, 50 << 20, 0, 0, -1)
    # One topic (compact array: count + 1), by id, with one partition.
    assert body[21] == 2 and body[22:38] == TOPIC_ID and body[38] == 2
    # Partition, CurrentLeaderEpoch, FetchOffset, LastFetchedEpoch,
    # LogStartOffset, PartitionMaxBytes; then the partition's and topic's tags.
    assert struct.unpack(">iiqiqi", body[39:71]) == (0, -1, 0, -1, -1, 65536)
    # No forgotten topics, rack "", no tags: nothing after.
    assert body[71:] == b"\x00\x00\x01\x01\x00"
