"""The front door at run time: a logged-in client connection forwarded to a broker.

:class:`FrontDoor` is the endpoint's part: what it learned of the cluster at
start, the ApiVersions it advertises, the node listeners (upstream node N on
``upstream.node.port.base`` + N) and the address rewriting. A
:class:`Forwarder` joins one client connection, after its login at the edge,
to its own upstream connection: requests pass through the sans-IO
:class:`~sasl_scram.frontdoor.RequestSplitter`, responses through the
:class:`~sasl_scram.frontdoor.ResponseSplitter`, both unparsed but for the
responses that carry broker addresses.

The requests the edge answers itself (re-authentication, the token RPCs,
KIP-554) go back to the connection's :class:`ServerConnection`, one at a
time and only once every forwarded request before it has been answered:
Kafka answers the requests of one connection in order, and so do we.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import socket
import struct
import time
from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import Any

from sasl_scram.config import SaslCredentials
from sasl_scram.config import format_host_port
from sasl_scram.endpoint._config import EndpointConfig
from sasl_scram.endpoint._connection import ConnectionSettings
from sasl_scram.endpoint._forward_metrics import ForwardMetrics
from sasl_scram.endpoint._owner_identity import OwnerIdentity
from sasl_scram.endpoint._upstream import ClusterView
from sasl_scram.endpoint._upstream import UpstreamLink
from sasl_scram.endpoint._upstream import UpstreamProtocol
from sasl_scram.endpoint._upstream import UpstreamUnavailable
from sasl_scram.endpoint._upstream import look_at_cluster
from sasl_scram.endpoint._upstream import open_upstream
from sasl_scram.frontdoor import EDGE_API_KEYS
from sasl_scram.frontdoor import REWRITTEN_APIS
from sasl_scram.frontdoor import AddressRewriter
from sasl_scram.frontdoor import FrontDoorError
from sasl_scram.frontdoor import InFlight
from sasl_scram.frontdoor import InFlightQueue
from sasl_scram.frontdoor import LocalRequest
from sasl_scram.frontdoor import OwnerTokenError
from sasl_scram.frontdoor import RequestSplitter
from sasl_scram.frontdoor import ResponseSplitter
from sasl_scram.frontdoor import UpstreamConfig
from sasl_scram.frontdoor import UpstreamIdentity
from sasl_scram.frontdoor import UpstreamLogin
from sasl_scram.frontdoor import UpstreamLoginError
from sasl_scram.frontdoor import edge_api_versions

if TYPE_CHECKING:
    from sasl_scram.endpoint._protocol import ForwardedConnection

__all__ = ["Forwarder", "FrontDoor", "open_front_door"]

log = logging.getLogger("sasl_scram.endpoint")

_SIZE = struct.Struct(">i")
# Requests in flight per connection before the client's reads pause: Kafka's
# clients keep at most 5 (max.in.flight.requests.per.connection), librdkafka
# up to 1,000,000; each entry is a few dozen bytes.
_SOFT_IN_FLIGHT = 1000
_MAX_IN_FLIGHT = _SOFT_IN_FLIGHT + 4096
# The largest response accepted from a broker at all; a Fetch response is
# bounded by the client's fetch.max.bytes, Kafka's default 50 MiB.
_MAX_RESPONSE = (1 << 31) - 1
# Between logins with a token the broker does not know yet.
_TOKEN_RETRY_S = 0.25
# When to re-authenticate at the cluster, as a share of the session's lifetime.
_REAUTH_AT = 0.85
# Bytes read from a client while its upstream connection is being opened.
_MAX_EARLY = 1024 * 1024


class FrontDoor:
    """The endpoint's front door: one per process.

    Args:
        upstream: the typed ``upstream.`` keys.
        cluster: what the start-up look found.
        host: the host clients reach the front door on (node listeners, rewritten addresses).
        local_keys: the API keys the edge answers itself.
        max_request: the largest request forwarded (``socket.request.max.bytes``).
        max_local: the largest request the edge answers itself.
        timeout: seconds to open and log in an upstream connection.
    """

    def __init__(
        self,
        upstream: UpstreamConfig,
        cluster: ClusterView,
        host: str,
        edge: dict[int, tuple[int, int]],
        *,
        max_request: int,
        max_local: int,
        timeout: float = 30.0,
    ) -> None:
        self.upstream = upstream
        self.brokers = dict(cluster.brokers)
        self.api_versions = edge_api_versions(cluster.api_keys, edge)
        self.local_keys = frozenset(edge)
        self.forwarded = {
            e["api_key"]: (e["min_version"], e["max_version"])
            for e in self.api_versions
            if e["api_key"] not in self.local_keys
        }
        self.rewriter = AddressRewriter(host, upstream.node_port_base, learn=self._learn)
        self.max_request = max_request
        self.max_local = max_local
        #: The login, TLS and time-out of every connection to the cluster.
        self.link = UpstreamLink.of(upstream.client, timeout)
        #: Node id by the port of its node listener.
        self.node_ports: dict[int, int] = {}
        #: Called with a node id first seen in a response: open its listener.
        self.on_new_node: Callable[[int], None] | None = None
        #: The connections' settings, advertising what is forwarded (set by
        #: :func:`open_front_door`).
        self.settings: ConnectionSettings | None = None
        self._refused_logged = False
        #: Forwarding figures, when ``scram.metrics.listener`` is set.
        self.metrics: ForwardMetrics | None = None
        #: ``upstream.identity=owner-token``: each user's tokens (else ``None``).
        self.owners: OwnerIdentity | None = None

    def _learn(self, node_id: int, host: str, port: int) -> None:
        if self.brokers.get(node_id) != (host, port):
            known = node_id in self.brokers
            self.brokers[node_id] = (host, port)
            if not known and self.on_new_node is not None:
                self.on_new_node(node_id)

    def targets(self, local_port: int) -> list[tuple[str, int]]:
        """Where a connection accepted on ``local_port`` is forwarded."""
        node = self.node_ports.get(local_port)
        if node is None:
            return list(self.upstream.bootstrap)
        address = self.brokers.get(node)
        return [address] if address is not None else []

    def rewrite(self, entry: InFlight, payload: bytes) -> bytes:
        return self.rewriter.rewrite(entry.api_key, entry.api_version, payload)

    def upstream_refused(self, conn_id: str, exc: Exception) -> None:
        """A refused upstream login: said once at WARNING, then at DEBUG."""
        level = logging.DEBUG if self._refused_logged else logging.WARNING
        self._refused_logged = True
        log.log(level, "[%s] upstream login refused: %s", conn_id, exc)

    def count(self, event: str) -> None:
        if self.metrics is not None:
            self.metrics.upstream(event)

    async def open_for(self, local_port: int, conn_id: str, user: str) -> UpstreamProtocol:
        """A logged-in upstream connection for ``user``'s client accepted on ``local_port``.

        Raises:
            UpstreamLoginError: the cluster refused the login (logged once).
            FrontDoorError: no broker could be reached (logged at INFO).
        """
        targets = self.targets(local_port)
        owners = self.owners
        if owners is not None:
            owners.tokens.acquire(user)
        try:
            if not targets:
                raise UpstreamUnavailable("this node port's broker is not known (yet)")
            upstream = await self._open(targets, user)
        except BaseException as exc:
            if owners is not None:
                owners.tokens.release(user)
            if isinstance(exc, FrontDoorError):
                self._opening_failed(conn_id, exc)
            raise
        if owners is not None:
            upstream.on_gone = lambda: owners.tokens.release(user)
        self.count("opened")
        return upstream

    async def _open(self, targets: list[tuple[str, int]], user: str) -> UpstreamProtocol:
        if self.owners is None:
            return await open_upstream(self.link, targets)
        # A broker learns a new token from the metadata log (KRaft) or a change
        # notification: a refusal within PROPAGATION_MS of its creation is retried.
        while True:
            secret, token = await self.owners.login(user)
            try:
                return await open_upstream(dataclasses.replace(self.link, secret=secret), targets)
            except UpstreamLoginError:
                if not token.fresh(int(time.time() * 1000)):
                    raise
                await asyncio.sleep(_TOKEN_RETRY_S)

    async def secret_for(self, user: str) -> SaslCredentials | None:
        """The login of ``user``'s upstream connections now (KIP-368 re-authentication)."""
        if self.owners is None:
            return self.link.secret
        return (await self.owners.login(user))[0]

    def _opening_failed(self, conn_id: str, exc: FrontDoorError) -> None:
        if isinstance(exc, UpstreamLoginError | OwnerTokenError):
            self.upstream_refused(conn_id, exc)
            self.count("login_refused")
        else:
            log.info("[%s] cannot forward: %s", conn_id, exc)
            self.count("unreachable")


