"""The front door at run time: a logged-in client connection forwarded to a broker.

:class:`FrontDoor` is the endpoint's part: what it learned of the cluster at
start, the ApiVersions it advertises, the node listeners (upstream node N on
``upstream.node.port.base`` + N), the bounds and the filter chain. A
:class:`ProxyAdapter` joins one client connection, after its login at the
edge, to its own upstream connection: it carries out what the sans-IO
:class:`~sasl_scram.frontdoor.ProxyConnection` decides, which owns the
connection's whole life after login.

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
import time
from collections.abc import Callable
from typing import Protocol

from sasl_scram.audit import audit
from sasl_scram.config import KafkaPrincipal
from sasl_scram.config import SaslCredentials
from sasl_scram.config import format_host_port
from sasl_scram.endpoint._config import EndpointConfig
from sasl_scram.endpoint._forward_metrics import ForwardMetrics
from sasl_scram.endpoint.acls import EdgeAcls
from sasl_scram.endpoint.acls import audit_writes
from sasl_scram.endpoint.acls import log_decision
from sasl_scram.endpoint.login import Authenticated
from sasl_scram.endpoint.login import ConnectionSettings
from sasl_scram.endpoint.login import Output
from sasl_scram.endpoint.login import ServerConnection
from sasl_scram.endpoint.login import refuse_forwarded_login
from sasl_scram.endpoint.proxy._owner_identity import OwnerIdentity
from sasl_scram.endpoint.proxy._reachable import ClusterGates
from sasl_scram.endpoint.proxy._reachable import open_when_reachable
from sasl_scram.endpoint.proxy._topic_ids import TopicIdRefresh
from sasl_scram.endpoint.proxy._upstream import ClusterView
from sasl_scram.endpoint.proxy._upstream import UpstreamLink
from sasl_scram.endpoint.proxy._upstream import UpstreamProtocol
from sasl_scram.endpoint.proxy._upstream import UpstreamUnavailable
from sasl_scram.endpoint.proxy._upstream import cluster_operations
from sasl_scram.endpoint.proxy._upstream import look_at_cluster
from sasl_scram.endpoint.proxy._upstream import open_upstream
from sasl_scram.frontdoor import ACL_API_KEYS
from sasl_scram.frontdoor import EDGE_API_KEYS
from sasl_scram.frontdoor import Action
from sasl_scram.frontdoor import AddressRewriteFilter
from sasl_scram.frontdoor import AddressRewriter
from sasl_scram.frontdoor import AnswerLocally
from sasl_scram.frontdoor import Chunk
from sasl_scram.frontdoor import CloseConnection
from sasl_scram.frontdoor import EdgeRequestFilter
from sasl_scram.frontdoor import EdgeSession
from sasl_scram.frontdoor import FilterChain
from sasl_scram.frontdoor import FrontDoorError
from sasl_scram.frontdoor import OwnerAdminRefused
from sasl_scram.frontdoor import OwnerToken
from sasl_scram.frontdoor import OwnerTokenError
from sasl_scram.frontdoor import Phase
from sasl_scram.frontdoor import ProxyBounds
from sasl_scram.frontdoor import ProxyConnection
from sasl_scram.frontdoor import ReadClient
from sasl_scram.frontdoor import ReadCluster
from sasl_scram.frontdoor import Relogin
from sasl_scram.frontdoor import RequestFilter
from sasl_scram.frontdoor import SetTimer
from sasl_scram.frontdoor import ToClient
from sasl_scram.frontdoor import ToCluster
from sasl_scram.frontdoor import UpstreamConfig
from sasl_scram.frontdoor import UpstreamIdentity
from sasl_scram.frontdoor import UpstreamLogin
from sasl_scram.frontdoor import UpstreamLoginError
from sasl_scram.frontdoor import check_service_login
from sasl_scram.frontdoor import describe_cluster_version
from sasl_scram.frontdoor import edge_api_versions
from sasl_scram.frontdoor import owner_refusal
from sasl_scram.frontdoor import upstream_login_name
from sasl_scram.frontdoor.audit import AdminAuditFilter
from sasl_scram.frontdoor.audit import audit_enabled
from sasl_scram.frontdoor.audit import cluster_identity
from sasl_scram.frontdoor.authorization import AUTHORIZED_CAPS
from sasl_scram.frontdoor.authorization import RULES
from sasl_scram.frontdoor.authorization import UNCHECKED
from sasl_scram.frontdoor.authorization import AuthorizationFilter

__all__ = ["REFUSED_UPSTREAM", "EdgeConnection", "FrontDoor", "ProxyAdapter", "open_front_door"]

log = logging.getLogger("sasl_scram.endpoint")

# Between logins with a token the broker does not know yet.
_TOKEN_RETRY_S = 0.25
#: What a client hears when the cluster refuses the front door's login for it.
REFUSED_UPSTREAM = (
    "The front door could not log in to the cluster for this connection (the cluster "
    "refused its upstream login); ask the front door's operator"
)
#: A verdict held until the upstream connection is open: the answers already
#: due and the outputs from the verdict on.
Held = tuple[bytes, list[Output]]
#: A transport's ``writelines``.
Writer = Callable[[list[Chunk]], None]


def _not_attached(chunks: list[Chunk]) -> None:
    raise AssertionError("a proxy connection forwarded before its upstream was attached")


class EdgeConnection(Protocol):
    """What a :class:`ProxyAdapter` needs of the client's connection at the edge
    (``ConnectionProtocol``): the transport, the login state machine, and the
    edge's own answering of requests."""

    conn_id: str

    @property
    def client_transport(self) -> asyncio.Transport: ...
    @property
    def server_connection(self) -> ServerConnection: ...
    @property
    def local_port(self) -> int: ...
    @property
    def client_host(self) -> str: ...
    def verdict_delay(self, verdict: Authenticated) -> float: ...
    def release_verdict(self, held: bytes, rest: list[Output]) -> None: ...
    def set_forward_paused(self, paused: bool) -> None: ...
    def run_local(self, frame: bytes) -> None: ...
    def busy_locally(self) -> bool: ...
    def close(self, reason: str) -> None: ...


