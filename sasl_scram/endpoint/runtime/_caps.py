"""Counting the connection caps: per client address at accept, per user at login.

Kafka's ``ConnectionQuotas.inc`` counts a connection against its address as
the acceptor takes it, and a connection past the address's cap is closed at
once (``TooManyConnectionsException``, "Rejected connection from ...,
address already has the configured maximum of N connections"); ``dec``
gives the place back when it closes. Here the acceptor asks
:meth:`ConnectionCaps.admit_address` for each connection it takes, and a
connection asks :meth:`ConnectionCaps.admit_user` once its first login
succeeds; each place is a :class:`Place` that the connection gives back when
it goes (its ``release`` may be called more than once).

Kafka logs every refused connection at INFO; a client or a user retrying in
a loop would flood the log, so here each cap says it at most once per
:data:`LOG_INTERVAL` (per user for the per-user cap), with the number refused
meanwhile, and counts every refusal in ``kafka_scram_refused_connections_total``.
Everything runs on the event loop: no lock.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from collections.abc import Mapping

from sasl_scram.endpoint._connection_caps import JAVA_INT_MAX
from sasl_scram.endpoint._connection_caps import PER_IP_KEY
from sasl_scram.endpoint._connection_caps import PER_USER_KEY
from sasl_scram.endpoint._edge_metrics import CAPS
from sasl_scram.endpoint._edge_metrics import EdgeMetrics

__all__ = ["LOG_INTERVAL", "ConnectionCaps", "Place", "RateLimitedLines"]

log = logging.getLogger("sasl_scram.endpoint")

#: A cap says it is refusing at most once per this many seconds (per user).
LOG_INTERVAL = 60.0
_PER_IP, _PER_USER = CAPS.index(PER_IP_KEY), CAPS.index(PER_USER_KEY)


def _nothing() -> None:
    """The release of a place that was not counted (no cap is set)."""


class Place:
    """One connection's place in a count: :meth:`release` gives it back, once."""

    __slots__ = ("_counts", "_key")

    def __init__(self, counts: dict[str, int], key: str) -> None:
        self._counts: dict[str, int] | None = counts
        self._key = key

    def release(self) -> None:
        counts = self._counts
        if counts is None:
            return
        self._counts = None
        left = counts[self._key] - 1
        if left:
            counts[self._key] = left
        else:
            del counts[self._key]  # Kafka's dec: an address with no connection is forgotten


class RateLimitedLines:
    """Whether a line about ``key`` is due: at most one per ``interval`` per key,
    for at most ``max_keys`` keys (past that, the keys share one turn).

    Args:
        interval: Seconds between two lines about one key.
        max_keys: Keys remembered at once.
        clock: Monotonic seconds.
    """

    def __init__(
        self, interval: float, max_keys: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._interval = interval
        self._max_keys = max_keys
        self._clock = clock
        # key -> (time of its last line, refusals since)
        self._last: dict[str, tuple[float, int]] = {}

    def due(self, key: str) -> int | None:
        """``None``: stay quiet (the refusal is counted for the next line); else the
        number of refusals left unsaid since the key's last line."""
        now = self._clock()
        if key not in self._last and len(self._last) >= self._max_keys:
            self._last = {k: v for k, v in self._last.items() if now - v[0] < self._interval}
            if len(self._last) >= self._max_keys:
                key = ""  # every key beyond the bound shares one turn
        last, since = self._last.get(key, (None, 0))
        if last is not None and now - last < self._interval:
            self._last[key] = (last, since + 1)
            return None
        self._last[key] = (now, 0)
        return since


class ConnectionCaps:
    """The per-address and per-user counts of one process, and their refusals.

    Args:
        per_ip: ``max.connections.per.ip``.
        overrides: ``max.connections.per.ip.overrides``, by IP address.
        per_user: ``scram.max.connections.per.user``.
        metrics: Where refusals are counted (``None``: metrics off).
        clock: Monotonic seconds, for the logs' rate.
    """

    def __init__(
        self,
        per_ip: int,
        overrides: Mapping[str, int],
        per_user: int,
        metrics: EdgeMetrics | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._per_ip = per_ip
        self._overrides = dict(overrides)
        self._per_user = per_user
        self._metrics = metrics
        #: Whether addresses are counted at all (Kafka's defaults: no cap).
        self.per_address = per_ip < JAVA_INT_MAX or bool(overrides)
        #: Whether users are counted at all.
        self.per_user = per_user < JAVA_INT_MAX
        # Bounded: an address or user is here only while it has a connection.
        self.addresses: dict[str, int] = {}
        self.users: dict[str, int] = {}
        self._address_lines = RateLimitedLines(LOG_INTERVAL, 1, clock)
        # One line per user and minute; beyond this many users at once, one line.
        self._user_lines = RateLimitedLines(LOG_INTERVAL, 10_000, clock)

    def admit_address(self, host: str) -> Callable[[], None] | None:
        """A place for a new connection from ``host`` (the peer's IP address as the
        kernel writes it), as the release to call when it closes; ``None``: the
        address is at its cap (said, counted)."""
        if "%" in host:
            # A link-local peer's zone (fe80::1%eth0): Kafka's InetAddress keys
            # compare without it, and so do the overrides (canonical_address).
            host = host.partition("%")[0]
        count = self.addresses.get(host, 0)
        cap = self._overrides.get(host, self._per_ip)
        if count >= cap:
            self._refused_address(host, cap)
            return None
        self.addresses[host] = count + 1
        return Place(self.addresses, host).release

    def admit_user(self, user: str, conn_id: str) -> Callable[[], None] | None:
        """A place for a new logged-in connection of ``user``, as the release to call
        when it closes; ``None``: the user is at its cap (said, counted)."""
        if not self.per_user:
            return _nothing
        count = self.users.get(user, 0)
        if count >= self._per_user:
            self._refused_user(user, conn_id)
            return None
        self.users[user] = count + 1
        return Place(self.users, user).release

    def user_refusal(self, user: str) -> str:
        """What a client refused by the per-user cap is told (its login's error)."""
        return (
            f"User {user} already has the configured maximum of {self._per_user} connections "
            f"({PER_USER_KEY})"
        )

    def _refused_address(self, host: str, cap: int) -> None:
        if self._metrics is not None:
            self._metrics.refused(_PER_IP)
        # One turn for every address: a client with many addresses cannot flood it.
        since = self._address_lines.due("")
        if since is None:
            return
        more = f"; {since} more refused since the last line" if since else ""
        log.warning(
            "Rejected connection from %s, address already has the configured maximum of %d "
            "connections (%s, closed at once%s; said at most once every %d s)",
            host, cap, PER_IP_KEY, more, LOG_INTERVAL,
        )  # fmt: skip

    def _refused_user(self, user: str, conn_id: str) -> None:
        if self._metrics is not None:
            self._metrics.refused(_PER_USER)
        since = self._user_lines.due(user)
        if since is None:
            return
        more = f"; {since} more refused since the last line" if since else ""
        log.warning(
            "[%s] Refused User:%.200r after its login: it already has the configured maximum "
            "of %d connections (%s%s; said at most once every %d s per user)",
            conn_id, user, self._per_user, PER_USER_KEY, more, LOG_INTERVAL,
        )  # fmt: skip
