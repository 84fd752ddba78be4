"""The rows per edge user: who gets a label, the bound and ``other``, the counting
of each forwarded frame, the exposition, and one table of names across workers."""

from __future__ import annotations

import os

from prometheus_client import CollectorRegistry
from prometheus_client import generate_latest

from sasl_scram.endpoint._edge_metrics import NAME_BYTES
from sasl_scram.endpoint._edge_metrics import EdgeMetrics
from sasl_scram.endpoint._edge_metrics import UserNames
from sasl_scram.endpoint._forward_metrics import ForwardMetrics
from sasl_scram.endpoint._metrics import AuthMetrics
from sasl_scram.endpoint._metrics import WorkerBlocks
from sasl_scram.endpoint._metrics import WorkersMetrics

PRODUCE, FETCH, METADATA = 0, 1, 3


def test_first_come_first_labelled_up_to_the_bound_then_other() -> None:
    names = UserNames(2)
    assert [names.index(u) for u in ("alice", "bob", "carol", "alice", "bob")] == [0, 1, 2, 0, 1]
    assert names.labels() == ["alice", "bob"]  # carol is counted under other (row 2)


def test_a_user_named_other_or_too_long_is_counted_under_other() -> None:
    names = UserNames(5)
    assert names.index("other") == 5
    assert names.index("é" * NAME_BYTES) == 5
    assert names.index("x" * (NAME_BYTES - 1)) == 0
    assert names.labels() == ["x" * (NAME_BYTES - 1)]


def test_two_processes_on_one_table_agree_on_each_users_row() -> None:
    """Each worker mirrors the table: a name claimed by another is found, not claimed twice."""
    table = bytearray(3 * NAME_BYTES)
    one, two = UserNames(3, table), UserNames(3, table)
    assert one.index("alice") == 0
    assert two.index("bob") == 1 and two.index("alice") == 0
    assert one.index("bob") == 1 and one.index("carol") == 2 and two.index("dave") == 3
    assert one.labels() == two.labels() == ["alice", "bob", "carol"]


def observed(metrics: ForwardMetrics, user: str, frames: list[tuple[int, int, int]]) -> None:
    observer = metrics.observer(user)
    for api_key, request, response in frames:
        observer.request(api_key, request)
        observer.response(api_key, response)


def scrape(collector: object) -> dict[str, float]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)  # type: ignore[arg-type]
    out: dict[str, float] = {}
    for line in generate_latest(registry).decode().splitlines():
        if line.startswith("kafka_scram_") and "_created" not in line:
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def test_each_frame_counts_per_api_and_per_user() -> None:
    metrics = AuthMetrics("127.0.0.1", 0, list, max_users=1)
    observed(metrics.forward, "alice", [(PRODUCE, 100, 10), (PRODUCE, 50, 10), (FETCH, 20, 900)])
    observed(metrics.forward, "bob", [(PRODUCE, 7, 3), (METADATA, 30, 300)])  # past the bound
    metrics.forward.upstream("opened")
    got = scrape(metrics)
    user = 'kafka_scram_user_forwarded_{}_total{{api="{}",user="{}"}}'
    assert got[user.format("requests", "Produce", "alice")] == 2
    assert got[user.format("request_bytes", "Produce", "alice")] == 150
    assert got[user.format("response_bytes", "Produce", "alice")] == 20
    assert got[user.format("requests", "Fetch", "alice")] == 1
    assert got[user.format("response_bytes", "Fetch", "alice")] == 900
    assert got[user.format("requests", "Produce", "other")] == 1
    assert got[user.format("request_bytes", "other", "other")] == 30
    assert got[user.format("response_bytes", "other", "other")] == 300
    assert not any('user="bob"' in name for name in got)
    assert user.format("requests", "Fetch", "other") not in got  # only what was counted
    # The per-API figures are the sums over the users.
    assert got['kafka_scram_forwarded_request_bytes_total{api="Produce"}'] == 157
    assert got['kafka_scram_forwarded_response_bytes_total{api="Metadata"}'] == 300
    assert got['kafka_scram_refused_connections_total{cap="max.connections.per.ip"}'] == 0


def test_workers_share_the_names_and_the_parent_sums_each_users_rows() -> None:
    blocks = WorkerBlocks(["SASL_PLAINTEXT"], ["SCRAM-SHA-256"], 2, max_users=2)
    pid = os.fork()
    if pid == 0:  # worker 1, in its own process: bob first
        try:
            share = blocks.share(1)
            child = ForwardMetrics(share.forward, EdgeMetrics(share.names, share.edge))
            observed(child, "bob", [(PRODUCE, 5, 1)])
            observed(child, "alice", [(FETCH, 9, 99)])
            EdgeMetrics(share.names, share.edge).refused(1)
        finally:
            os._exit(0)
    assert os.waitpid(pid, 0)[1] == 0
    share = blocks.share(0)
    parent = ForwardMetrics(share.forward, EdgeMetrics(share.names, share.edge))
    observed(parent, "alice", [(FETCH, 1, 1)])
    observed(parent, "carol", [(PRODUCE, 4, 4)])  # both labels taken: other
    parent.upstream("opened")
    got = scrape(WorkersMetrics(blocks))
    user = 'kafka_scram_user_forwarded_{}_total{{api="{}",user="{}"}}'
    assert got[user.format("request_bytes", "Fetch", "alice")] == 10
    assert got[user.format("response_bytes", "Fetch", "alice")] == 100
    assert got[user.format("request_bytes", "Produce", "bob")] == 5
    assert got[user.format("request_bytes", "Produce", "other")] == 4
    assert got['kafka_scram_refused_connections_total{cap="scram.max.connections.per.user"}'] == 1
    assert blocks.names.labels() == ["bob", "alice"]


def test_a_dead_workers_upstream_gauges_are_zeroed_with_its_others() -> None:
    """A worker killed with upstream connections open, or with the cluster away:
    its connections died with it and its successor looks afresh, so neither
    stays in the parent's ``upstream_connections`` or ``upstream_unreachable``
    (its counters stay: a counter never goes back)."""
    blocks = WorkerBlocks(["SASL_PLAINTEXT"], ["SCRAM-SHA-256"], 2)
    for worker in (0, 1):
        forward = ForwardMetrics(blocks.share(worker).forward)
        for _ in range(3):
            forward.upstream("opened")
        forward.upstream("closed")
        forward.set_unreachable(1)
    before = scrape(WorkersMetrics(blocks))
    assert before["kafka_scram_upstream_connections"] == 4
    assert before["kafka_scram_upstream_unreachable"] == 2
    blocks.clear_gauges(0)
    after = scrape(WorkersMetrics(blocks))
    assert after["kafka_scram_upstream_connections"] == 2
    assert after["kafka_scram_upstream_unreachable"] == 1
    opened = 'kafka_scram_upstream_connection_events_total{event="opened"}'
    assert after[opened] == before[opened] == 6
