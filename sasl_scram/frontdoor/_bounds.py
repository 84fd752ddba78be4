"""Every bound of a forwarded connection, in one frozen object.

Built once per front door from the configuration; each bound says what
happens when a peer reaches it. ``socket.request.max.bytes`` is read here
and nowhere else on the forwarding side.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["ProxyBounds"]

_KIB: Final = 1024
_MIB: Final = 1024 * _KIB


@dataclass(frozen=True, slots=True, kw_only=True)
class ProxyBounds:
    """What one forwarded connection may hold, and what reaching each bound does.

    Attributes:
        max_request: the largest request forwarded (``socket.request.max.bytes``);
            a bigger one closes the connection, as Kafka's ``SocketServer``
            closes it (``InvalidReceiveException``).
        max_parsed_request: the largest request read whole, by the edge's own
            handlers or a request filter (``sasl.server.max.receive.size``);
            a bigger one closes the connection. Also the largest request or
            response read whole only to be watched (the audit trail): a bigger
            one streams through unread, so watching never closes a connection.
        max_rewritten_response: the largest response read whole to rewrite
            (Metadata, FindCoordinator, DescribeCluster); a bigger one closes
            the connection. Other responses stream through unbuffered.
        pause_in_flight: requests awaiting a response at which reading the
            client pauses until the cluster answers (Kafka's clients keep at
            most 5 in flight, ``max.in.flight.requests.per.connection``;
            librdkafka up to 1,000,000).
        max_in_flight: past this many (what was already read when reading
            paused), the connection closes. Each entry is a few dozen bytes.
        pause_held: bytes read from the client and held, while the upstream
            connection opens or the edge answers a request, at which reading
            the client pauses.
        max_held: past this many bytes held (what was read before reading
            paused), the connection closes.
        upstream_timeout_s: ``upstream.request.timeout.ms`` in seconds: to open
            and log in an upstream connection, and to re-authenticate on it.
        reauth_at: when to re-authenticate at the cluster, as a share of the
            session's lifetime there (KIP-368; Kafka's clients pick 85-95%).
        verdict_wait_s: how long a ``service``-mode login's verdict waits for
            the cluster to take our login for it, when the cluster took the
            last one: past it the verdict goes out, and the client's requests
            are held (``pause_held``, ``max_held``) until the upstream
            connection is logged in, or closed at ``upstream_timeout_s``. A
            cluster that stops answering (a frozen broker) so delays a login
            that needs nothing from it by this much, never until its time-out.
    """

    # From the configuration (the key table holds their defaults): no default here.
    max_request: int
    max_parsed_request: int
    max_rewritten_response: int
    upstream_timeout_s: float
    # The front door's own.
    pause_in_flight: int = 1000
    max_in_flight: int = 1000 + 4096
    pause_held: int = 64 * _KIB
    max_held: int = _MIB
    reauth_at: float = 0.85
    verdict_wait_s: float = 1.0

    def __post_init__(self) -> None:
        if self.pause_in_flight > self.max_in_flight:
            raise ValueError("pause_in_flight must not exceed max_in_flight")
        if self.pause_held > self.max_held:
            raise ValueError("pause_held must not exceed max_held")

    @classmethod
    def from_settings(
        cls, *, max_request: int, max_parsed_request: int, upstream_timeout_ms: int
    ) -> ProxyBounds:
        """The bounds of a front door: ``socket.request.max.bytes``,
        ``sasl.server.max.receive.size`` and ``upstream.request.timeout.ms``.

        A rewritten response is bounded like a request: the biggest Metadata
        answer of a large cluster stays far below Kafka's 100 MiB default.
        """
        return cls(
            max_request=max_request,
            max_parsed_request=max_parsed_request,
            max_rewritten_response=max_request,
            upstream_timeout_s=upstream_timeout_ms / 1000,
        )