class FrontDoor:
    """The endpoint's front door: one per process.

    Args:
        upstream: the typed ``upstream.`` keys.
        cluster: what the start-up look found.
        host: the host clients reach the front door on (node listeners, rewritten addresses).
        local_keys: the API keys the edge answers itself.
        bounds: every bound of a forwarded connection.
        authorization: the edge's ACLs as a request filter (``None``: off).
    """

    def __init__(
        self,
        upstream: UpstreamConfig,
        cluster: ClusterView,
        host: str,
        edge: dict[int, tuple[int, int]],
        bounds: ProxyBounds,
        authorization: AuthorizationFilter | None = None,
    ) -> None:
        self.upstream = upstream
        self.brokers = dict(cluster.brokers)
        if authorization is None:
            self.api_versions = edge_api_versions(cluster.api_keys, edge)
        else:
            # Only what the edge can authorize is advertised, so forwarded.
            self.api_versions = edge_api_versions(
                cluster.api_keys, edge, only=RULES.keys() | UNCHECKED, caps=AUTHORIZED_CAPS
            )
        #: The DescribeCluster version an owner's first login with a token asks
        #: its cluster operations with (``None``: the cluster has none).
        self.describe_version = describe_cluster_version(cluster.api_keys)
        self.local_keys = frozenset(edge)
        self.forwarded = {
            e["api_key"]: (e["min_version"], e["max_version"])
            for e in self.api_versions
            if e["api_key"] not in self.local_keys
        }
        self.rewriter = AddressRewriter(host, upstream.node_port_base, learn=self._learn)
        self.bounds = bounds
        #: What stays at the edge, then the edge's authorization, then the audit
        #: of the administrative requests; responses: the address rewriter.
        requests: list[RequestFilter] = [EdgeRequestFilter(self.local_keys)]
        if authorization is not None:
            requests.append(authorization)
        if audit_enabled():
            # Checked once, here: with the audit logger off, administrative
            # requests stream through unread like any other.
            requests.append(AdminAuditFilter())
        self.chain = FilterChain(requests, [AddressRewriteFilter(self.rewriter)])
        #: The login, TLS and time-out of every connection to the cluster.
        self.link = UpstreamLink.of(upstream.client, bounds.upstream_timeout_s)
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
        #: The edge's ACLs, with ``authorizer.class.name`` (else ``None``).
        self.acls: EdgeAcls | None = None
        #: Whether each set of cluster addresses answers (``_reachable.py``).
        self.gates = ClusterGates(self.link, lambda: self.metrics)
        #: Teaches the edge's authorization the topic ids it misses (else ``None``).
        self.topic_ids = (
            None
            if authorization is None
            else TopicIdRefresh(
                authorization.topic_names, self.link, upstream.bootstrap, cluster.api_keys
            )
        )

    def _learn(self, node_id: int, host: str, port: int) -> None:
        if self.brokers.get(node_id) != (host, port):
            known = node_id in self.brokers
            self.brokers[node_id] = (host, port)
            if not known and self.on_new_node is not None:
                self.on_new_node(node_id)

    def edge_session(self, edge: EdgeConnection, verdict: Authenticated) -> EdgeSession:
        """Who a forwarded connection's filters see sending its requests."""
        session = verdict.session
        client = self.upstream.client
        return EdgeSession(
            KafkaPrincipal.user(session.authorization_id),
            edge.client_host,
            edge.conn_id,
            token_id=session.username if session.token_authenticated else None,
            cluster_principal=self._cluster_principal(session.authorization_id),
            cluster_token_id=(
                client.username if self.owners is None and client.token_auth else None
            ),
        )

    def _cluster_principal(self, owner: str) -> KafkaPrincipal | None:
        """Who the cluster sees; ``None`` when serve logs in with a token, whose
        owner only the cluster knows."""
        if self.owners is not None:
            return KafkaPrincipal.user(owner)
        client = self.upstream.client
        if client.token_auth or not client.username:
            return None
        return KafkaPrincipal.user(client.username)

    def targets(self, local_port: int) -> list[tuple[str, int]]:
        """Where a connection accepted on ``local_port`` is forwarded."""
        node = self.node_ports.get(local_port)
        if node is None:
            return list(self.upstream.bootstrap)
        address = self.brokers.get(node)
        return [address] if address is not None else []

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
        owners = self.owners
        if owners is None:
            return await open_upstream(self.link, targets)
        owner = KafkaPrincipal.user(user)
        # A listed owner is forwarded whatever it holds: nothing to ask.
        checked = owner in self.upstream.owner_admins
        # A broker learns a new token from the metadata log (KRaft) or a change
        # notification: a refusal within PROPAGATION_MS of its creation is retried.
        while True:
            secret, token = await owners.login(user)
            if not checked and token.cluster_operations is not None:
                # Known with this token: refused before a connection is opened.
                self._refuse_admin(owner, token)
            link = dataclasses.replace(self.link, secret=secret)
            try:
                upstream = await open_upstream(link, targets)
            except UpstreamLoginError:
                if not token.fresh(int(time.time() * 1000)):
                    raise
                await asyncio.sleep(_TOKEN_RETRY_S)
                continue
            break
        if not checked and token.cluster_operations is None:
            try:
                await self._ask_operations(upstream, token)
            except BaseException:
                upstream.close()
                raise
        return upstream

    async def _ask_operations(self, upstream: UpstreamProtocol, token: OwnerToken) -> None:
        """The owner's cluster operations, asked on its first connection with
        ``token`` (the session is the owner's) and kept with the token."""
        assert self.owners is not None
        version = self.describe_version
        operations = await cluster_operations(upstream, version, self.bounds.upstream_timeout_s)
        if operations is None:  # owner tokens need Kafka 3.3+: DescribeCluster is 2.8+
            raise UpstreamUnavailable("the cluster has no DescribeCluster")
        self.owners.tokens.record_operations(token.user, token.token_id, operations)
        self._refuse_admin(
            KafkaPrincipal.user(token.user),
            dataclasses.replace(token, cluster_operations=operations),
        )

    def _refuse_admin(self, owner: KafkaPrincipal, token: OwnerToken) -> None:
        """Raise :class:`OwnerAdminRefused` when ``token``'s owner is a cluster
        administrator that ``upstream.owner.admins`` does not list."""
        assert token.cluster_operations is not None
        refusal = owner_refusal(owner, token.cluster_operations, self.upstream.owner_admins)
        if refusal is not None:
            raise OwnerAdminRefused(refusal)

    async def secret_for(self, user: str) -> SaslCredentials | None:
        """The login of ``user``'s upstream connections now (KIP-368 re-authentication)."""
        if self.owners is None:
            return self.link.secret
        return (await self.owners.login(user))[0]

    def _opening_failed(self, conn_id: str, exc: FrontDoorError) -> None:
        if isinstance(exc, OwnerAdminRefused):
            log.info("[%s] login refused: %s", conn_id, exc)
        elif isinstance(exc, UpstreamLoginError | OwnerTokenError):
            self.upstream_refused(conn_id, exc)
            self.count("login_refused")
        else:
            log.info("[%s] cannot forward: %s", conn_id, exc)
            self.count("unreachable")


