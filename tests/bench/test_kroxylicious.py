"""The side-by-side row's pure parts (bench/_kroxylicious.py): Kroxylicious's
configuration as the bench renders it, and the figures' lines."""

from __future__ import annotations

import json

from bench import _floor
from bench import _kroxylicious
from bench._kroxylicious import SideFigures


def test_the_config_is_a_pass_through_with_a_port_per_broker() -> None:
    config = json.loads(_kroxylicious.render_config("127.0.0.1:9092", "127.0.0.1", 19000, [1]))
    (cluster,) = config["virtualClusters"]
    assert cluster["targetCluster"] == {"bootstrapServers": "127.0.0.1:9092"}
    (gateway,) = cluster["gateways"]
    assert gateway["portIdentifiesNode"] == {
        "bootstrapAddress": "127.0.0.1:19000",
        "advertisedBrokerAddressPattern": "127.0.0.1",
        "nodeStartPort": 19001,
        "nodeIdRanges": [{"name": "brokers", "start": 1, "end": 1}],
    }
    # Plain TCP on both sides (no "tls" anywhere) and no filters at all.
    assert "tls" not in gateway and "tls" not in cluster["targetCluster"]
    assert not {"filters", "filterDefinitions", "defaultFilters"} & (config.keys() | cluster.keys())


def test_node_ids_make_one_range_from_the_lowest_to_the_highest() -> None:
    config = json.loads(_kroxylicious.render_config("b:9092", "h", 100, [3, 1, 2]))
    gateway = config["virtualClusters"][0]["gateways"][0]["portIdentifiesNode"]
    assert gateway["nodeIdRanges"] == [{"name": "brokers", "start": 1, "end": 3}]


def _figures(produce: list[float], fetch: list[float], rounds: int = 2) -> SideFigures:
    """Two rounds of the same rates and latencies; the proxy's CPU as given."""
    f = SideFigures(
        producer_rate=[1000.0] * rounds,
        producer_mb_s=[1.0] * rounds,
        consumer_rate=[2000.0] * rounds,
        consumer_mb_s=[2.0] * rounds,
        paced_p50_ms=[2.0] * rounds,
        paced_p99_ms=[5.0] * rounds,
        paced_avg_ms=[2.5] * rounds,
        broker_produce_ms_per_mb=[10.0] * rounds,
        broker_fetch_ms_per_mb=[3.0] * rounds,
    )
    f.produce_ms_per_mb = produce
    f.fetch_ms_per_mb = fetch
    return f


def test_the_report_divides_serve_by_kroxylicious_round_by_round() -> None:
    results = {
        "direct": _figures([], []),
        "serve": _figures([4.0, 8.0], [1.0, 1.5]),
        "Kroxylicious": _figures([8.0, 8.0], [4.0, 3.0]),
    }
    results["serve"].idle_ms_per_s = 1.25
    lines = _kroxylicious.report_lines(results, list(results), 500)
    last = lines[-1]
    assert last.startswith("serve / Kroxylicious, CPU per MB round by round:")
    # Round by round: 0.5 and 1.0 produce, 0.25 and 0.5 fetch; the median between.
    assert "produce 0.75 [0.50-1.00], fetch 0.38 [0.25-0.50]" in last
    # Both ways: (4+1)/2 / (8+4)/2 and (8+1.5)/2 / (8+3)/2.
    assert "both ways 0.64 [0.42-0.86]" in last
    assert "  its CPU per MB: produce 6.00 [4.00-8.00] ms, fetch 1.25 [1.00-1.50] ms" in "\n".join(
        lines
    )
    assert "idle 1.2 ms per s" in "\n".join(lines)
    assert "serve / direct: producer records/s 1.00 [1.00-1.00]" in "\n".join(lines)
    # Direct has no proxy: no CPU line of its own, and no ratio against itself.
    assert not any(line.startswith("direct / direct") for line in lines)


def test_the_floor_is_set_against_both_proxies_round_by_round() -> None:
    results = {
        "direct": _figures([], []),
        "serve": _figures([4.0, 8.0], [1.0, 1.5]),
        "Kroxylicious": _figures([8.0, 8.0], [4.0, 3.0]),
        "floor": _figures([2.0, 4.0], [0.5, 0.0]),
    }
    lines = _kroxylicious.report_lines(results, list(results), 500)
    text = "\n".join(lines)
    # The serve / Kroxylicious line is unchanged by a fourth mode.
    (target,) = [line for line in lines if line.startswith("serve / Kroxylicious")]
    assert "produce 0.75 [0.50-1.00], fetch 0.38 [0.25-0.50] (target <= 0.5 each)" in target
    # Both ways: (2+0.5)/2 / (8+4)/2 and (4+0)/2 / (8+3)/2; serve / floor 2.5/1.25, 4.75/2.
    assert lines[-2] == (
        "floor / Kroxylicious, CPU per MB round by round: produce 0.38 [0.25-0.50], "
        "fetch 0.06 [0.00-0.12] (serve's <= 0.5 needs this below it), "
        "both ways 0.29 [0.21-0.36]"
    )
    # A round whose floor CPU was under a clock tick divides to infinity, not an error.
    assert lines[-1] == (
        "serve / floor, CPU per MB round by round: produce 2.00 [2.00-2.00], "
        "fetch inf [2.00-inf], both ways 2.19 [2.00-2.38]"
    )
    assert "floor / direct: producer records/s 1.00 [1.00-1.00]" in text
    assert "floor:" in lines
    assert "  its CPU per MB: produce 3.00 [2.00-4.00] ms" in text


def test_each_floor_is_set_against_both_proxies() -> None:
    results = {
        "direct": _figures([], []),
        "serve": _figures([4.0, 8.0], [1.0, 1.5]),
        "Kroxylicious": _figures([8.0, 8.0], [4.0, 3.0]),
        "C floor": _figures([2.0, 4.0], [0.5, 1.0]),
        "Python floor": _figures([4.0, 4.0], [1.0, 1.0]),
    }
    lines = _kroxylicious.report_lines(results, list(results), 500)
    names = [line.split(",")[0] for line in lines if "CPU per MB round by round" in line]
    assert names == [
        "serve / Kroxylicious",
        "C floor / Kroxylicious",
        "serve / C floor",
        "Python floor / Kroxylicious",
        "serve / Python floor",
    ]
    # serve / Python floor: 4/4 and 8/4 produce.
    assert "produce 1.50 [1.00-2.00]" in lines[-1]


def test_the_relay_s_lines_are_read_and_others_are_not() -> None:
    assert _floor.parse_ready("ready 19092\n") == 19092
    assert _floor.parse_ready("") is None
    assert _floor.parse_ready("floor_relay: bind: Address already in use") is None
    counters = _floor.parse_counters(
        "pairs=3 to_upstream=2097152 to_client=1048576 partial_writes=2 refused=0\n"
    )
    assert counters == {
        "pairs": 3,
        "to_upstream": 2097152,
        "to_client": 1048576,
        "partial_writes": 2,
        "refused": 0,
    }
    assert _floor.counters_line(_floor.C, counters) == (
        "  C relay: 3 connections relayed, 2 MB to the broker and 1 MB back, 2 partial"
        " writes, 0 connections refused (whole run, warm-up included)"
    )
    assert _floor.parse_counters("") == {}
    assert _floor.parse_counters("ready 19092") == {}
    assert "no counters" in _floor.counters_line(_floor.C, {})
