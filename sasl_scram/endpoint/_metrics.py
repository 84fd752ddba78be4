"""Kafka's per-listener authentication metrics, in Prometheus text format.

Kafka's broker publishes them in the ``socket-server-metrics`` group
(``Selector.SelectorMetrics``): ``successful-authentication-total``,
``failed-authentication-total``, ``successful-reauthentication-total``,
``failed-reauthentication-total``, ``successful-authentication-no-reauth-total``
and ``reauthentication-latency``. Here they carry the same names with
``kafka_scram_`` in front and underscores for dashes, labelled with
``listener`` and ``mechanism`` (never a user name). Login latency and the
open and authenticated connection gauges are ours.

Counting is plain integer arithmetic on the event loop; ``prometheus-client``
only formats the figures when ``/metrics`` is scraped, from its own thread.
Every value the scrape reads is one int or one list read under the GIL, so a
scrape never blocks a login. The gauges are counted at scrape time from the
endpoint's table of live connections, so opening and closing a connection
costs nothing here.

With ``scram.workers`` above 1, every figure lives in one shared memory
block (:class:`WorkerBlocks`) that the parent maps before it forks: each
worker counts into its own rows, a thread in each worker copies its gauges
there twice a second, and the parent's ``/metrics`` reports the sum over the
workers. A worker that dies leaves its counts behind, so the totals never go
back (its successor counts on from them); its gauges are zeroed.
"""

from __future__ import annotations

import asyncio
import bisect
import importlib.util
import logging
import mmap
import threading
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import Protocol

from sasl_scram._errors import ScramConfigError
from sasl_scram.config import ConfigKey
from sasl_scram.config import install_hint
from sasl_scram.config import integer
from sasl_scram.endpoint._edge_metrics import NAME_BYTES
from sasl_scram.endpoint._edge_metrics import EdgeMetrics
from sasl_scram.endpoint._edge_metrics import SharedLock
from sasl_scram.endpoint._edge_metrics import UserNames
from sasl_scram.endpoint._edge_metrics import edge_cells
from sasl_scram.endpoint._edge_metrics import edge_families
from sasl_scram.endpoint._forward_metrics import FORWARD_CELLS
from sasl_scram.endpoint._forward_metrics import ForwardMetrics
from sasl_scram.endpoint._forward_metrics import forward_families

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

__all__ = [
    "METRICS_LISTENER",
    "METRICS_LISTENER_KEY",
    "METRICS_MAX_USERS",
    "METRICS_MAX_USERS_KEY",
    "AuthMetrics",
    "LiveConnection",
    "WorkerBlocks",
    "WorkerShare",
    "WorkersMetrics",
]

log = logging.getLogger("sasl_scram.endpoint")

METRICS_LISTENER_KEY = "scram.metrics.listener"
METRICS_MAX_USERS_KEY = "scram.metrics.max.users"
#: More labels than this is no longer a dashboard (and a shared block of MBs).
MAX_USER_LABELS = 10_000
PREFIX = "kafka_scram_"
# Latency buckets in milliseconds, as Kafka reports reauthentication-latency.
BUCKETS_MS = (0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0)
# Slots of one (listener, mechanism) counter row.
_OK, _FAILED, _REAUTH_OK, _REAUTH_FAILED, _NO_REAUTH, _SLOWED = range(6)
_N_COUNTERS = 6
_COUNTERS = (
    ("successful_authentication", _OK, "Successful authentications (new connections)"),
    ("failed_authentication", _FAILED, "Failed authentications (new connections)"),
    ("successful_reauthentication", _REAUTH_OK, "Successful KIP-368 re-authentications"),
    ("failed_reauthentication", _REAUTH_FAILED, "Failed KIP-368 re-authentications"),
    (
        "successful_authentication_no_reauth",
        _NO_REAUTH,
        "Successful authentications by clients that cannot re-authenticate (SaslAuthenticate v0)",
    ),
    (
        "slowed_authentication",
        _SLOWED,
        "Login verdicts held past the failure budget (scram.login.failure.budget)",
    ),
)


