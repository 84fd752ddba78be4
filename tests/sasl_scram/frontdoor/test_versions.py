"""The front door's ApiVersions answer."""

from __future__ import annotations

from sasl_scram.frontdoor import EDGE_API_KEYS
from sasl_scram.frontdoor import edge_api_versions
from sasl_scram.frontdoor import edge_ranges
from sasl_scram.kafka import API_SPECS

# Kafka 4.x's broker answer, in part.
UPSTREAM = [
    {"api_key": 0, "min_version": 3, "max_version": 13},  # Produce
    {"api_key": 1, "min_version": 4, "max_version": 18},  # Fetch
    {"api_key": 3, "min_version": 0, "max_version": 14},  # Metadata, one newer than ours
    {"api_key": 10, "min_version": 0, "max_version": 6},  # FindCoordinator
    {"api_key": 17, "min_version": 0, "max_version": 1},  # SaslHandshake: the edge's
    {"api_key": 18, "min_version": 0, "max_version": 5},  # ApiVersions: the edge's
    {"api_key": 19, "min_version": 2, "max_version": 7},  # CreateTopics: as is
    {"api_key": 55, "min_version": 0, "max_version": 2},  # DescribeQuorum
    {"api_key": 60, "min_version": 0, "max_version": 2},  # DescribeCluster
    {"api_key": 78, "min_version": 1, "max_version": 2},  # ShareFetch
    {"api_key": 79, "min_version": 1, "max_version": 2},  # ShareAcknowledge
]


def test_forwarded_apis_capped_edge_apis_own_ranges() -> None:
    got = {
        e["api_key"]: (e["min_version"], e["max_version"])
        for e in edge_api_versions(UPSTREAM, edge_ranges())
    }
    assert got[0] == (3, 9)  # KIP-951: no NodeEndpoints in Produce responses
    assert got[1] == (4, 15)  # nor in Fetch responses
    assert got[3] == (0, API_SPECS[3].max_version)
    assert got[10] == (0, 6)
    assert got[19] == (2, 7)
    assert got[55] == (0, 1)
    assert got[60] == (0, 2)
    assert 78 not in got and 79 not in got
    for key in EDGE_API_KEYS:  # even those the cluster lacks (38-41, 50, 51)
        assert got[key] == (API_SPECS[key].min_version, API_SPECS[key].max_version)
    assert list(got) == sorted(got)


def test_an_api_empty_once_capped_is_left_out() -> None:
    upstream = [{"api_key": 1, "min_version": 16, "max_version": 18}]
    assert edge_api_versions(upstream, {}) == []
