"""The generated schema table against Kafka itself: its specs and its classes
(``org.apache.kafka.common.message.*Data`` in kafka-clients 4.4.0 and 3.9.2).

- The committed module is what ``tools/gen_kafka_schemas.py`` writes from the
  cached jars, byte for byte, and each API's versions are the stable ones
  Kafka's own ``ApiMessageType`` gives, over both Kafkas.
- For every API and version, what Kafka writes for a new message object (every
  field at its default) is what we write for an empty body, and we read it
  back to itself.
- For every API and version, and with more examples for a dozen the clients
  send, generated messages (nulls, empty and non-empty arrays, nullable
  structs, tagged fields, records as opaque bytes) go both ways with their
  headers: Kafka reads all of ours and writes back the same bytes, Kafka
  writes the same bytes from the message's JSON form (its own
  ``*JsonConverter``), and ours reads Kafka's bytes back to the message.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from sasl_scram.kafka import MalformedMessage
from sasl_scram.kafka._message_table import MessageSpec
from sasl_scram.kafka._message_table import _struct
from sasl_scram.kafka._message_table import known_api_keys
from sasl_scram.kafka._message_table import message_spec
from sasl_scram.kafka._primitives import Writer
from sasl_scram.kafka._schema import Array
from sasl_scram.kafka._schema import Struct
from tests.sasl_scram.kafka.kafka_classes import KafkaMessageClasses
from tests.sasl_scram.kafka.kafka_classes import kafka_json
from tests.sasl_scram.kafka.kafka_classes import open_all
from tests.sasl_scram.kafka.test_codec import assert_contains
from tests.sasl_scram.kafka.test_codec import sample_value
from tools.gen_kafka_schemas import jar
from tools.gen_kafka_schemas import read_jar

ROOT = Path(__file__).resolve().parents[3]
INT32 = st.integers(-(2**31), 2**31 - 1)
CLIENT_IDS = st.one_of(st.none(), st.text(max_size=12))

EVERY_VERSION = [
    (key, version)
    for key in sorted(known_api_keys())
    for version in range(message_spec(key).min_version, message_spec(key).max_version + 1)
]
#: What clients send most, and what the front door's authorization reads:
#: Produce, Fetch, Metadata, OffsetCommit, DescribeGroups, ListGroups,
#: CreateTopics, DescribeAcls, CreateAcls, DeleteAcls, DescribeConfigs,
#: IncrementalAlterConfigs.
CLIENT_APIS = frozenset({0, 1, 3, 8, 15, 16, 19, 29, 30, 31, 32, 44})


@pytest.fixture(scope="module")
def kafkas() -> Iterator[list[KafkaMessageClasses]]:
    peers = open_all()
    yield peers
    for peer in peers:
        peer.close()


def _speaking(kafkas: list[KafkaMessageClasses], key: int, version: int) -> list[Any]:
    return [k for k in kafkas if (r := k.stable(key)) is not None and r[0] <= version <= r[1]]


def test_the_committed_table_is_what_kafka_gives(
    kafkas: list[KafkaMessageClasses], tmp_path: Path
) -> None:
    out = tmp_path / "_message_data.py"
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_kafka_schemas.py"), "--output", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    committed = ROOT / "sasl_scram" / "kafka" / "_message_data.py"
    assert out.read_bytes() == committed.read_bytes(), "run tools/gen_kafka_schemas.py"
    for key in range(max(known_api_keys()) + 10):
        ranges = [r for k in kafkas if (r := k.stable(key)) is not None and r[0] <= r[1]]
        expected = (min(r[0] for r in ranges), max(r[1] for r in ranges)) if ranges else None
        if key in known_api_keys():
            spec = message_spec(key)
            assert (spec.min_version, spec.max_version) == expected, spec.name
        else:
            assert expected is None, key


@pytest.mark.parametrize(("key", "version"), EVERY_VERSION)
def test_kafkas_new_message_is_our_empty_body(
    kafkas: list[KafkaMessageClasses], key: int, version: int
) -> None:
    spec = message_spec(key)
    speaking = _speaking(kafkas, key, version)
    assert speaking, f"no Kafka speaks {spec.name} v{version}"
    for kafka in speaking:
        theirs = kafka.empty("req", key, version)
        assert spec.write_request_body(version, {}).hex() == theirs.hex()
        read = spec.read_request_body(version, theirs, 0)
        assert spec.write_request_body(version, read) == theirs
        theirs = kafka.empty("resp", key, version)
        assert spec.write_response_body(version, {}).hex() == theirs.hex()
        read = spec.read_response_body(version, theirs, 0)
        assert spec.write_response_body(version, read) == theirs


def _header(spec: MessageSpec, kind: str, version: int, corr: int, cid: str | None) -> bytes:
    """Our request or response header, as ``ApiMessageType`` picks its version."""
    w = Writer()
    if kind == "req":
        w.int16(spec.api_key)
        w.int16(version)
        w.int32(corr)
        header_version = spec.request_header_version(version)
        if header_version >= 1:
            w.string(cid, False)  # always the classic string (KIP-482)
        if header_version == 2:
            w.uvarint(0)
    else:
        w.int32(corr)
        if spec.response_header_version(version) == 1:
            w.uvarint(0)
    return w.getvalue()


def _json_header(spec: MessageSpec, kind: str, version: int, corr: int, cid: str | None) -> Any:
    if kind == "resp":
        return {"correlationId": corr}
    header: dict[str, Any] = {
        "requestApiKey": spec.api_key,
        "requestApiVersion": version,
        "correlationId": corr,
    }
    if spec.request_header_version(version) >= 1:
        header["clientId"] = cid
    return header


@functools.cache
def _own_trees(kafka_version: str) -> dict[int, tuple[Struct, Struct]]:
    """One Kafka's own request and response trees, with its own field names."""
    apis = read_jar(jar(kafka_version)).items()
    return {key: (_struct(req[4]), _struct(resp[4])) for key, (req, resp) in apis}


