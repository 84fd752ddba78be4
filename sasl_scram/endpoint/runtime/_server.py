"""The asyncio server: listeners, the credential store, extensions and
handlers around one :class:`ConnectionProtocol` per connection (``_protocol.py``)."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

from sasl_scram import _native
from sasl_scram._errors import ScramConfigError
from sasl_scram._server import CredentialRequest
from sasl_scram._server import DecoyCredentials
from sasl_scram._server import Grant
from sasl_scram.endpoint._config import EndpointConfig
from sasl_scram.endpoint._extension import EndpointExtension
from sasl_scram.endpoint._extension import Handler
from sasl_scram.endpoint._extension import RequestContext
from sasl_scram.endpoint._listeners import ListenerAddress
from sasl_scram.endpoint._metrics import AuthMetrics
from sasl_scram.endpoint._metrics import WorkerShare
from sasl_scram.endpoint.acls import acl_handlers
from sasl_scram.endpoint.login import Authenticated
from sasl_scram.endpoint.login import BudgetPolicy
from sasl_scram.endpoint.login import BusyPoller
from sasl_scram.endpoint.login import ConnectionDeadlines
from sasl_scram.endpoint.login import ConnectionProtocol
from sasl_scram.endpoint.login import ConnectionSettings
from sasl_scram.endpoint.login import EdgeSide
from sasl_scram.endpoint.login import FailureBudget
from sasl_scram.endpoint.login import Forwarding
from sasl_scram.endpoint.login import Output
from sasl_scram.endpoint.login import VerdictPacer
from sasl_scram.endpoint.login import advertised_versions
from sasl_scram.endpoint.login import handlers as _handlers
from sasl_scram.endpoint.proxy import FrontDoor
from sasl_scram.endpoint.proxy import FrontDoorStart
from sasl_scram.endpoint.proxy import ProxyAdapter
from sasl_scram.endpoint.runtime._accept import Acceptor
from sasl_scram.endpoint.runtime._caps import ConnectionCaps
from sasl_scram.endpoint.runtime._refusals import RefusalLog
from sasl_scram.kafka import ApiKey
from sasl_scram.store import AclStore
from sasl_scram.store import CredentialStore
from sasl_scram.store import DecoyIterationsSource
from sasl_scram.store import DecoySecretSource
from sasl_scram.store import StoreUnavailable

__all__ = ["ScramEndpoint"]

log = logging.getLogger("sasl_scram.endpoint")

_CORE_APIS = (
    ApiKey.METADATA,
    ApiKey.SASL_HANDSHAKE,
    ApiKey.API_VERSIONS,
    ApiKey.SASL_AUTHENTICATE,
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS,
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
)


def _wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def _decoy_secret(config: EndpointConfig, store: CredentialStore) -> bytes | None:
    """``scram.decoy.secret`` if set, else the store's persisted one, so that every
    endpoint on one store shows an unknown user the same decoy, across restarts."""
    if config.decoy_secret is not None:
        return config.decoy_secret
    if isinstance(store, DecoySecretSource):
        try:
            return store.decoy_secret()
        except StoreUnavailable as exc:
            # Serving beats agreeing on decoys: logins still work, with a
            # per-process decoy secret until the next start.
            log.warning("cannot read the decoy secret, using a per-process one: %s", exc)
            return None
    log.warning(
        "%s keeps no decoy secret and scram.decoy.secret is not set: unknown users' "
        "decoy salts change with every restart",
        type(store).__name__,
    )
    return None


def _pacer(config: EndpointConfig, metrics: AuthMetrics | None) -> VerdictPacer:
    # Failed logins per (claimed name, address) pair, per name and per address
    # (``scram.login.failure.budget*``).
    budget: FailureBudget | None = None
    if config.failure_budget > 0:
        policy = BudgetPolicy(
            per_pair=config.failure_budget,
            per_user=config.failure_budget_per_user,
            per_address=config.failure_budget_per_address,
            window_s=config.failure_budget_window_ms / 1000,
            interval_s=config.failure_budget_interval_ms / 1000,
            max_entries=config.failure_budget_max_entries,
            # Held no longer than a login may take: its deadline ends it first.
            max_hold_s=config.auth_timeout_ms / 1000,
        )
        _warn_budget_lever(policy)
        budget = FailureBudget(policy)
    return VerdictPacer(config.failed_auth_delay_ms / 1000, budget, metrics)


def _warn_budget_lever(policy: BudgetPolicy) -> None:
    """A name's or an address's threshold that one guesser at one address reaches
    alone makes the budget a lockout lever again (docs/security.md)."""
    most = policy.one_pair_most()
    for suffix, limit in (("per.user", policy.per_user), ("per.address", policy.per_address)):
        if 0 < limit <= most:
            log.warning(
                "scram.login.failure.budget.%s=%d: one guesser at one address, at one "
                "name, reaches %d failures in a window alone and would slow that %s for "
                "everyone; set it above %d",
                suffix,
                limit,
                most,
                "name" if suffix == "per.user" else "address",
                most,
            )


def _extended(
    handlers: dict[int, Handler], extensions: Sequence[EndpointExtension]
) -> tuple[
    Callable[[CredentialRequest], Grant | None] | None,
    Callable[[CredentialRequest], bool] | None,
]:
    """Add the extensions' handlers to ``handlers``; their token grant (the
    last one's), and whether it may block."""
    grant: Callable[[CredentialRequest], Grant | None] | None = None
    may_block: Callable[[CredentialRequest], bool] | None = None
    for ext in extensions:
        handlers.update(ext.handlers)
        if ext.token_grant is not None:
            grant, may_block = ext.token_grant, ext.token_grant_may_block
    return grant, may_block