async def open_front_door(
    config: EndpointConfig,
    settings: ConnectionSettings,
    metrics: ForwardMetrics | None = None,
    acls: EdgeAcls | None = None,
) -> FrontDoor:
    """Look at the cluster (one line, and exit 1, when it cannot be reached or
    refuses the login), then advertise what can be forwarded.

    ``acls``: the edge's ACLs (``authorizer.class.name``), which then decide
    every forwarded request. In ``upstream.identity=service`` mode without them,
    the ``upstream.`` login must not be a cluster administrator: every edge user
    acts as it (one line, and exit 1, unless ``upstream.allow.cluster.admin``).
    """
    upstream = config.upstream
    assert upstream is not None
    bounds = ProxyBounds.from_settings(
        max_request=config.max_request,
        max_parsed_request=config.sasl_max_receive,
        upstream_timeout_ms=upstream.request_timeout_ms,
    )
    timeout = bounds.upstream_timeout_s
    check = upstream.identity is UpstreamIdentity.SERVICE and acls is None
    link = UpstreamLink.of(upstream.client, timeout)
    cluster = await look_at_cluster(link, upstream.bootstrap, ask_operations=check)
    if check:
        warning = check_service_login(
            upstream_login_name(upstream.client),
            cluster.operations,
            allow_cluster_admin=upstream.allow_cluster_admin,
        )
        if warning is not None:
            log.warning("%s", warning)
    first = config.listeners[0]
    advertised = config.advertised.get(first.name)
    host = (advertised.host if advertised else "") or first.host or socket.getfqdn()
    # With edge ACLs, the ACL RPCs are the edge's too (when its store keeps ACLs).
    local = EDGE_API_KEYS | (ACL_API_KEYS if acls is not None else frozenset())
    edge = {k: (lo, hi) for k, lo, hi in settings.api_versions if k in local}
    authorization = (
        None if acls is None else AuthorizationFilter(acls.snapshot, log_decision, audit_writes)
    )
    door = FrontDoor(upstream, cluster, host, edge, bounds, authorization)
    door.acls = acls
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