def _listener_address(value: str, _: Mapping[str, Any]) -> tuple[str, int] | None:
    """``HOST:PORT`` (an IPv6 host in brackets; no host: every interface); empty: off."""
    value = value.strip()
    if not value:
        return None
    host, sep, port = value.rpartition(":")
    if not sep or not port.isascii() or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"expected HOST:PORT (e.g. 127.0.0.1:9404), got {value!r}")
    # Checked here, not when serve starts, so the error names the file and line.
    if importlib.util.find_spec("prometheus_client") is None:
        raise ValueError(f"the metrics need prometheus-client: {install_hint('server')}")
    return host.strip("[]") or "0.0.0.0", int(port)  # noqa: S104 - the operator asked for it


#: The table entry (``ENDPOINT_KEYS`` holds it); its parser is the only one of the key.
METRICS_LISTENER = ConfigKey(
    METRICS_LISTENER_KEY,
    "",
    _listener_address,
    "HOST:PORT (empty: off)",
    "where Prometheus scrapes /metrics",
    field="metrics_listener",
)
#: How many edge users get a label of their own (``_edge_metrics.py``).
METRICS_MAX_USERS = ConfigKey(
    METRICS_MAX_USERS_KEY,
    "100",
    integer(0, MAX_USER_LABELS),
    f"an integer from 0 to {MAX_USER_LABELS}",
    "edge users with a label of their own in /metrics, first come first labelled; the "
    "rest are summed as user=other",
    field="metrics_max_users",
)


# One (listener, mechanism) row is a run of float cells (exact for integers up
# to 2**53): the six counters, the two histograms (a count per bucket, +Inf,
# then the sum) and, in a worker's shared block, two gauges.
_HIST = len(BUCKETS_MS) + 2
_SUM = _HIST - 1
_LOGIN, _REAUTH = _N_COUNTERS, _N_COUNTERS + _HIST
#: Authenticated connections of this (listener, mechanism).
_AUTHED = _N_COUNTERS + 2 * _HIST
#: Open connections of this listener (kept in its row of mechanism "").
_OPEN = _AUTHED + 1
ROW_CELLS = _OPEN + 1


def _new_cells(n: int) -> memoryview[float]:
    return memoryview(bytearray(8 * n)).cast("d")


class _Cells(Protocol):
    """A list of floats, or a worker's float cells in the shared block."""

    def __getitem__(self, index: int, /) -> float: ...
    def __setitem__(self, index: int, value: float, /) -> None: ...


class _Histogram:
    """Bucket counts, +Inf and the sum, in milliseconds; ``observe`` is one bisect."""

    __slots__ = ("cells",)

    def __init__(self, cells: _Cells) -> None:
        self.cells = cells

    def observe(self, ms: float) -> None:
        cells = self.cells
        cells[bisect.bisect_left(BUCKETS_MS, ms)] += 1
        cells[_SUM] += ms

    @property
    def total(self) -> float:
        return self.cells[_SUM]

    def cumulative(self) -> list[tuple[str, float]]:
        out: list[tuple[str, float]] = []
        running = 0.0
        for i, bound in enumerate((*map(str, BUCKETS_MS), "+Inf")):
            running += self.cells[i]
            out.append((bound, running))
        return out


class _Row:
    """The counters and histograms of one (listener, mechanism): one lookup per login.

    Lists, the cheapest item updates, for a process that counts on its own.
    """

    __slots__ = ("counts", "login_ms", "reauth_ms")

    def __init__(self) -> None:
        self.counts: _Cells = [0.0] * _N_COUNTERS
        self.login_ms = _Histogram([0.0] * _HIST)
        self.reauth_ms = _Histogram([0.0] * _HIST)

    def used(self) -> bool:
        # Every histogram observation comes with a counter's increment.
        return any(self.counts[i] for i in range(_N_COUNTERS))


class _SharedRow(_Row):
    """A worker's row: the same counters over ``ROW_CELLS`` cells of the shared
    block, followed by its two gauges."""

    __slots__ = ("cells",)

    def __init__(self, cells: memoryview[float]) -> None:
        self.cells = cells
        self.counts = cells[:_N_COUNTERS]
        self.login_ms = _Histogram(cells[_LOGIN : _LOGIN + _HIST])
        self.reauth_ms = _Histogram(cells[_REAUTH : _REAUTH + _HIST])


class WorkerShare:
    """One worker's part of the shared block: its authentication rows, its
    forwarding cells and its edge cells, and the users' table all workers share."""

    __slots__ = ("edge", "forward", "names", "rows")

    def __init__(
        self,
        rows: dict[tuple[str, str], _SharedRow],
        forward: memoryview[float],
        edge: memoryview[float],
        names: UserNames,
    ):
        self.rows = rows
        self.forward = forward
        self.edge = edge
        self.names = names


