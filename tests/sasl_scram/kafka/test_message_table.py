"""The schema table generated from Kafka's own message specs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sasl_scram.kafka._errors import MalformedMessage
from sasl_scram.kafka._message_table import known_api_keys
from sasl_scram.kafka._message_table import message_spec

ROOT = Path(__file__).resolve().parents[3]
JARS = [
    Path.home() / ".cache" / "kafka-scram" / f"kafka-{v}" / "libs" / f"kafka-clients-{v}.jar"
    for v in ("4.4.0", "3.9.2")
]


def test_the_committed_table_is_what_kafkas_specs_give() -> None:
    if not all(jar.exists() for jar in JARS):
        pytest.skip("Kafka's distributions are not cached yet (make brokers)")
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_kafka_schemas.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_every_version_of_every_api_writes_and_reads_back_its_defaults() -> None:
    checked = 0
    for key in sorted(known_api_keys()):
        spec = message_spec(key)
        for version in range(spec.min_version, spec.max_version + 1):
            request = spec.write_request_body(version, {})
            assert (
                spec.write_request_body(version, spec.read_request_body(version, request, 0))
                == request
            )
            response = spec.write_response_body(version, {})
            assert (
                spec.write_response_body(version, spec.read_response_body(version, response, 0))
                == response
            )
            checked += 1
    assert checked > 300  # about 95 APIs, 350 versions


def test_versions_span_kafka_3_9_and_4_x() -> None:
    produce, list_offsets = message_spec(0), message_spec(2)
    # Kafka 4.0 dropped Produce v0-2 (KIP-896); 3.9 brokers still take them.
    assert (produce.min_version, produce.max_version) == (0, 13)
    assert produce.flexible(9) and not produce.flexible(8)
    # ListOffsets v0 has MaxNumOffsets, which 4.x's spec no longer lists.
    partition = {"partition_index": 0, "timestamp": -1, "max_num_offsets": 7}
    body = {"topics": [{"name": "t", "partitions": [partition]}]}
    v0 = list_offsets.read_request_body(0, list_offsets.write_request_body(0, body), 0)
    assert v0["topics"][0]["partitions"][0]["max_num_offsets"] == 7
    v1 = list_offsets.read_request_body(1, list_offsets.write_request_body(1, body), 0)
    assert "max_num_offsets" not in v1["topics"][0]["partitions"][0]


def test_a_known_request_decodes_field_by_field() -> None:
    spec = message_spec(11)  # JoinGroup
    body = {"group_id": "g", "session_timeout_ms": 10, "member_id": "", "protocol_type": "consumer"}
    raw = spec.write_request_body(5, body)
    read = spec.read_request_body(5, raw, 0)
    assert read["group_id"] == "g" and read["session_timeout_ms"] == 10
    assert read["rebalance_timeout_ms"] == -1  # the JSON's default
    with pytest.raises(MalformedMessage):
        spec.read_request_body(5, raw + b"x", 0)


def test_uint16_and_nullable_structs() -> None:
    registration = message_spec(62)  # BrokerRegistration: listeners' ports are uint16
    body = {"listeners": [{"name": "L", "host": "h", "port": 65535, "security_protocol": 0}]}
    raw = registration.write_request_body(1, body)
    assert registration.read_request_body(1, raw, 0)["listeners"][0]["port"] == 65535
    heartbeat = message_spec(68)  # ConsumerGroupHeartbeat: a nullable Assignment struct
    response = heartbeat.write_response_body(0, {"assignment": None})
    assert heartbeat.read_response_body(0, response, 0)["assignment"] is None
    present = heartbeat.write_response_body(0, {"assignment": {"topic_partitions": []}})
    assert heartbeat.read_response_body(0, present, 0)["assignment"] == {"topic_partitions": []}
    # The marker, then the struct: an empty compact array and no tags.
    assert present == response[:-2] + b"\x01\x01\x00" + response[-1:]