class ProxyAdapter:
    """One forwarded connection's asyncio side: it carries out the actions of its
    :class:`~sasl_scram.frontdoor.ProxyConnection`, which holds all of its
    state, on the client's connection, the cluster's connection, a timer and
    one task (opening the upstream connection, or a re-login there).

    Created when the edge accepts a first login, with that verdict still held:
    the client hears it once the cluster has taken our login for it too, or,
    in ``service`` mode, after ``verdict_wait_s`` when the cluster took the
    last login and is merely slow to take this one (a frozen broker): the
    login needs nothing from the cluster, and its requests wait for it.
    While the cluster is away or refuses our login, the verdict stays held, so
    that no client is told "logged in" and then dropped in a loop.
    """

    __slots__ = (
        "_door",
        "_edge",
        "_proxy",
        "_session",
        "_task",
        "_timer",
        "_to_client",
        "_to_cluster",
        "_upstream",
        "_user",
        "_verdict_out",
    )

    def __init__(
        self, door: FrontDoor, edge: EdgeConnection, verdict: Authenticated, held: Held
    ) -> None:
        self._door = door
        self._edge = edge
        conn = edge.server_connection
        self._user = verdict.session.authorization_id
        # Counted per API and per edge user (the metrics' row of this user).
        metrics = door.metrics.observer(self._user) if door.metrics else None
        self._session = session = door.edge_session(edge, verdict)
        self._proxy = ProxyConnection(
            door.bounds,
            door.chain.bind(session),
            forwarded=door.forwarded,
            session_valid=lambda: conn.authenticated and not conn.session_expired(),
            observe_request=metrics.request if metrics else None,
            observe_response=metrics.response if metrics else None,
        )
        self._upstream: UpstreamProtocol | None = None
        # Each side's ``writelines``, bound once at attach: the fast path's
        # only call per forwarded frame (the proxy connection forwards
        # nothing before it is attached).
        self._to_cluster: Writer = _not_attached
        self._to_client: Writer = _not_attached
        self._timer: asyncio.TimerHandle | None = None
        # The client heard its verdict before the upstream connection was open.
        self._verdict_out = False
        loop = asyncio.get_running_loop()
        self._task: asyncio.Task[None] | None = loop.create_task(self._open(verdict, held))

    @property
    def phase(self) -> Phase:
        return self._proxy.phase

    def cluster_identity(self) -> tuple[str, str]:
        return cluster_identity(self._session)

    async def _open(self, verdict: Authenticated, held: Held) -> None:
        edge = self._edge
        # Why the login fails, for the client: the front door's reason, or (with
        # ``wrong_password``) Kafka's answer to a wrong password; neither: closed.
        refused: str | None = None
        wrong_password = False
        upstream: UpstreamProtocol | None = None
        try:
            delay = edge.verdict_delay(verdict)
            if delay > 0:
                await asyncio.sleep(delay)
            upstream = await self._open_upstream(held)
        except OwnerAdminRefused as exc:
            self._audit_refusal(exc)
            wrong_password = True
        except FrontDoorError as exc:
            refused = REFUSED_UPSTREAM if isinstance(exc, UpstreamLoginError) else None
            if refused is not None:
                self._door.gates.unforwarded("login_refused")
        finally:
            self._task = None
        if upstream is not None and upstream.lost:
            # The broker closed it after our login, before _attach set on_lost:
            # nothing else would tell, and the client's requests would go to a
            # closed connection. As if it could not be reached.
            gone = UpstreamUnavailable("the broker closed the connection right after our login")
            self._door._opening_failed(edge.conn_id, gone)
            upstream = None
        if self._proxy.phase is Phase.CLOSED:  # the client left meanwhile
            if upstream is not None:
                upstream.close()
            return
        if upstream is None:
            self._proxy.close()
            if self._verdict_out:  # told "logged in": only a close is left
                if refused is None:
                    self._door.gates.unforwarded("unreachable")
                edge.close("upstream login refused" if refused else "upstream unavailable")
            elif refused is None and not wrong_password:
                edge.close("upstream unavailable")  # retried by the client, like a broker down
            else:
                # The edge verdict was paced above. The password was right, so the
                # cluster refusing our own login is no guess: it goes out as that
                # released verdict, not charged to the user's or address's budget.
                # An administrator owner hears a wrong password's answer: nothing
                # tells a client what the owner may do at the cluster.
                edge.release_verdict(b"", refuse_forwarded_login(edge.server_connection, refused))
            return
        self._attach(upstream, held)

    async def _open_upstream(self, held: Held) -> UpstreamProtocol:
        """The upstream connection, opened once the cluster answers; the verdict
        goes out meanwhile if the cluster is slow to take a ``service``-mode login."""
        door, edge = self._door, self._edge
        port = edge.local_port
        targets = door.targets(port)
        opening = asyncio.ensure_future(
            open_when_reachable(
                door.gates,
                targets,
                lambda: door.open_for(port, edge.conn_id, self._user),
                # Once the verdict is out, no login deadline bounds a wait.
                may_wait=lambda: not self._verdict_out,
            )
        )
        try:
            # An owner token's login depends on the cluster: it always waits.
            if door.owners is None and targets:
                done, _ = await asyncio.wait((opening,), timeout=door.bounds.verdict_wait_s)
                gate = door.gates.gate(targets)
                if not done and gate.reachable and gate.login_taken:
                    self._send_verdict(held)
            return await opening
        finally:
            if not opening.done():
                opening.cancel()

    def _send_verdict(self, held: Held) -> None:
        """The verdict, before the upstream connection is open; what the client
        sends from now on waits in the proxy connection."""
        edge = self._edge
        self._verdict_out = True
        log.debug("[%s] the cluster is slow to take our login: verdict sent", edge.conn_id)
        edge.release_verdict(*held)
        if self._proxy.phase is not Phase.CLOSED:
            self._run(self._proxy.verdict_sent(edge.server_connection.hand_off()))

    def _audit_refusal(self, exc: OwnerAdminRefused) -> None:
        """The audit line of a login refused for its owner's cluster operations."""
        refusal = exc.refusal
        held = ",".join(op.display_name for op in sorted(refusal.operations.held))
        audit(
            KafkaPrincipal.user(self._user),
            False,
            "Authenticate",
            self._edge.client_host,
            ("Cluster", "kafka-cluster"),
            "SaslAuthenticate",
            [
                ("owner", refusal.owner),
                ("reason", refusal.reason),
                ("clusterOperations", held or "none"),
                ("notListedIn", "upstream.owner.admins"),
            ],
        )

    def _attach(self, upstream: UpstreamProtocol, held: Held) -> None:
        self._upstream = upstream
        assert upstream.transport is not None
        self._to_cluster = upstream.transport.writelines
        upstream.on_lost = self.upstream_lost
        upstream.on_writable = self._cluster_writable
        first = b""
        if not self._verdict_out:
            self._edge.release_verdict(*held)
            if self._proxy.phase is Phase.CLOSED:
                return
            first = self._edge.server_connection.hand_off()
        elif self._proxy.phase is Phase.CLOSED:
            return
        self._to_client = self._edge.client_transport.writelines
        self._run(self._proxy.upstream_ready(time.monotonic(), upstream.session_lifetime_ms, first))
        upstream.attach(self._cluster_data)

    # -- events, from either side -------------------------------------------------------
    # The fast path: in FORWARDING, a frame's chunks go straight to the other
    # side's writelines; any other event's actions are run as they come.
    def client_data(self, data: bytes) -> None:
        chunks = self._proxy.forward_client(data)
        if chunks is None:
            self._run(self._proxy.take_actions())
        elif chunks:
            self._to_cluster(chunks)

    def _cluster_data(self, data: bytes) -> None:
        chunks = self._proxy.forward_cluster(data)
        if chunks is None:
            self._run(self._proxy.take_actions())
        elif chunks:
            self._to_client(chunks)

    def client_writable(self, writable: bool) -> None:
        self._run(self._proxy.client_writable(writable))

    def _cluster_writable(self, writable: bool) -> None:
        self._run(self._proxy.cluster_writable(writable))

    def local_settled(self) -> None:
        """The edge has no answer left to give: what followed may go on."""
        self._run(self._proxy.local_answered())

    def upstream_lost(self, reason: str) -> None:
        self._door.count("closed")
        self._run(self._proxy.upstream_lost(reason))

    def _tick(self) -> None:
        self._timer = None
        self._run(self._proxy.tick(time.monotonic()))

    async def _relogin(self) -> None:
        upstream = self._upstream
        assert upstream is not None
        door = self._door
        try:
            async with asyncio.timeout(door.bounds.upstream_timeout_s):
                # An owner token's session ends at the token's expiry, whatever
                # its renewals: log in again with the user's current token.
                secret = await door.secret_for(self._user)
                assert secret is not None, "a session with a lifetime has a SASL login"
                await upstream.relogin(UpstreamLogin(secret))
        except (FrontDoorError, TimeoutError) as exc:
            self._task = None
            door.upstream_refused(self._edge.conn_id, exc)
            self._run(self._proxy.relogin_failed(str(exc) or "no answer in time"))
            return
        self._task = None
        log.debug("[%s] re-authenticated at the cluster", self._edge.conn_id)
        self._run(self._proxy.relogin_done(time.monotonic(), upstream.session_lifetime_ms))

    # -- actions ------------------------------------------------------------------------
    def _run(self, actions: list[Action]) -> None:
        # A loop, not a recursion: a client may pipeline any number of requests
        # the edge answers at once (ApiVersions), each one's answer handing
        # over the next, and a call per request would exhaust the stack.
        while True:
            answered = False
            for action in actions:
                if type(action) is ToCluster:
                    self._to_cluster(action.chunks)
                elif type(action) is ToClient:
                    self._to_client(action.chunks)
                elif type(action) is ReadClient:
                    self._edge.set_forward_paused(not action.reading)
                elif type(action) is AnswerLocally:
                    self._edge.run_local(action.frame)
                    answered = True
                else:
                    self._run_rare(action)
            if not answered or self._edge.busy_locally():
                return
            actions = self._proxy.local_answered()

    def _run_rare(self, action: Action) -> None:
        if type(action) is ReadCluster:
            upstream = self._upstream
            if upstream is not None and upstream.transport is not None and not upstream.lost:
                if action.reading:
                    upstream.transport.resume_reading()
                else:
                    upstream.transport.pause_reading()
        elif type(action) is SetTimer:
            if self._timer is not None:
                self._timer.cancel()
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(max(action.at - time.monotonic(), 0), self._tick)
        elif type(action) is Relogin:
            self._task = asyncio.get_running_loop().create_task(self._relogin())
        elif type(action) is CloseConnection:
            if action.event is not None:
                self._door.count(action.event)
            log.info("[%s] closing: %s", self._edge.conn_id, action.reason)
            self._edge.close(action.reason)

    def close(self) -> None:
        """The client connection is gone: its upstream connection goes at once."""
        self._proxy.close()
        if self._task is not None:
            self._task.cancel()
        if self._timer is not None:
            self._timer.cancel()
        if self._upstream is not None:
            self._upstream.close()