class WorkerBlocks:
    """Every worker's rows in one anonymous shared mapping, made before the workers fork.

    Args:
        listeners: The listener names.
        mechanisms: The enabled mechanisms' names (a failed login before one
            is chosen counts under ``?``).
        workers: How many workers.
        max_users: ``scram.metrics.max.users``.
    """

    def __init__(
        self, listeners: Sequence[str], mechanisms: Sequence[str], workers: int, max_users: int = 0
    ) -> None:
        self.keys = [(lis, mech) for lis in listeners for mech in (*mechanisms, "?", "")]
        self.workers = workers
        self._rows_cells = len(self.keys) * ROW_CELLS
        self._edge_cells = edge_cells(max_users)
        # Each worker: its rows, the front door's forwarding cells, the edge cells;
        # after every worker's, the users' names, one table for all.
        self._stride = self._rows_cells + FORWARD_CELLS + self._edge_cells
        cells = self._stride * workers
        self._map = mmap.mmap(-1, 8 * cells + max_users * NAME_BYTES)
        self._cells = memoryview(self._map)[: 8 * cells].cast("d")
        self.lock = SharedLock()
        self.names = UserNames(max_users, memoryview(self._map)[8 * cells :], self.lock)

    def rows(self, worker: int) -> dict[tuple[str, str], _SharedRow]:
        """Worker ``worker``'s rows, over the shared cells."""
        base = worker * self._stride
        return {
            key: _SharedRow(self._cells[base + i * ROW_CELLS : base + (i + 1) * ROW_CELLS])
            for i, key in enumerate(self.keys)
        }

    def share(self, worker: int) -> WorkerShare:
        """Worker ``worker``'s rows, forwarding and edge cells, over the shared block."""
        start = worker * self._stride + self._rows_cells
        edge = start + FORWARD_CELLS
        return WorkerShare(
            self.rows(worker),
            self._cells[start:edge],
            self._cells[edge : edge + self._edge_cells],
            self.names,
        )

    def forward_total(self) -> list[float]:
        """The forwarding cells summed over the workers."""
        return self._total(self._rows_cells, FORWARD_CELLS)

    def edge_total(self) -> list[float]:
        """The edge cells summed over the workers."""
        return self._total(self._rows_cells + FORWARD_CELLS, self._edge_cells)

    def _total(self, offset: int, n: int) -> list[float]:
        out = [0.0] * n
        for worker in range(self.workers):
            start = worker * self._stride + offset
            for i, value in enumerate(self._cells[start : start + n].tolist()):
                out[i] += value
        return out

    def clear_gauges(self, worker: int) -> None:
        """A dead worker's connections died with it, its upstream ones too; its
        counts stay."""
        for row in self.rows(worker).values():
            row.cells[_AUTHED] = row.cells[_OPEN] = 0
        ForwardMetrics(self.share(worker).forward).process_gone()

    def total(self) -> dict[tuple[str, str], _SharedRow]:
        """Each row summed over the workers."""
        out = {key: _SharedRow(_new_cells(ROW_CELLS)) for key in self.keys}
        for worker in range(self.workers):
            for key, row in self.rows(worker).items():
                into = out[key].cells
                for i, value in enumerate(row.cells.tolist()):
                    into[i] += value
        return out


class LiveConnection(Protocol):
    """What the gauges read from a live connection (``ConnectionProtocol``)."""

    @property
    def listener_name(self) -> str: ...
    @property
    def authenticated_mechanism(self) -> str | None: ...