async def open_front_door(
    config: EndpointConfig,
    settings: ConnectionSettings,
    timeout: float,
    metrics: ForwardMetrics | None = None,
) -> FrontDoor:
    """Look at the cluster (one line, and exit 1, when it cannot be reached or
    refuses the login), then advertise what can be forwarded."""
    upstream = config.upstream
    assert upstream is not None
    client = upstream.client
    cluster = await look_at_cluster(UpstreamLink.of(client, timeout), upstream.bootstrap)
    first = config.listeners[0]
    advertised = config.advertised.get(first.name)
    host = (advertised.host if advertised else "") or first.host or socket.getfqdn()
    edge = {k: (lo, hi) for k, lo, hi in settings.api_versions if k in EDGE_API_KEYS}
    door = FrontDoor(
        upstream,
        cluster,
        host,
        edge,
        max_request=config.max_request,
        max_local=config.sasl_max_receive,
        timeout=timeout,
    )
    door.metrics = metrics
    if upstream.identity is UpstreamIdentity.OWNER_TOKEN:
        door.owners = OwnerIdentity(upstream, timeout)
        await door.owners.start()
    door.settings = dataclasses.replace(
        settings,
        api_versions=tuple(
            (e["api_key"], e["min_version"], e["max_version"]) for e in door.api_versions
        ),
        hand_off_after_login=True,
        cached_responses={},
    )
    log.info(
        "Front door to %s: %d brokers, upstream.identity=%s",
        ",".join(format_host_port(h, p) for h, p in upstream.bootstrap),
        len(cluster.brokers),
        upstream.identity.value,
    )
    return door