def _renamed(ours: Struct, theirs: Struct, value: Any, version: int, flexible: bool) -> Any:
    """``value`` keyed by ``theirs``'s names: Kafka 4.x renamed some fields of
    versions 3.9 defines too (TxnOffsetCommit's ``GenerationId`` is
    ``GenerationIdOrMemberEpoch``), which its JSON form spells out. The fields
    present at ``version`` are the same, in the same order (the generator checks)."""
    if value is None:
        return None

    def here(struct: Struct) -> list[Any]:
        return [f for f in struct.fields if f.present(version) and (f.tag is None or flexible)]

    out = {}
    for mine, other in zip(here(ours), here(theirs), strict=True):
        v = value.get(mine.name, mine.default_value())
        t, u = mine.type, other.type
        if isinstance(t, Struct) and isinstance(u, Struct):
            v = _renamed(t, u, v, version, flexible)
        elif isinstance(t, Array) and isinstance(u, Array) and isinstance(t.element, Struct):
            assert isinstance(u.element, Struct)
            el, other_el = t.element, u.element
            v = None if v is None else [_renamed(el, other_el, x, version, flexible) for x in v]
        out[other.name] = v
    return out


def _as_read(struct: Struct, value: Any, version: int, flexible: bool) -> Any:
    """``value`` as a read gives it back: a tagged struct at its defaults is not
    written (Kafka's rule, and ours), so it reads as absent (None)."""
    if value is None:
        return None
    out = dict(value)
    for f in struct.fields:
        if f.name not in out:
            continue
        t = f.type
        if isinstance(t, Struct):
            if f.tag is not None and not f.null_default:
                written, default = Writer(), Writer()
                t.write(written, value[f.name], version, flexible)
                t.write(default, {}, version, flexible)
                if written.getvalue() == default.getvalue():
                    out[f.name] = None
                    continue
            out[f.name] = _as_read(t, value[f.name], version, flexible)
        elif isinstance(t, Array) and isinstance(t.element, Struct) and value[f.name] is not None:
            element = t.element
            out[f.name] = [_as_read(element, v, version, flexible) for v in value[f.name]]
    return out


