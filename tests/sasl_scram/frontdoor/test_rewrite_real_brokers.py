"""Address rewriting on real responses from Kafka 4.x (KRaft) and 3.9 (ZooKeeper).

Each response with broker addresses, in every version the broker and our
schemas share, is captured as bytes: decoded and encoded again it is the
same bytes, and rewritten it differs only in hosts and ports.
"""

from __future__ import annotations

import struct
from typing import Any

from sasl_scram.frontdoor import AddressRewriter
from sasl_scram.kafka import ADDRESS_API_SPECS
from sasl_scram.kafka import ApiKey
from tests.support.kafka_broker import KafkaBroker

FRONT_HOST = "edge.example"
BASE = 19000
_HEADER = struct.Struct(">hhih")
_CLIENT_ID = b"frontdoor-tests"


def _request(api_key: int, version: int, correlation_id: int, body: dict[str, Any]) -> bytes:
    spec = ADDRESS_API_SPECS[api_key]
    header = _HEADER.pack(api_key, version, correlation_id, len(_CLIENT_ID)) + _CLIENT_ID
    if spec.flexible(version):
        header += b"\x00"  # request header v2: no tagged fields
    payload = header + spec.write_request_body(version, body)
    return struct.pack(">i", len(payload)) + payload


def _bodies(api_key: int, version: int) -> list[dict[str, Any]]:
    if api_key == ApiKey.METADATA:
        everything: dict[str, Any] = {"topics": [] if version == 0 else None}
        if version < 4:
            # Naming a topic would create it on the shared broker before v4
            # (auto.create.topics.enable, no per-request flag yet).
            return [everything]
        topics = [{"name": "frontdoor-probe"}]
        return [{"topics": topics, "allow_auto_topic_creation": False}, everything]
    if api_key == ApiKey.FIND_COORDINATOR:
        # A group (found) and a transactional id (usually not yet: node id -1).
        return [
            {"key": "fd-group", "key_type": 0, "coordinator_keys": ["fd-group", "fd-other"]},
            {"key": "fd-txn", "key_type": 1, "coordinator_keys": ["fd-txn"]},
        ]
    return [{"include_cluster_authorized_operations": True}]


def _captures(broker: KafkaBroker) -> list[tuple[int, int, bytes]]:
    out = []
    with broker.connect() as conn:
        theirs = conn.broker_versions
        correlation_id = 1000
        # Metadata last: a group's FindCoordinator has the broker create
        # __consumer_offsets, whose partitions then fill Metadata's topics.
        for api_key, spec in sorted(ADDRESS_API_SPECS.items(), reverse=True):
            low, high = theirs[api_key]
            for version in range(max(low, spec.min_version), min(high, spec.max_version) + 1):
                for body in _bodies(api_key, version):
                    correlation_id += 1
                    payload = conn.raw_request(_request(api_key, version, correlation_id, body))
                    assert struct.unpack_from(">i", payload)[0] == correlation_id
                    out.append((api_key, version, payload))
    return out


def _endpoints(api_key: int, version: int, body: dict[str, Any]) -> list[dict[str, Any]]:
    if api_key == ApiKey.FIND_COORDINATOR:
        return [body] if version <= 3 else body["coordinators"]
    return list(body["brokers"])


def test_real_address_responses_round_trip_and_rewrite(kafka_broker: KafkaBroker) -> None:
    captures = _captures(kafka_broker)
    seen = {(api_key, version) for api_key, version, _ in captures}
    # Both brokers answer every version of the three APIs our schemas have
    # (DescribeCluster v2 from Kafka 4.0 only).
    expected_cluster = 3 if kafka_broker.kraft else 2
    assert len([k for k, _ in seen if k == ApiKey.DESCRIBE_CLUSTER]) == expected_cluster
    assert len([k for k, _ in seen if k == ApiKey.FIND_COORDINATOR]) == 7
    assert len([k for k, _ in seen if k == ApiKey.METADATA]) >= 13
    rewriter = AddressRewriter(FRONT_HOST, BASE)
    for api_key, version, payload in captures:
        spec = ADDRESS_API_SPECS[api_key]
        start, body, end = spec.read_response_body(version, payload)
        assert end == len(payload), (api_key, version)
        assert payload[:start] + spec.write_response_body(version, body) == payload
        rewritten = rewriter.rewrite(api_key, version, payload)
        _, new_body, _ = spec.read_response_body(version, rewritten)
        assert rewritten[:start] == payload[:start]
        for node, new in zip(
            _endpoints(api_key, version, body), _endpoints(api_key, version, new_body), strict=True
        ):
            node_id: int = node["node_id"] if "node_id" in node else node["broker_id"]
            if node_id == -1:
                assert new == node
                continue
            assert (new["host"], new["port"]) == (FRONT_HOST, BASE + node_id)
            assert node["port"] == int(kafka_broker.bootstrap.rpartition(":")[2])
            node.update(host=FRONT_HOST, port=BASE + node_id)
        assert new_body == body, (api_key, version)