class AuthMetrics:
    """Authentication counters for one endpoint, served on ``scram.metrics.listener``.

    Args:
        host: Address to serve ``/metrics`` on.
        port: Port (0 picks a free one; see :attr:`address`).
        connections: Returns the endpoint's live connections, for the gauges.
        shared: A worker's part of the shared block.
        max_users: ``scram.metrics.max.users`` (a worker: its block's).
    """

    def __init__(
        self,
        host: str,
        port: int,
        connections: Callable[[], Iterable[LiveConnection]],
        shared: WorkerShare | None = None,
        max_users: int = 0,
    ) -> None:
        self._host = host
        self._port = port
        self._connections = connections
        self._rows: dict[tuple[str, str], _Row] = {}
        self._server: WSGIServer | None = None
        self.address: tuple[str, int] | None = None
        #: A worker's rows in the shared block (``WorkerBlocks.rows``): then the
        #: parent serves ``/metrics`` and this process publishes its gauges.
        self._shared = shared.rows if shared is not None else None
        self._publishing = threading.Event()
        if shared is not None:
            self._rows.update(shared.rows)
        #: The caps' refusals and the rows per edge user.
        self.edge = (
            EdgeMetrics(shared.names, shared.edge)
            if shared is not None
            else EdgeMetrics(UserNames(max_users))
        )
        #: The front door's forwarding figures (counted only in front-door mode).
        self.forward = ForwardMetrics(shared.forward if shared is not None else None, self.edge)
        #: The endpoint's event loop once started: its task count is a gauge,
        #: so that a soak can see tasks leak (docs/security.md).
        self.loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def from_settings(
        cls,
        settings: Mapping[str, Any],
        connections: Callable[[], Iterable[LiveConnection]],
        shared: WorkerShare | None = None,
    ) -> AuthMetrics | None:
        """``None`` unless ``scram.metrics.listener=HOST:PORT`` is set.

        ``settings`` are the values the configuration table parsed
        (``EndpointConfig.settings``): the address was checked there, with its
        file and line, and is not read again.
        """
        address = settings.get(METRICS_LISTENER_KEY)
        if address is None:
            return None
        host, port = address
        return cls(host, port, connections, shared, settings.get(METRICS_MAX_USERS_KEY, 0))

    # -- counting (event loop) ---------------------------------------------------
    def _row(self, listener: str, mechanism: str) -> _Row:
        row = self._rows.get((listener, mechanism))
        if row is None:
            # A worker's block has a row for each enabled mechanism and "?".
            shared = self._shared is not None and self._rows.get((listener, "?"))
            row = self._rows[listener, mechanism] = shared or _Row()
        return row

    def succeeded(
        self,
        listener: str,
        mechanism: str,
        reauthentication: bool,
        client_supports_reauth: bool,
        latency_s: float,
    ) -> None:
        """A login or re-authentication completed (Kafka's ``Selector.poll``)."""
        row = self._rows.get((listener, mechanism)) or self._row(listener, mechanism)
        if reauthentication:
            row.counts[_REAUTH_OK] += 1
            row.reauth_ms.observe(latency_s * 1000)
        else:
            row.counts[_OK] += 1
            if not client_supports_reauth:
                row.counts[_NO_REAUTH] += 1
            row.login_ms.observe(latency_s * 1000)

    def failed(self, listener: str, mechanism: str, reauthentication: bool) -> None:
        self._row(listener, mechanism).counts[_REAUTH_FAILED if reauthentication else _FAILED] += 1

    def slowed(self, listener: str, mechanism: str) -> None:
        """A login's verdict was held past the failure budget (``_budget.py``)."""
        self._row(listener, mechanism).counts[_SLOWED] += 1

    # -- exposition (prometheus-client's thread) ----------------------------------
    def collect(self) -> Iterator[Any]:
        yield from _families(list(self._rows.items()), *self._gauges())
        yield from edge_families(self.edge.cells, self.edge.names.labels())
        if self.forward.used():
            yield from forward_families(self.forward.cells)
        if self.loop is not None:
            from prometheus_client.core import GaugeMetricFamily

            # all_tasks() copes with the loop adding tasks meanwhile (it retries).
            # One process only: with scram.workers > 1 the parent has no loop.
            tasks = GaugeMetricFamily(PREFIX + "event_loop_tasks", "Tasks on the event loop")
            tasks.add_metric([], len(asyncio.all_tasks(self.loop)))
            yield tasks

    def _gauges(self) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
        """Open connections per listener, authenticated ones per (listener, mechanism)."""
        open_by: dict[str, int] = {}
        auth_by: dict[tuple[str, str], int] = {}
        for conn in list(self._connections()):
            open_by[conn.listener_name] = open_by.get(conn.listener_name, 0) + 1
            mechanism = conn.authenticated_mechanism
            if mechanism is not None:
                key = (conn.listener_name, mechanism)
                auth_by[key] = auth_by.get(key, 0) + 1
        return open_by, auth_by

    def _publish_gauges(self) -> None:
        """A worker's gauges into its shared rows, twice a second, for the parent."""
        rows = self._shared
        assert rows is not None
        while not self._publishing.wait(0.5):
            open_by, auth_by = self._gauges()
            for (listener, mechanism), row in rows.items():
                row.cells[_AUTHED] = auth_by.get((listener, mechanism), 0)
                row.cells[_OPEN] = open_by.get(listener, 0) if mechanism == "" else 0

    def start(self) -> None:
        """Serve ``/metrics`` from a daemon thread (a worker: publish its gauges)."""
        if self._shared is not None:
            threading.Thread(target=self._publish_gauges, name="metrics", daemon=True).start()
            return
        self._server, self.address = serve_metrics(self, self._host, self._port)

    def close(self) -> None:
        self._publishing.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