class Forwarder:
    """One logged-in client connection and its upstream connection."""

    def __init__(
        self, door: FrontDoor, protocol: ForwardedConnection, upstream: UpstreamProtocol
    ) -> None:
        self._door = door
        self._protocol = protocol
        self._client = protocol.client_transport
        self._conn = conn = protocol.server_connection
        self._in_flight = InFlightQueue(_MAX_IN_FLIGHT)
        self._requests = RequestSplitter(
            self._in_flight,
            door.local_keys,
            max_frame=door.max_request,
            max_buffered=door.max_local,
            forwarded=door.forwarded,
            stop_at_local=True,
            observe=door.metrics.request if door.metrics else None,
        )
        self._responses = ResponseSplitter(
            self._in_flight,
            door.rewrite,
            REWRITTEN_APIS,
            max_frame=_MAX_RESPONSE,
            max_buffered=door.max_request,
            observe=door.metrics.response if door.metrics else None,
        )
        self._upstream = upstream
        # What followed the login in its read: forwarded once attached.
        self._early = bytearray(conn.hand_off())
        self._local: LocalRequest | None = None
        self._closed = False
        self._upstream_paused = False
        self._client_paused = False
        session = conn.session
        self._user = session.authorization_id if session is not None else ""
        # KIP-368 at the cluster: our login there expires too (see _schedule_reauth).
        self._reauth_due = False
        self._reauth_timer: asyncio.TimerHandle | None = None
        self._relogging = False
        self._task: asyncio.Task[None] | None = None
        upstream.on_lost = self._upstream_lost
        upstream.on_writable = self._upstream_writable
        upstream.attach(self._upstream_data)
        self._schedule_reauth()
        self._release_early()

    def _release_early(self) -> None:
        early, self._early = bytes(self._early), bytearray()
        self._update_client_reading()
        if early:
            self.client_data(early)

    # -- KIP-368 at the cluster -------------------------------------------------------
    def _schedule_reauth(self) -> None:
        """A broker with ``connections.max.reauth.ms`` closes a session not
        re-authenticated in time: log in again, in band, at 85% of it (Kafka's
        clients pick 85-95%), once nothing is in flight."""
        lifetime_ms = self._upstream.session_lifetime_ms
        if lifetime_ms > 0 and not self._closed:
            delay = lifetime_ms * _REAUTH_AT / 1000
            self._reauth_timer = asyncio.get_running_loop().call_later(delay, self._reauth_now)

    def _reauth_now(self) -> None:
        self._reauth_timer = None
        self._reauth_due = True
        self._update_client_reading()
        self._maybe_reauth()

    def _maybe_reauth(self) -> None:
        if not self._reauth_due or self._relogging or self._closed:
            return
        if len(self._in_flight) or not self._responses.idle() or not self._requests.idle():
            return
        self._relogging = True
        self._task = asyncio.get_running_loop().create_task(self._relogin())

    async def _relogin(self) -> None:
        upstream = self._upstream
        try:
            async with asyncio.timeout(self._door.link.timeout):
                # An owner token's session ends at the token's expiry, whatever
                # its renewals: log in again with the user's current token.
                secret = await self._door.secret_for(self._user)
                assert secret is not None, "a session with a lifetime has a SASL login"
                await upstream.relogin(UpstreamLogin(secret))
        except (FrontDoorError, TimeoutError) as exc:
            self._door.upstream_refused(self._protocol.conn_id, exc)
            self._protocol.close("upstream re-authentication failed")
            return
        finally:
            self._task = None
            self._relogging = False
            self._reauth_due = False
        log.debug("[%s] re-authenticated at the cluster", self._protocol.conn_id)
        self._schedule_reauth()
        self._release_early()

    # -- client to cluster ----------------------------------------------------------
    def client_data(self, data: bytes) -> None:
        if self._closed:
            return
        if self._relogging or self._local is not None or self._requests.stopped:
            if self._relogging:
                self._early += data
                if len(self._early) > _MAX_EARLY:
                    self._fail("more than 1 MiB sent during a re-authentication at the cluster")
            else:
                self._requests.feed(data)  # held with the local request's rest
            self._update_client_reading()
            return
        try:
            self._forward(self._requests.feed(data))
        except FrontDoorError as exc:
            self._fail(f"client: {exc}")

    def _forward(self, events: list[Any]) -> None:
        chunks = []
        for event in events:
            if type(event) is LocalRequest:
                self._local = event
            else:
                chunks.append(event)
        if chunks:
            conn = self._conn
            if not conn.authenticated or conn.session_expired():
                # KIP-368: an expired session may only re-authenticate; and nothing
                # is forwarded in the middle of a re-authentication.
                self._fail("session expired without re-authentication", None)
                return
            assert self._upstream.transport is not None
            self._upstream.transport.writelines(chunks)
        self._maybe_answer_local()
        if self._reauth_due:
            self._maybe_reauth()
        self._update_client_reading()

    def _maybe_answer_local(self) -> None:
        local = self._local
        if local is None or len(self._in_flight) or not self._responses.idle():
            return
        if self._protocol.busy_locally():
            return
        self._local = None
        payload = local.payload
        self._protocol.run_local(_SIZE.pack(len(payload)) + payload)
        if not self._protocol.busy_locally():
            self.local_done()

    def local_done(self) -> None:
        """The edge has answered the local request: go on with what followed it."""
        if self._closed or self._local is not None or not self._requests.stopped:
            return
        try:
            self._forward(self._requests.resume())
        except FrontDoorError as exc:
            self._fail(f"client: {exc}")

    # -- cluster to client ----------------------------------------------------------
    def _upstream_data(self, data: bytes) -> None:
        if self._closed:
            return
        try:
            out = self._responses.feed(data)
        except FrontDoorError as exc:
            self._fail(f"cluster: {exc}")
            return
        if out:
            self._client.writelines(out)
        if self._local is not None:
            self._maybe_answer_local()
        elif self._reauth_due:
            self._maybe_reauth()
        elif self._client_paused and len(self._in_flight) < _SOFT_IN_FLIGHT:
            self._update_client_reading()

    def _count(self, event: str) -> None:
        self._door.count(event)

    def _upstream_lost(self, reason: str) -> None:
        self._count("closed")
        if not self._closed:
            log.info("[%s] %s", self._protocol.conn_id, reason)
            self._protocol.close("upstream closed")

    def _upstream_writable(self, writable: bool) -> None:
        self._upstream_paused = not writable
        self._update_client_reading()

    def client_writable(self, writable: bool) -> None:
        """Back-pressure: a client that does not read its responses stops our
        reads from its broker, never our buffering of them."""
        upstream = self._upstream
        if upstream.transport is None or upstream.lost:
            return
        if writable:
            upstream.transport.resume_reading()
        else:
            upstream.transport.pause_reading()

    def _update_client_reading(self) -> None:
        pause = (
            self._upstream_paused
            or self._local is not None
            # Between two frames only: one half sent up must be finished first.
            or (self._reauth_due and self._requests.idle())
            or self._requests.stopped
            or len(self._in_flight) >= _SOFT_IN_FLIGHT
        )
        if pause != self._client_paused:
            self._client_paused = pause
            self._protocol.set_forward_paused(pause)

    # -- the end --------------------------------------------------------------------
    def _fail(self, reason: str, event: str | None = "protocol_error") -> None:
        if event is not None:
            self._count(event)
        log.info("[%s] closing: %s", self._protocol.conn_id, reason)
        self._protocol.close(reason)

    def close(self) -> None:
        """The client connection is gone: its upstream connection goes at once."""
        self._closed = True
        if self._task is not None:
            self._task.cancel()
        if self._reauth_timer is not None:
            self._reauth_timer.cancel()
        self._upstream.close()
