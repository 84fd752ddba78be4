"""The schema table generated from Kafka's own message specs, and the codec
primitives it needs (uint16, records, nullable and tagged structs).

Against Kafka itself (the specs in its jars, its generated classes):
``test_message_table_kafka.py``."""

from __future__ import annotations

from typing import Any

import pytest

from sasl_scram.kafka._errors import MalformedMessage
from sasl_scram.kafka._message_table import known_api_keys
from sasl_scram.kafka._message_table import message_spec
from sasl_scram.kafka._primitives import Reader
from sasl_scram.kafka._primitives import Writer
from sasl_scram.kafka._schema import RECORDS
from sasl_scram.kafka._schema import UINT16
from sasl_scram.kafka._schema import Array
from sasl_scram.kafka._schema import Field
from sasl_scram.kafka._schema import Struct


def _defaults(struct: Struct, version: int, flexible: bool) -> dict[str, Any]:
    """What reading an empty body must give: each field's default, a struct
    written on the wire read back as its own defaults."""
    out: dict[str, Any] = {}
    for f in struct.fields:
        on_wire = f.present(version) and f.tag is None
        if on_wire and isinstance(f.type, Struct) and not f.null_default:
            out[f.name] = _defaults(f.type, version, flexible)
        else:
            out[f.name] = f.default_value()
    return out


def test_every_version_of_every_api_reads_back_the_defaults_it_writes() -> None:
    checked = 0
    for key in sorted(known_api_keys()):
        spec = message_spec(key)
        for version in range(spec.min_version, spec.max_version + 1):
            flexible = spec.flexible(version)
            request = spec.write_request_body(version, {})
            read = spec.read_request_body(version, request, 0)
            assert read == _defaults(spec.request(version), version, flexible), (key, version)
            assert spec.write_request_body(version, read) == request
            response = spec.write_response_body(version, {})
            read = spec.read_response_body(version, response, 0)
            assert read == _defaults(spec.response(version), version, flexible), (key, version)
            assert spec.write_response_body(version, read) == response
            checked += 1
    assert len(known_api_keys()) == 95 and checked > 350


def test_versions_span_kafka_3_9_and_4_x() -> None:
    produce = message_spec(0)
    # Kafka 4.0 dropped Produce v0-2 (KIP-896); 3.9 brokers still take them.
    assert (produce.min_version, produce.max_version) == (0, 13)
    assert produce.flexible(9) and not produce.flexible(8)
    # ZooKeeper mode's APIs, which 4.x keeps with no valid version, come from 3.9.
    leader_and_isr = message_spec(4)
    assert (leader_and_isr.name, leader_and_isr.max_version) == ("LeaderAndIsr", 7)
    # Unstable versions are left out: 4.4's InitProducerId v6, 3.9's ShareFetch v0.
    assert message_spec(22).max_version == 5
    assert (message_spec(78).min_version, message_spec(78).max_version) == (1, 2)


def test_a_field_only_old_versions_have_is_on_the_wire_only_there() -> None:
    """ListOffsets v0's MaxNumOffsets, which 4.x's spec no longer lists, comes
    back from 3.9's in the one tree, limited to v0."""
    list_offsets = message_spec(2)
    partition = {"partition_index": 0, "timestamp": -1, "max_num_offsets": 7}
    body = {"topics": [{"name": "t", "partitions": [partition]}]}
    v0 = list_offsets.read_request_body(0, list_offsets.write_request_body(0, body), 0)
    assert v0["topics"][0]["partitions"][0]["max_num_offsets"] == 7
    v1 = list_offsets.write_request_body(1, body)
    without = {"topics": [{"name": "t", "partitions": [{"partition_index": 0, "timestamp": -1}]}]}
    assert v1 == list_offsets.write_request_body(1, without)
    # Absent from v1, it reads as its default, as every absent field does.
    assert list_offsets.read_request_body(1, v1, 0)["topics"][0]["partitions"][0] == {
        "partition_index": 0,
        "current_leader_epoch": -1,
        "timestamp": -1,
        "max_num_offsets": 1,
    }


def test_a_known_request_decodes_field_by_field() -> None:
    spec = message_spec(11)  # JoinGroup
    body = {"group_id": "g", "session_timeout_ms": 10, "member_id": "", "protocol_type": "consumer"}
    raw = spec.write_request_body(5, body)
    read = spec.read_request_body(5, raw, 0)
    assert read["group_id"] == "g" and read["session_timeout_ms"] == 10
    assert read["rebalance_timeout_ms"] == -1  # the JSON's default
    with pytest.raises(MalformedMessage):
        spec.read_request_body(5, raw + b"x", 0)


