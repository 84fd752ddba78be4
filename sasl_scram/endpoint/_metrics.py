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
"""

from __future__ import annotations

import asyncio
import bisect
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from sasl_scram._errors import ScramConfigError
from sasl_scram.config import ConfigKey

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

__all__ = ["METRICS_LISTENER", "METRICS_LISTENER_KEY", "AuthMetrics", "LiveConnection"]

log = logging.getLogger("sasl_scram.endpoint")

METRICS_LISTENER_KEY = "scram.metrics.listener"
PREFIX = "kafka_scram_"
# Latency buckets in milliseconds, as Kafka reports reauthentication-latency.
BUCKETS_MS = (0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0)
# Slots of one (listener, mechanism) counter row.
_OK, _FAILED, _REAUTH_OK, _REAUTH_FAILED, _NO_REAUTH = range(5)
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
)


def _listener_address(value: str, _: Mapping[str, Any]) -> tuple[str, int] | None:
    """``HOST:PORT`` (an IPv6 host in brackets; no host: every interface); empty: off."""
    value = value.strip()
    if not value:
        return None
    host, sep, port = value.rpartition(":")
    if not sep or not port.isascii() or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"expected HOST:PORT (e.g. 127.0.0.1:9404), got {value!r}")
    return host.strip("[]") or "0.0.0.0", int(port)  # noqa: S104 - the operator asked for it


#: The table entry (``ENDPOINT_KEYS`` holds it); its parser is the only one of the key.
METRICS_LISTENER = ConfigKey(
    METRICS_LISTENER_KEY,
    "",
    _listener_address,
    "HOST:PORT (empty: off)",
    "where Prometheus scrapes /metrics",
)


class _Histogram:
    """Bucket counts and a sum, in milliseconds; ``observe`` is one bisect."""

    __slots__ = ("counts", "total")

    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS_MS) + 1)
        self.total = 0.0

    def observe(self, ms: float) -> None:
        self.counts[bisect.bisect_left(BUCKETS_MS, ms)] += 1
        self.total += ms

    def cumulative(self) -> list[tuple[str, float]]:
        counts = list(self.counts)
        out: list[tuple[str, float]] = []
        running = 0
        for bound, n in zip((*map(str, BUCKETS_MS), "+Inf"), counts, strict=True):
            running += n
            out.append((bound, running))
        return out


class _Row:
    """The counters and histograms of one (listener, mechanism): one lookup per login."""

    __slots__ = ("counts", "login_ms", "reauth_ms")

    def __init__(self) -> None:
        self.counts = [0] * 5
        self.login_ms = _Histogram()
        self.reauth_ms = _Histogram()


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
    """

    def __init__(
        self, host: str, port: int, connections: Callable[[], Iterable[LiveConnection]]
    ) -> None:
        self._host = host
        self._port = port
        self._connections = connections
        self._rows: dict[tuple[str, str], _Row] = {}
        self._server: WSGIServer | None = None
        self.address: tuple[str, int] | None = None
        #: The endpoint's event loop once started: its task count is a gauge,
        #: so that a soak can see tasks leak (docs/security.md).
        self.loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def from_settings(
        cls, settings: Mapping[str, Any], connections: Callable[[], Iterable[LiveConnection]]
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
        return cls(host, port, connections)

    # -- counting (event loop) ---------------------------------------------------
    def _row(self, listener: str, mechanism: str) -> _Row:
        row = self._rows.get((listener, mechanism))
        if row is None:
            row = self._rows[listener, mechanism] = _Row()
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

    # -- exposition (prometheus-client's thread) ----------------------------------
    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import (
            CounterMetricFamily,
            GaugeMetricFamily,
            HistogramMetricFamily,
        )

        labels = ["listener", "mechanism"]
        rows = list(self._rows.items())
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
        open_by: dict[str, int] = {}
        auth_by: dict[tuple[str, str], int] = {}
        for conn in list(self._connections()):
            open_by[conn.listener_name] = open_by.get(conn.listener_name, 0) + 1
            mechanism = conn.authenticated_mechanism
            if mechanism is not None:
                key = (conn.listener_name, mechanism)
                auth_by[key] = auth_by.get(key, 0) + 1
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
        if self.loop is not None:
            # all_tasks() copes with the loop adding tasks meanwhile (it retries).
            tasks = GaugeMetricFamily(PREFIX + "event_loop_tasks", "Tasks on the event loop")
            tasks.add_metric([], len(asyncio.all_tasks(self.loop)))
            yield tasks

    def start(self) -> None:
        """Serve ``/metrics`` from a daemon thread; logs the URL once."""
        from prometheus_client import CollectorRegistry, start_http_server

        registry = CollectorRegistry(auto_describe=False)
        registry.register(self)
        try:
            self._server, _ = start_http_server(self._port, self._host, registry=registry)
        except OSError as exc:
            raise ScramConfigError(
                f"{METRICS_LISTENER_KEY}: cannot listen on {self._host}:{self._port} "
                f"({exc.strerror}); choose a free port or leave the key unset"
            ) from None
        host, port = self._server.server_address[:2]
        self.address = (str(host), int(port))
        log.info("Metrics at http://%s:%d/metrics (%s)", host, port, METRICS_LISTENER_KEY)

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