class WorkersMetrics:
    """The parent's ``/metrics``: every worker's rows summed (:class:`WorkerBlocks`)."""

    def __init__(self, blocks: WorkerBlocks) -> None:
        self.blocks = blocks

    def collect(self) -> Iterator[Any]:
        total = self.blocks.total()
        rows = [(key, row) for key, row in total.items() if row.used()]
        open_by: dict[str, int] = {}
        auth_by: dict[tuple[str, str], int] = {}
        for (listener, mechanism), row in total.items():
            if row.cells[_AUTHED]:
                auth_by[listener, mechanism] = int(row.cells[_AUTHED])
            if mechanism == "" and row.cells[_OPEN]:
                open_by[listener] = int(row.cells[_OPEN])
        yield from _families(rows, open_by, auth_by)
        yield from edge_families(self.blocks.edge_total(), self.blocks.names.labels())
        forward = self.blocks.forward_total()
        if ForwardMetrics(forward).used():
            yield from forward_families(forward)


def serve_metrics(collector: Any, host: str, port: int) -> tuple[WSGIServer, tuple[str, int]]:
    """``/metrics`` of ``collector`` from a daemon thread; logs the URL once.

    Raises:
        ScramConfigError: the address cannot be listened on.
    """
    from prometheus_client import CollectorRegistry
    from prometheus_client import start_http_server

    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    try:
        server, _ = start_http_server(port, host, registry=registry)
    except OSError as exc:
        raise ScramConfigError(
            f"{METRICS_LISTENER_KEY}: cannot listen on {host}:{port} "
            f"({exc.strerror}); choose a free port or leave the key unset"
        ) from None
    bound_host, bound_port = server.server_address[:2]
    log.info("Metrics at http://%s:%d/metrics (%s)", bound_host, bound_port, METRICS_LISTENER_KEY)
    return server, (str(bound_host), int(bound_port))


def _families(
    rows: Sequence[tuple[tuple[str, str], _Row]],
    open_by: Mapping[str, int],
    auth_by: Mapping[tuple[str, str], int],
) -> Iterator[Any]:
    """The metric families of counter rows and gauge counts (prometheus-client's types)."""
    from prometheus_client.core import CounterMetricFamily
    from prometheus_client.core import GaugeMetricFamily
    from prometheus_client.core import HistogramMetricFamily

    labels = ["listener", "mechanism"]
    for name, slot, doc in _COUNTERS:
        family = CounterMetricFamily(PREFIX + name, doc, labels=labels)
        for key, row in rows:
            family.add_metric(list(key), row.counts[slot])
        yield family
    for name, reauth, doc in (
        ("authentication_latency_ms", False, "From accept to authenticated, in ms"),
        (
            "reauthentication_latency_ms",
            True,
            "From the re-authentication's SaslHandshake to its completion, in ms",
        ),
    ):
        histogram = HistogramMetricFamily(PREFIX + name, doc, labels=labels)
        for key, row in rows:
            h = row.reauth_ms if reauth else row.login_ms
            histogram.add_metric(list(key), h.cumulative(), h.total)
        yield histogram
    opened = GaugeMetricFamily(PREFIX + "connections", "Open connections", labels=["listener"])
    for listener, n in open_by.items():
        opened.add_metric([listener], n)
    yield opened
    authenticated = GaugeMetricFamily(
        PREFIX + "authenticated_connections", "Authenticated connections", labels=labels
    )
    for key, n in auth_by.items():
        authenticated.add_metric(list(key), n)
    yield authenticated