def _both_ways(
    kafka: KafkaMessageClasses,
    spec: MessageSpec,
    kind: str,
    version: int,
    body: dict[str, Any],
    corr: int,
    cid: str | None,
) -> None:
    flexible = spec.flexible(version)
    header = _header(spec, kind, version, corr, cid)
    if kind == "req":
        struct, ours = spec.request(version), spec.write_request_body(version, body)
    else:
        struct, ours = spec.response(version), spec.write_response_body(version, body)
    payload = header + ours
    theirs = _own_trees(kafka.version)[spec.api_key][0 if kind == "req" else 1]
    message = {
        "header": _json_header(spec, kind, version, corr, cid),
        "body": kafka_json(
            theirs, _renamed(struct, theirs, body, version, flexible), version, flexible
        ),
    }
    written = kafka.write(kind, spec.api_key, version, payload, message)
    assert written.reread.hex() == payload.hex(), "Kafka read ours and wrote other bytes"
    assert written.from_json.hex() == payload.hex(), "Kafka writes this message otherwise"
    if kind == "req":
        read = spec.read_request_body(version, written.from_json, len(header))
    else:
        read = spec.read_response_body(version, written.from_json, len(header))
    assert_contains(_as_read(struct, body, version, flexible), read)


def _check_samples(
    kafkas: list[KafkaMessageClasses],
    key: int,
    version: int,
    data: st.DataObject,
    corr: int,
    cid: str | None,
) -> None:
    spec = message_spec(key)
    flexible = spec.flexible(version)
    request = sample_value(spec.request(version), version, flexible, data.draw)
    response = sample_value(spec.response(version), version, flexible, data.draw)
    for kafka in _speaking(kafkas, key, version):
        _both_ways(kafka, spec, "req", version, request, corr, cid)
        _both_ways(kafka, spec, "resp", version, response, corr, None)


@pytest.mark.parametrize(("key", "version"), EVERY_VERSION)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), corr=INT32, cid=CLIENT_IDS)
def test_kafka_writes_our_bytes_for_every_api(
    kafkas: list[KafkaMessageClasses],
    key: int,
    version: int,
    data: st.DataObject,
    corr: int,
    cid: str | None,
) -> None:
    _check_samples(kafkas, key, version, data, corr, cid)


@pytest.mark.parametrize(("key", "version"), [kv for kv in EVERY_VERSION if kv[0] in CLIENT_APIS])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), corr=INT32, cid=CLIENT_IDS)
def test_kafka_writes_our_bytes_for_the_client_apis(
    kafkas: list[KafkaMessageClasses],
    key: int,
    version: int,
    data: st.DataObject,
    corr: int,
    cid: str | None,
) -> None:
    _check_samples(kafkas, key, version, data, corr, cid)


def test_a_tagged_struct_at_its_defaults_is_left_out_as_kafka_does(
    kafkas: list[KafkaMessageClasses],
) -> None:
    """Kafka writes a tagged field only when it differs from its default, for a
    struct a new instance: Fetch's DivergingEpoch (-1, -1) is not written."""
    spec = message_spec(1)
    at_defaults = {"epoch": -1, "end_offset": -1}
    partition = {"partition_index": 3, "diverging_epoch": at_defaults, "records": b"batch"}
    body = {"responses": [{"topic": "t", "partitions": [partition]}]}
    for kafka in kafkas:
        _both_ways(kafka, spec, "resp", 12, body, 7, None)
    moved = {**partition, "diverging_epoch": {"epoch": 5, "end_offset": 9}}
    written = spec.write_response_body(12, {"responses": [{"topic": "t", "partitions": [moved]}]})
    assert len(written) > len(spec.write_response_body(12, body))
    for kafka in kafkas:
        _both_ways(kafka, spec, "resp", 12, {"responses": [{"partitions": [moved]}]}, 7, None)


def test_a_null_element_of_a_string_array_is_refused_as_kafka_refuses_it(
    kafkas: list[KafkaMessageClasses],
) -> None:
    """A KIP-848 heartbeat subscribing to a null topic name: Kafka's generated
    reader refuses it (so the broker closes the connection), and so does ours."""
    spec = message_spec(68)
    body = {"group_id": "g", "member_id": "m", "subscribed_topic_names": ["orders"]}
    header = _header(spec, "req", 0, 7, "c")
    payload = header + spec.write_request_body(0, body).replace(b"\x07orders", b"\x00")
    with pytest.raises(MalformedMessage, match="null element of 'subscribed_topic_names'"):
        spec.read_request_body(0, payload, len(header))
    message = {"header": _json_header(spec, "req", 0, 7, "c"), "body": {}}
    for kafka in _speaking(kafkas, 68, 0):
        with pytest.raises(AssertionError, match="element was serialized as null"):
            kafka.write("req", 68, 0, payload, message)