class ScramEndpoint:
    """A Kafka-protocol endpoint that authenticates with SCRAM and serves KIP-554.

    Args:
        config: Validated configuration.
        store: Where user credentials live (lookups on the hot path, admin RPCs).
        extensions: Contributions from higher packages (e.g. delegation tokens).
        clock_ms: Injected clock, for KIP-368 tests.
        worker_metrics: A worker's rows of the shared metrics block
            (``scram.workers`` above 1): counted there, served by the parent.
        reuse_port: Listen with ``SO_REUSEPORT``, beside the other workers.
        acl_store: Where the edge's ACLs are kept (``authorizer.class.name``):
            managed with the ACL RPCs, and every forwarded request decided on them.
    """

    def __init__(
        self,
        config: EndpointConfig,
        store: CredentialStore,
        *,
        extensions: Sequence[EndpointExtension] = (),
        clock_ms: Callable[[], int] = _wall_clock_ms,
        worker_metrics: WorkerShare | None = None,
        reuse_port: bool = False,
        acl_store: AclStore | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.clock_ms = clock_ms
        self._extensions = list(extensions)
        self._handlers: dict[int, Handler] = {
            ApiKey.METADATA: self._metadata,
            ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: self._describe_scram,
            ApiKey.ALTER_USER_SCRAM_CREDENTIALS: self._alter_scram,
            ApiKey.DESCRIBE_CLIENT_QUOTAS: _handlers.describe_client_quotas,
        }
        #: The edge's ACLs, with ``authorizer.class.name`` (else ``None``).
        self.edge_acls, acl_rpcs = acl_handlers(config, acl_store)
        self._handlers.update(acl_rpcs)
        self._refusals = RefusalLog(log)
        self._token_grant, self._token_may_block = _extended(self._handlers, self._extensions)
        keys = set(_CORE_APIS) | set(self._handlers)
        self.settings = ConnectionSettings.from_config(
            config,
            advertised_versions(sorted(keys)),
            DecoyCredentials(
                _decoy_secret(config, store),
                # An unknown user shows the count the store's users have most.
                iterations_for=(
                    store.common_iterations if isinstance(store, DecoyIterationsSource) else None
                ),
            ),
        )
        self._acceptors: list[Acceptor] = []
        self._stopped: asyncio.Future[None] | None = None
        self._bound: dict[str, tuple[str, int]] = {}
        self.connections: dict[ConnectionProtocol, None] = {}  # live ones, in order
        self._ids = itertools.count(1)
        self._closed = False
        #: Set by :meth:`start` when ``scram.busy.poll.us`` is on; connections poke it.
        self.busy_poller: BusyPoller | None = None
        #: Authentication and idle deadlines of every connection (set by :meth:`start`).
        self.deadlines: ConnectionDeadlines[ConnectionProtocol] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        #: Kafka's authentication metrics, when ``scram.metrics.listener`` is set.
        self.metrics = AuthMetrics.from_settings(
            config.settings, lambda: self.connections, worker_metrics
        )
        self._reuse_port = reuse_port
        #: Set by :meth:`start` when ``upstream.bootstrap.servers`` is, once
        #: the cluster has been reached; until then nothing is accepted.
        self.front_door: FrontDoor | None = None
        self._forwarding = config.upstream is not None
        self._door_start: FrontDoorStart | None = None
        #: How long each login's verdict is held (KIP-306's delay, the budget).
        self.pacer = _pacer(config, self.metrics)
        #: ``max.connections.per.ip`` (and its overrides), ``scram.max.connections.per.user``.
        self.caps = ConnectionCaps(
            config.max_connections_per_ip,
            config.max_connections_per_ip_overrides,
            config.max_connections_per_user,
            self.metrics.edge if self.metrics is not None else None,
        )

    # -- lifecycle --------------------------------------------------------------
    async def start(self) -> None:
        loop = self._loop = asyncio.get_running_loop()
        self.deadlines = ConnectionDeadlines(
            loop,
            self.config.auth_timeout_ms / 1000,
            self.config.idle_timeout_ms / 1000,
            ConnectionProtocol.authentication_timed_out,
            ConnectionProtocol.idle_expired,
        )
        if self.config.busy_poll_us:
            self.busy_poller = BusyPoller(loop, self.config.busy_poll_us / 1_000_000)
            log.info(
                "Busy polling for %d us after each network event (scram.busy.poll.us)",
                self.config.busy_poll_us,
            )
        if self.metrics is not None:
            self.metrics.loop = loop
            self.metrics.start()
        # Which login path runs, compiled or pure Python (and why): see docs/performance.md.
        log.info("SCRAM core: %s", _native.status())
        door: FrontDoor | None = None
        if self._forwarding:
            forward = self.metrics.forward if self.metrics is not None else None
            self._door_start = FrontDoorStart(
                self.config, self.settings, forward, acls=self.edge_acls
            )
            door = await self._door_start.first()
        for listener in self.config.listeners:
            self._bound[listener.name] = self._listen(listener)
        if door is not None:
            self._open_front_door(door)
        elif self._door_start is not None:
            # The cluster cannot be reached: the listeners accept nothing until it is.
            self._door_start.keep_trying(self._open_front_door, self._fail)

    def _open_front_door(self, door: FrontDoor) -> None:
        """The cluster answered: serve its brokers, then accept connections."""
        door.on_new_node = self._listen_for_node
        assert door.settings is not None
        self.settings = door.settings
        for node_id in sorted(door.brokers):
            self._listen_for_node(node_id, at_start=True, door=door)
        self.front_door = door

    def _fail(self, exc: BaseException) -> None:
        """What waiting cannot fix, found after start: :meth:`serve_forever` raises it."""
        if self._stopped is None:
            self._stopped = self.loop.create_future()
        if not self._stopped.done():
            self._stopped.set_exception(exc)

    def _listen(self, listener: ListenerAddress) -> tuple[str, int]:
        context = (
            self.config.ssl_keystore.server_context() if listener.protocol == "SASL_SSL" else None
        )

        def factory(
            release: Callable[[], None] | None = None, listener: ListenerAddress = listener
        ) -> ConnectionProtocol:
            protocol = ConnectionProtocol(self, listener, f"{listener.name}-{next(self._ids)}")
            protocol.address_place = release
            return protocol

        acceptor = Acceptor(
            self.loop,
            factory,
            (listener.host or None, listener.port),
            name=str(listener),
            backlog=self.config.listen_backlog,
            ssl_context=context,
            reuse_port=self._reuse_port,
            has_room=self._has_room if not self._forwarding else self._forwarding_room(listener),
            # Counted per address only when a cap is set (Kafka's default: none).
            admit=self.caps.admit_address if self.caps.per_address else None,
        )
        sock = acceptor.sockets[0].getsockname()
        self._acceptors.append(acceptor)
        log.info(
            "Listening on %s (%s) at %s:%s", listener.name, listener.protocol, sock[0], sock[1]
        )
        return sock[0], sock[1]

    # -- the front door ---------------------------------------------------------------
    def _listen_for_node(
        self, node_id: int, at_start: bool = False, door: FrontDoor | None = None
    ) -> None:
        """Upstream node ``node_id`` is served on ``upstream.node.port.base`` + its id."""
        door = door or self.front_door
        assert door is not None
        first = self.config.listeners[0]
        port = door.rewriter.port(node_id)
        if port in door.node_ports:
            return
        door.node_ports[port] = node_id
        try:
            self._listen(ListenerAddress(first.name, first.host, port, first.protocol))
        except OSError as exc:
            del door.node_ports[port]
            problem = f"cannot serve node {node_id} on port {port}: {exc.strerror or exc}"
            if at_start:
                raise ScramConfigError(
                    f"upstream.node.port.base: {problem}; choose a base whose ports "
                    "(base + each node id) are free"
                ) from None
            log.error("%s (a broker that joined the cluster after start)", problem)

    @property
    def forwards(self) -> bool:
        return self.front_door is not None

    def forward(
        self,
        connection: EdgeSide,
        verdict: Authenticated,
        held: bytes,
        rest: list[Output],
    ) -> Forwarding:
        assert self.front_door is not None
        return ProxyAdapter(self.front_door, connection, verdict, (held, rest))

    def _has_room(self) -> bool:
        # Those accepted but not yet made count too: one wake-up accepts a batch.
        pending = sum(acceptor.pending for acceptor in self._acceptors)
        return len(self.connections) + pending < self.config.max_connections

    def _forwarding_room(self, listener: ListenerAddress) -> Callable[[], bool]:
        """A front door's listener accepts while there is room and the cluster
        behind its port answers: until then connections wait in its queue, as
        at a broker that is not ready (``proxy/_reachable.py``)."""
        port = listener.port

        def has_room() -> bool:
            door = self.front_door
            if door is None or not self._has_room():
                return False
            return door.gates.accepting(door.targets(port))

        return has_room

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop the endpoint was started on."""
        if self._loop is None:
            raise RuntimeError("the endpoint is not started")
        return self._loop

    def bound_address(self, listener_name: str | None = None) -> tuple[str, int]:
        """Where a listener actually listens (useful with port 0)."""
        name = listener_name or self.config.listeners[0].name
        return self._bound[name]

    def advertised_address(self, listener_name: str) -> tuple[str, int]:
        adv = self.config.advertised[listener_name]
        port = adv.port or self._bound[listener_name][1]
        return adv.host, port

    async def serve_forever(self) -> None:
        """Until :meth:`close` (the listeners accept from :meth:`start` on)."""
        if self._stopped is None:
            self._stopped = self.loop.create_future()
        await asyncio.shield(self._stopped)

    async def close(self, grace_seconds: float = 5.0) -> None:
        """Stop accepting, let busy connections finish within ``grace_seconds``, close all."""
        if self._closed:
            return
        self._closed = True
        for acceptor in self._acceptors:
            acceptor.close()
        if self._stopped is not None and not self._stopped.done():
            self._stopped.set_result(None)
        # Idle connections close now; one busy with a request may finish it first.
        for proto in list(self.connections):
            if not proto.busy:
                proto.close("shutdown")
        waiters = [p.wait_closed() for p in self.connections]
        if waiters:
            _, pending = await asyncio.wait(
                [asyncio.ensure_future(w) for w in waiters], timeout=grace_seconds
            )
            for proto in list(self.connections):
                proto.close("shutdown")
            if pending:
                await asyncio.wait(pending, timeout=1.0)
                for task in pending:
                    task.cancel()
        if self.deadlines is not None:
            self.deadlines.close()
        if self._door_start is not None:
            self._door_start.close()
        if self.front_door is not None:
            self.front_door.gates.close()
            if self.front_door.owners is not None:
                await self.front_door.owners.close()
        if self.metrics is not None:
            self.metrics.close()
        for ext in self._extensions:
            if ext.close is not None:
                ext.close()
        log.info("Endpoint stopped")

    @property
    def connection_count(self) -> int:
        return len(self.connections)

    # -- used by the connections ----------------------------------------------------
    def handler(self, api_key: int) -> Handler | None:
        return self._handlers.get(api_key)

    def admit_user(self, user: str, conn_id: str) -> Callable[[], None] | None:
        """``scram.max.connections.per.user``: the release of the place a new login
        of ``user`` takes; ``None``: the user is at its cap (said and counted)."""
        return self.caps.admit_user(user, conn_id)

    def user_refusal(self, user: str) -> str:
        """What a login refused by ``scram.max.connections.per.user`` is told."""
        return self.caps.user_refusal(user)

    def lookup_may_block(self, request: CredentialRequest) -> bool:
        """Whether answering ``request`` may wait on the network (a lazy ZooKeeper
        cache) or compute for long (a token's first PBKDF2): then not on the loop."""
        if request.token_auth:
            return self._token_may_block is not None and self._token_may_block(request)
        return self.store.lookup_may_block

    def grant(self, request: CredentialRequest, conn_id: str) -> Grant | None:
        """The credential for a login, from memory; ``None`` fails the login (decoy)."""
        try:
            if request.token_auth:
                return self._token_grant(request) if self._token_grant is not None else None
            credential = self.store.lookup(request.username, request.mechanism)
        except StoreUnavailable as exc:
            # Fail closed: an unreachable or too-stale store (credentials or
            # tokens) authenticates nobody; the client sees Kafka's ordinary
            # authentication failure.
            self._refusals.refused(conn_id, exc)
            return None
        except Exception:
            log.exception("[%s] credential lookup failed", conn_id)
            return None
        return Grant.of(credential) if credential is not None else None

    # -- built-in handlers -----------------------------------------------------------
    async def _metadata(
        self, ctx: RequestContext, version: int, body: dict[str, Any]
    ) -> dict[str, Any]:
        advertised = self.advertised_address(ctx.listener_name)
        if len(body.get("topics") or ()) > 1000:
            # One dict per topic: a super user's big request is answered in a thread.
            return await asyncio.to_thread(
                _handlers.metadata, self.config, advertised, version, body
            )
        return _handlers.metadata(self.config, advertised, version, body)

    async def _describe_scram(
        self, ctx: RequestContext, version: int, body: dict[str, Any]
    ) -> dict[str, Any]:
        return await _handlers.describe_scram(self.store, ctx, version, body)

    async def _alter_scram(
        self, ctx: RequestContext, version: int, body: dict[str, Any]
    ) -> dict[str, Any]:
        return await _handlers.alter_scram(self.store, ctx, version, body)
