"""The front-door bench reads Kafka's perf tools (bench/_kafka_perf.py): their real
output lines, from Kafka 4.4's ProducerPerformance and ConsumerPerformance."""

from __future__ import annotations

import pytest

from bench import _kafka_perf

PRODUCER = """\
23985 records sent, 4797.0 records/sec (4.68 MB/sec), 4990.2 ms avg latency, 6269.0 ms max latency.
200000 records sent, 2782.144199 records/sec (2.72 MB/sec), 9183.34 ms avg latency, \
19542.00 ms max latency, 7519 ms 50th, 16910 ms 95th, 19150 ms 99th, 19383 ms 99.9th.
180000 steady state records sent, 2855.284656 records/sec (2.79 MB/sec), 9127.59 ms avg latency, \
19542.00 ms max latency, 7329 ms 50th, 17165 ms 95th, 19172 ms 99th, 19389 ms 99.9th.
"""

CONSUMER = """\
start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, \
rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
2026-11-28 12:03:38:706, 2026-11-28 12:03:55:603, 195.3125, 11.5590, 200000, 11836.4207, \
6207, 10690, 18.2706, 18709.0739
"""


def test_the_producer_summary_is_the_steady_state_line_when_there_is_one() -> None:
    run = _kafka_perf.parse_producer(PRODUCER)
    assert run == _kafka_perf.ProducerRun(
        180000, 2855.284656, 2.79, 9127.59, 19542.0, 7329, 17165, 19172, 19389, steady=True
    )
    # Without --warmup-records, the whole run's line; progress lines never count.
    whole = _kafka_perf.parse_producer(PRODUCER.rsplit("180000", 1)[0])
    assert (whole.records, whole.p50_ms, whole.steady) == (200000, 7519, False)


def test_a_producer_run_without_a_summary_is_an_error() -> None:
    with pytest.raises(ValueError, match="no ProducerPerformance summary"):
        _kafka_perf.parse_producer(PRODUCER.splitlines()[0])


def test_the_consumer_figures_are_read_by_their_header_names() -> None:
    run = _kafka_perf.parse_consumer("[main] WARN a log line\n" + CONSUMER)
    assert run == _kafka_perf.ConsumerRun(
        195.3125, 11.559, 200000, 11836.4207, 6207.0, 10690.0, 18.2706, 18709.0739
    )


@pytest.mark.parametrize("text", ["", CONSUMER.splitlines()[0], CONSUMER.replace(", 6207", "")])
def test_a_consumer_run_without_its_figures_is_an_error(text: str) -> None:
    with pytest.raises(ValueError, match="no ConsumerPerformance figures"):
        _kafka_perf.parse_consumer(text)
