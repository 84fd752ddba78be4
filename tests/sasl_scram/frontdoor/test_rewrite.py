"""Address rewriting on built responses: which endpoints change, what stays."""

from __future__ import annotations

import struct
from typing import Any

import pytest

from sasl_scram.frontdoor import REWRITTEN_APIS
from sasl_scram.frontdoor import AddressRewriter
from sasl_scram.frontdoor import PeerProtocolError
from sasl_scram.kafka import ADDRESS_API_SPECS
from sasl_scram.kafka import ApiKey

REWRITER = AddressRewriter("edge", 9100)


def payload(api_key: int, version: int, body: dict[str, Any], header_tags: bytes = b"") -> bytes:
    spec = ADDRESS_API_SPECS[api_key]
    head = struct.pack(">i", 5)
    if spec.response_header_version(version) == 1:
        head += header_tags or b"\x00"
    return head + spec.write_response_body(version, body)


def decode(api_key: int, version: int, data: bytes) -> dict[str, Any]:
    return ADDRESS_API_SPECS[api_key].read_response_body(version, data)[1]


def test_rewritten_apis() -> None:
    assert frozenset({3, 10, 60}) == REWRITTEN_APIS


@pytest.mark.parametrize("version", [0, 3])
def test_find_coordinator_single_and_none(version: int) -> None:
    found = {"node_id": 2, "host": "b2.internal", "port": 9092}
    body = decode(10, version, REWRITER.rewrite(10, version, payload(10, version, found)))
    assert (body["node_id"], body["host"], body["port"]) == (2, "edge", 9102)
    # No coordinator yet: node id -1, host "", port -1 stay as they are.
    none = {"error_code": 15, "node_id": -1, "host": "", "port": -1}
    data = payload(10, version, none)
    assert REWRITER.rewrite(10, version, data) == data


def test_find_coordinator_batched() -> None:
    coordinators = [
        {"key": "g1", "node_id": 1, "host": "b1", "port": 9092},
        {"key": "g2", "node_id": -1, "host": "", "port": -1, "error_code": 15},
    ]
    data = REWRITER.rewrite(10, 6, payload(10, 6, {"coordinators": coordinators}))
    got = decode(10, 6, data)["coordinators"]
    assert [(c["host"], c["port"]) for c in got] == [("edge", 9101), ("", -1)]


def test_metadata_and_describe_cluster_every_broker() -> None:
    brokers = [{"node_id": n, "host": f"b{n}", "port": 9092, "rack": "r"} for n in (0, 5)]
    got = decode(3, 12, REWRITER.rewrite(3, 12, payload(3, 12, {"brokers": brokers})))
    assert [(b["host"], b["port"], b["rack"]) for b in got["brokers"]] == [
        ("edge", 9100, "r"),
        ("edge", 9105, "r"),
    ]
    cluster = [{"broker_id": 3, "host": "b3", "port": 9092, "is_fenced": True}]
    got = decode(60, 2, REWRITER.rewrite(60, 2, payload(60, 2, {"brokers": cluster})))
    assert got["brokers"][0] | {} == {
        "broker_id": 3,
        "host": "edge",
        "port": 9103,
        "rack": None,
        "is_fenced": True,
    }


def test_unknown_tagged_fields_and_header_tags_survive() -> None:
    spec = ADDRESS_API_SPECS[ApiKey.METADATA]
    body = spec.write_response_body(13, {"brokers": [{"node_id": 1, "host": "b", "port": 1}]})
    # Replace the body's empty top-level tag section (its last byte) by two
    # tags this schema does not know; the header carries one too.
    assert body[-1] == 0
    tagged = body[:-1] + b"\x02\x07\x01x\x09\x02yz"
    header = struct.pack(">i", 5) + b"\x01\x03\x01h"
    data = REWRITER.rewrite(3, 13, header + tagged)
    assert data.startswith(header) and data.endswith(b"\x02\x07\x01x\x09\x02yz")
    assert decode(3, 13, data)["brokers"][0]["port"] == 9101


def test_refusals() -> None:
    with pytest.raises(PeerProtocolError, match="cannot rewrite API 3 version 14"):
        REWRITER.rewrite(3, 14, b"")
    with pytest.raises(PeerProtocolError, match="malformed response to API 3"):
        REWRITER.rewrite(3, 1, struct.pack(">i", 1) + b"\x00")
    data = payload(3, 1, {"brokers": [{"node_id": 60000, "host": "b", "port": 1}]})
    with pytest.raises(PeerProtocolError, match="node 60000 has no port"):
        REWRITER.rewrite(3, 1, data)