def test_unknown_apis_and_versions() -> None:
    with pytest.raises(KeyError):
        message_spec(999)
    with pytest.raises(MalformedMessage, match="Metadata has no version 14"):
        message_spec(3).request(14)
    assert not message_spec(3).supports(14) and message_spec(3).supports(0)


def test_header_versions_follow_api_message_type() -> None:
    shutdown, api_versions, metadata = message_spec(7), message_spec(18), message_spec(3)
    # ControlledShutdown v0's header has no client id.
    assert [shutdown.request_header_version(v) for v in range(4)] == [0, 1, 1, 2]
    # KIP-511: ApiVersions answers with a v0 header even when flexible.
    assert api_versions.response_header_version(3) == 0
    assert api_versions.request_header_version(3) == 2
    assert metadata.response_header_version(9) == 1 and metadata.response_header_version(8) == 0


def _write(field: Field, value: Any, version: int = 0, flexible: bool = False) -> bytes:
    w = Writer()
    Struct(field).write(w, {field.name: value}, version, flexible)
    return w.getvalue()


def _read(field: Field, data: bytes, version: int = 0, flexible: bool = False) -> Any:
    r = Reader(data)
    value = Struct(field).read(r, version, flexible)[field.name]
    assert not r.remaining()
    return value


def test_uint16_is_two_unsigned_bytes() -> None:
    port = Field("port", UINT16)
    assert _write(port, 65535) == b"\xff\xff" and _read(port, b"\xff\xff") == 65535
    assert _write(port, 32768) == b"\x80\x00" and _read(port, b"\x80\x00") == 32768
    for wrong in (65536, -1):
        with pytest.raises(ValueError, match="not an uint16"):
            _write(port, wrong)
    registration = message_spec(62)  # BrokerRegistration: listeners' ports are uint16
    body = {"listeners": [{"name": "L", "host": "h", "port": 65535, "security_protocol": 0}]}
    raw = registration.write_request_body(1, body)
    assert registration.read_request_body(1, raw, 0)["listeners"][0]["port"] == 65535


def test_records_are_kept_as_the_raw_bytes() -> None:
    records = Field("records", RECORDS, nullable_since=0, null_default=True)
    assert _write(records, None) == b"\xff\xff\xff\xff"  # int32 -1, like bytes
    assert _write(records, None, flexible=True) == b"\x00\x00"  # compact null, no tags
    # Never parsed: anything is a record set to the codec, and it comes back as is.
    batch = b"\x00\x00not a record batch\xff"
    assert _read(records, _write(records, batch)) == batch
    assert _read(records, b"\xff\xff\xff\xff") is None
    produce = message_spec(0)
    body = {"topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": batch}]}]}
    read = produce.read_request_body(9, produce.write_request_body(9, body), 0)
    assert read["topic_data"][0]["partition_data"][0]["records"] == batch
    # A records field that is not nullable (FetchSnapshot's) has no null: None
    # writes its default, no records, as for bytes; a null read is malformed.
    fixed = Field("unaligned_records", RECORDS)
    assert _write(fixed, None) == b"\x00\x00\x00\x00"
    with pytest.raises(MalformedMessage, match="null records"):
        _read(fixed, b"\xff\xff\xff\xff")


def test_nullable_structs() -> None:
    heartbeat = message_spec(68)  # ConsumerGroupHeartbeat: a nullable Assignment struct
    response = heartbeat.write_response_body(0, {"assignment": None})
    assert heartbeat.read_response_body(0, response, 0)["assignment"] is None
    present = heartbeat.write_response_body(0, {"assignment": {"topic_partitions": []}})
    assert heartbeat.read_response_body(0, present, 0)["assignment"] == {"topic_partitions": []}
    # The marker, then the struct: an empty compact array and no tags.
    assert present == response[:-2] + b"\x01\x01\x00" + response[-1:]


def test_a_tagged_struct_at_its_defaults_is_not_written() -> None:
    """Kafka writes a tagged field only when it differs from its default, for a
    struct a new instance (FieldSpec.generateNonDefaultValueCheck)."""
    inner = Struct(Field("epoch", Array(UINT16)), Field("end", UINT16, default=7))
    tagged = Field("diverging", inner, since=0, tag=0)
    assert _write(tagged, None, flexible=True) == b"\x00"
    assert _write(tagged, {"epoch": [], "end": 7}, flexible=True) == b"\x00"
    written = _write(tagged, {"end": 8}, flexible=True)
    assert written == b"\x01\x00\x04\x01\x00\x08\x00"  # one tag: 0, 4 bytes
    assert _read(tagged, written, flexible=True) == {"epoch": [], "end": 8}
    assert _read(tagged, b"\x00", flexible=True) is None
