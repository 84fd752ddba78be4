"""The front door's forwarding metrics, beside the authentication ones.

Per API (labelled with Kafka's name for it, ``Produce``, ``Fetch``, ...):
requests forwarded, and the bytes of requests and of responses, counted per
frame from its size and API key, which the splitters read anyway. Per
process: upstream connections opened and closed (their difference is the
open gauge), the upstream failures, by kind, the logins the edge took that
could not be forwarded, by reason, and how many sets of cluster addresses
cannot be reached now.

The figures are float cells, like the authentication rows: a list in a
single process, a worker's slice of the shared block with ``scram.workers``
above 1 (the parent sums them).
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Sequence
from typing import Any

from sasl_scram.endpoint._edge_metrics import GROUP_CELLS
from sasl_scram.endpoint._edge_metrics import USER_CELLS
from sasl_scram.endpoint._edge_metrics import EdgeMetrics

__all__ = [
    "FORWARD_CELLS",
    "UNFORWARDED_REASONS",
    "ForwardMetrics",
    "TrafficObserver",
    "forward_families",
]

PREFIX = "kafka_scram_"
# Kafka's API keys are below this (share groups, 4.x, end in the 90s).
_APIS = 128
_REQUESTS, _REQUEST_BYTES, _RESPONSE_BYTES = 0, _APIS, 2 * _APIS
_UPSTREAM = 3 * _APIS
#: The upstream events, in cell order after the per-API cells.
UPSTREAM_EVENTS = ("opened", "closed", "unreachable", "login_refused", "protocol_error")
_EVENT_CELL = {name: _UPSTREAM + i for i, name in enumerate(UPSTREAM_EVENTS)}
#: Why a login the edge took was not forwarded: the cluster refused the front
#: door's login for it, or could not be reached while the login waited.
UNFORWARDED_REASONS = ("login_refused", "unreachable")
_UNFORWARDED = _UPSTREAM + len(UPSTREAM_EVENTS)
_REASON_CELL = {name: _UNFORWARDED + i for i, name in enumerate(UNFORWARDED_REASONS)}
#: The gauge: sets of cluster addresses (the bootstrap servers, a node's
#: broker) the front door cannot reach now.
_UNREACHABLE = _UNFORWARDED + len(UNFORWARDED_REASONS)
FORWARD_CELLS = _UNREACHABLE + 1
#: Where an API's figures start in a user's row: Produce (0) and Fetch (1) apart,
#: every other API together.
_USER_GROUP = (0, GROUP_CELLS) + (2 * GROUP_CELLS,) * (_APIS - 2)


class ForwardMetrics:
    """Counting on the event loop: one cell increment per frame and per event.

    Args:
        cells: ``FORWARD_CELLS`` floats (a worker's slice of the shared block),
            or ``None`` for the process's own list.
    """

    __slots__ = ("cells", "edge")

    def __init__(self, cells: Any = None, edge: EdgeMetrics | None = None) -> None:
        self.cells: Any = cells if cells is not None else [0.0] * FORWARD_CELLS
        #: The rows per edge user (``None``: per API only).
        self.edge = edge

    def observer(self, user: str) -> TrafficObserver:
        """The counting of one forwarded connection of ``user``: per API and per user."""
        edge = self.edge
        if edge is None:  # a row of its own, read by nobody
            return TrafficObserver(self.cells, [0.0] * USER_CELLS, 0)
        return TrafficObserver(self.cells, edge.cells, edge.row(user))

    def request(self, api_key: int, size: int) -> None:
        if 0 <= api_key < _APIS:
            cells = self.cells
            cells[_REQUESTS + api_key] += 1
            cells[_REQUEST_BYTES + api_key] += size

    def response(self, api_key: int, size: int) -> None:
        if 0 <= api_key < _APIS:
            self.cells[_RESPONSE_BYTES + api_key] += size

    def upstream(self, event: str) -> None:
        """One of :data:`UPSTREAM_EVENTS`."""
        self.cells[_EVENT_CELL[event]] += 1

    def unforwarded(self, reason: str) -> None:
        """A login the edge took was not forwarded; ``reason``: one of
        :data:`UNFORWARDED_REASONS`."""
        self.cells[_REASON_CELL[reason]] += 1

    def set_unreachable(self, count: int) -> None:
        """How many sets of cluster addresses cannot be reached now."""
        self.cells[_UNREACHABLE] = count

    def process_gone(self) -> None:
        """The process these cells count for died: its upstream connections went
        with it (counted closed: a counter never goes back), and its successor
        finds out afresh whether the cluster answers."""
        cells = self.cells
        cells[_EVENT_CELL["closed"]] = cells[_EVENT_CELL["opened"]]
        cells[_UNREACHABLE] = 0

    def used(self) -> bool:
        cells = self.cells
        return bool(
            cells[_EVENT_CELL["opened"]]
            or cells[_EVENT_CELL["unreachable"]]
            or any(cells[i] for i in _REASON_CELL.values())
            or cells[_UNREACHABLE]
        )


class TrafficObserver:
    """One forwarded connection's counting, told each frame's API key and size by
    its splitters: the per-API cells and its user's row, a few list items each
    (a frame already costs microseconds; see docs/metrics.md, "Cost")."""

    __slots__ = ("_cells", "_row", "_users")

    def __init__(self, cells: Any, users: Any, row: int) -> None:
        self._cells = cells
        self._users = users
        self._row = row

    def request(self, api_key: int, size: int) -> None:
        if 0 <= api_key < _APIS:
            cells = self._cells
            cells[_REQUESTS + api_key] += 1
            cells[_REQUEST_BYTES + api_key] += size
            users = self._users
            i = self._row + _USER_GROUP[api_key]
            users[i] += 1
            users[i + 1] += size

    def response(self, api_key: int, size: int) -> None:
        if 0 <= api_key < _APIS:
            self._cells[_RESPONSE_BYTES + api_key] += size
            self._users[self._row + _USER_GROUP[api_key] + 2] += size


#: The names of Kafka's ``ApiKeys`` (the request names its own metrics use), by key.
_API_NAMES = (
    "Produce",
    "Fetch",
    "ListOffsets",
    "Metadata",
    "LeaderAndIsr",
    "StopReplica",
    "UpdateMetadata",
    "ControlledShutdown",
    "OffsetCommit",
    "OffsetFetch",
    "FindCoordinator",
    "JoinGroup",
    "Heartbeat",
    "LeaveGroup",
    "SyncGroup",
    "DescribeGroups",
    "ListGroups",
    "SaslHandshake",
    "ApiVersions",
    "CreateTopics",
    "DeleteTopics",
    "DeleteRecords",
    "InitProducerId",
    "OffsetForLeaderEpoch",
    "AddPartitionsToTxn",
    "AddOffsetsToTxn",
    "EndTxn",
    "WriteTxnMarkers",
    "TxnOffsetCommit",
    "DescribeAcls",
    "CreateAcls",
    "DeleteAcls",
    "DescribeConfigs",
    "AlterConfigs",
    "AlterReplicaLogDirs",
    "DescribeLogDirs",
    "SaslAuthenticate",
    "CreatePartitions",
    "CreateDelegationToken",
    "RenewDelegationToken",
    "ExpireDelegationToken",
    "DescribeDelegationToken",
    "DeleteGroups",
    "ElectLeaders",
    "IncrementalAlterConfigs",
    "AlterPartitionReassignments",
    "ListPartitionReassignments",
    "OffsetDelete",
    "DescribeClientQuotas",
    "AlterClientQuotas",
    "DescribeUserScramCredentials",
    "AlterUserScramCredentials",
    "Vote",
    "BeginQuorumEpoch",
    "EndQuorumEpoch",
    "DescribeQuorum",
    "AlterPartition",
    "UpdateFeatures",
    "Envelope",
    "FetchSnapshot",
    "DescribeCluster",
    "DescribeProducers",
    "BrokerRegistration",
    "BrokerHeartbeat",
    "UnregisterBroker",
    "DescribeTransactions",
    "ListTransactions",
    "AllocateProducerIds",
    "ConsumerGroupHeartbeat",
    "ConsumerGroupDescribe",
    "ControllerRegistration",
    "GetTelemetrySubscriptions",
    "PushTelemetry",
    "AssignReplicasToDirs",
    "ListClientMetricsResources",
    "DescribeTopicPartitions",
    "ShareGroupHeartbeat",
    "ShareGroupDescribe",
    "ShareFetch",
    "ShareAcknowledge",
)


def _api_name(key: int) -> str:
    return _API_NAMES[key] if key < len(_API_NAMES) else f"ApiKey{key}"


def forward_families(cells: Sequence[float]) -> Iterator[Any]:
    """The metric families of one set of cells (prometheus-client's types)."""
    from prometheus_client.core import CounterMetricFamily
    from prometheus_client.core import GaugeMetricFamily

    for name, base, doc in (
        ("forwarded_requests", _REQUESTS, "Requests forwarded to the cluster, per API"),
        ("forwarded_request_bytes", _REQUEST_BYTES, "Bytes of requests forwarded, per API"),
        ("forwarded_response_bytes", _RESPONSE_BYTES, "Bytes of responses forwarded, per API"),
    ):
        family = CounterMetricFamily(PREFIX + name, doc, labels=["api"])
        for key in range(_APIS):
            if cells[_REQUESTS + key] or cells[base + key]:
                family.add_metric([_api_name(key)], cells[base + key])
        yield family
    events = CounterMetricFamily(
        PREFIX + "upstream_connection_events",
        "Connections to the cluster: opened, closed, and failures by kind",
        labels=["event"],
    )
    for event in UPSTREAM_EVENTS:
        events.add_metric([event], cells[_EVENT_CELL[event]])
    yield events
    open_now = GaugeMetricFamily(PREFIX + "upstream_connections", "Open connections to the cluster")
    open_now.add_metric([], cells[_EVENT_CELL["opened"]] - cells[_EVENT_CELL["closed"]])
    yield open_now
    # Not Kafka's failed-authentication-total: the edge took these logins (the
    # password was right); the cluster is what failed them.
    unforwarded = CounterMetricFamily(
        PREFIX + "unforwarded_logins",
        "Logins the edge took that could not be forwarded: the cluster refused the front "
        "door's login for them (login_refused), or could not be reached while they waited "
        "(unreachable)",
        labels=["reason"],
    )
    for reason in UNFORWARDED_REASONS:
        unforwarded.add_metric([reason], cells[_REASON_CELL[reason]])
    yield unforwarded
    unreachable = GaugeMetricFamily(
        PREFIX + "upstream_unreachable",
        "Sets of cluster addresses (the bootstrap servers, a node's broker) the front door "
        "cannot reach now; new connections to them wait",
    )
    unreachable.add_metric([], cells[_UNREACHABLE])
    yield unreachable
