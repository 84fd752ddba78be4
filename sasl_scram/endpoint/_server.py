"""The asyncio adapter: sockets in, :class:`ServerConnection` in the middle,
the credential store, extensions and handlers around it.

Each connection processes one request at a time and reads nothing while a
request is being answered, so responses keep request order and a client
cannot make the server buffer more than one frame (bounded by
``sasl.server.max.receive.size`` before authentication and
``socket.request.max.bytes`` after).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import ssl
import tempfile
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from .._principal import KafkaPrincipal
from .._server import CredentialRequest, DecoyCredentials, Grant
from ..kafka import ApiKey
from ..store import CredentialStore, CredentialStoreUnavailable
from . import _handlers
from ._config import EndpointConfig, Listener
from ._connection import (
    ApiCall,
    Authenticated,
    Close,
    ConnectionSettings,
    CredentialNeeded,
    Output,
    Send,
    ServerConnection,
    advertised_versions,
)
from ._extension import EndpointExtension, Handler, RequestContext

__all__ = ["ScramEndpoint"]

log = logging.getLogger("sasl_scram.endpoint")

_READ_CHUNK = 65536
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


class ScramEndpoint:
    """A Kafka-protocol endpoint that authenticates with SCRAM and serves KIP-554.

    Args:
        config: Validated configuration.
        store: Where user credentials live (lookups on the hot path, admin RPCs).
        extensions: Contributions from higher packages (e.g. delegation tokens).
        clock_ms: Injected clock, for KIP-368 tests.
    """

    def __init__(
        self,
        config: EndpointConfig,
        store: CredentialStore,
        *,
        extensions: Sequence[EndpointExtension] = (),
        clock_ms: Callable[[], int] = _wall_clock_ms,
    ) -> None:
        self.config = config
        self.store = store
        self._clock_ms = clock_ms
        self._extensions = list(extensions)
        self._handlers: dict[int, Handler] = {
            ApiKey.METADATA: self._metadata,
            ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: self._describe_scram,
            ApiKey.ALTER_USER_SCRAM_CREDENTIALS: self._alter_scram,
        }
        self._token_grant: Callable[[CredentialRequest], Grant | None] | None = None
        for ext in self._extensions:
            self._handlers.update(ext.handlers)
            if ext.token_grant is not None:
                self._token_grant = ext.token_grant
        keys = set(_CORE_APIS) | set(self._handlers)
        self._settings = ConnectionSettings(
            mechanisms=config.mechanisms,
            api_versions=advertised_versions(sorted(keys)),
            max_receive_before_auth=config.sasl_max_receive,
            max_receive=config.max_request,
            max_reauth_ms=config.max_reauth_ms,
            decoy=DecoyCredentials(config.decoy_secret),
        )
        self._servers: list[asyncio.base_events.Server] = []
        self._bound: dict[str, tuple[str, int]] = {}
        self._connections: dict[asyncio.Task[None], asyncio.StreamWriter] = {}
        self._busy: set[asyncio.Task[None]] = set()
        self._ids = itertools.count(1)
        self._closing = False

    # -- lifecycle --------------------------------------------------------------
    async def start(self) -> None:
        for listener in self.config.listeners:
            context = self._ssl_context() if listener.protocol == "SASL_SSL" else None

            async def on_connect(
                reader: asyncio.StreamReader,
                writer: asyncio.StreamWriter,
                listener: Listener = listener,
            ) -> None:
                await self._serve_connection(reader, writer, listener)

            server = await asyncio.start_server(
                on_connect, listener.host or None, listener.port, ssl=context, limit=_READ_CHUNK
            )
            sock = server.sockets[0].getsockname()
            self._bound[listener.name] = (sock[0], sock[1])
            self._servers.append(server)
            log.info("Listening on %s (%s) at %s:%s", listener.name, listener.protocol, sock[0], sock[1])

    def bound_address(self, listener_name: str | None = None) -> tuple[str, int]:
        """Where a listener actually listens (useful with port 0)."""
        name = listener_name or self.config.listeners[0].name
        return self._bound[name]

    def advertised_address(self, listener_name: str) -> tuple[str, int]:
        adv = self.config.advertised[listener_name]
        port = adv.port or self._bound[listener_name][1]
        return adv.host, port

    async def serve_forever(self) -> None:
        await asyncio.gather(*(s.serve_forever() for s in self._servers))

    async def close(self, grace_seconds: float = 5.0) -> None:
        """Stop accepting, give in-flight connections ``grace_seconds``, then close them."""
        self._closing = True
        for server in self._servers:
            server.close()
        for server in self._servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()
        # Idle connections close now; one busy with a request may finish it first.
        for task, writer in list(self._connections.items()):
            if task not in self._busy:
                writer.close()
        tasks = list(self._connections)
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=grace_seconds)
            for task in pending:
                self._connections[task].close()
            if pending:
                _, still = await asyncio.wait(pending, timeout=1.0)
                for task in still:
                    task.cancel()
                await asyncio.gather(*still, return_exceptions=True)
        for ext in self._extensions:
            if ext.close is not None:
                ext.close()
        log.info("Endpoint stopped")

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    def _ssl_context(self) -> ssl.SSLContext:
        props = self.config.ssl_keystore
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        password = props.get("ssl.key.password") or None
        location = props.get("ssl.keystore.location")
        if location:
            context.load_cert_chain(location, password=password)
            return context
        # Inline PEM (ssl.keystore.certificate.chain / ssl.keystore.key), as Kafka allows.
        with tempfile.TemporaryDirectory() as tmp:
            cert = os.path.join(tmp, "cert.pem")
            key = os.path.join(tmp, "key.pem")
            with open(cert, "w", encoding="ascii") as f:
                f.write(props["ssl.keystore.certificate.chain"])
            with open(os.open(key, os.O_WRONLY | os.O_CREAT, 0o600), "w", encoding="ascii") as f:
                f.write(props.get("ssl.keystore.key", ""))
            context.load_cert_chain(cert, key, password=password)
        return context

    # -- one connection -----------------------------------------------------------
    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, listener: Listener
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections[task] = writer
        peer = writer.get_extra_info("peername")
        conn_id = f"{listener.name}-{next(self._ids)}"
        conn = ServerConnection(self._settings, self._clock_ms, listener.protocol)
        log.debug("[%s] connection from %s", conn_id, peer)
        auth_deadline = time.monotonic() + self.config.auth_timeout_ms / 1000
        try:
            while not conn.closed and not self._closing:
                if conn.authenticated:
                    timeout = self.config.idle_timeout_ms / 1000
                else:
                    timeout = auth_deadline - time.monotonic()
                    if timeout <= 0:
                        log.info("[%s] authentication timed out", conn_id)
                        break
                try:
                    data = await asyncio.wait_for(reader.read(_READ_CHUNK), timeout)
                except TimeoutError:
                    log.info("[%s] closing %s connection", conn_id, "idle" if conn.authenticated else "unauthenticated")
                    break
                if not data:
                    break
                self._busy.add(task)
                try:
                    outputs = conn.receive(data)
                    if await self._process(conn, conn_id, listener, outputs, writer):
                        break
                finally:
                    self._busy.discard(task)
        except (ConnectionError, ssl.SSLError, asyncio.IncompleteReadError) as exc:
            log.debug("[%s] connection error: %s", conn_id, exc)
        except asyncio.CancelledError:
            # Only close() cancels a connection, after its grace period: end quietly.
            log.debug("[%s] cancelled at shutdown", conn_id)
        finally:
            self._connections.pop(task, None)
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 1.0)
            log.debug("[%s] closed", conn_id)

    async def _process(
        self,
        conn: ServerConnection,
        conn_id: str,
        listener: Listener,
        outputs: list[Output],
        writer: asyncio.StreamWriter,
    ) -> bool:
        """Carry out outputs; returns True when the connection must close."""
        queue: deque[Output] = deque(outputs)
        while queue:
            item = queue.popleft()
            if isinstance(item, Send):
                writer.write(item.data)
            elif isinstance(item, CredentialNeeded):
                queue.extend(conn.provide_credential(self._grant(item.request, conn_id)))
            elif isinstance(item, ApiCall):
                queue.extend(await self._call(conn, conn_id, listener, item))
            elif isinstance(item, Authenticated):
                s = item.session
                log.info(
                    "[%s] %sauthenticated User:%s with %s%s",
                    conn_id,
                    "re-" if item.reauthentication else "",
                    s.authorization_id,
                    s.mechanism.mechanism_name,
                    " (delegation token)" if s.token_authenticated else "",
                )
            elif isinstance(item, Close):
                log.info("[%s] closing: %s", conn_id, item.reason)
                await writer.drain()
                if item.after_failed_authentication and self.config.failed_auth_delay_ms > 0:
                    await asyncio.sleep(self.config.failed_auth_delay_ms / 1000)
                return True
        await writer.drain()
        return False

    def _grant(self, request: CredentialRequest, conn_id: str) -> Grant | None:
        try:
            if request.token_auth:
                return self._token_grant(request) if self._token_grant is not None else None
            credential = self.store.lookup(request.username, request.mechanism)
        except CredentialStoreUnavailable as exc:
            # Fail closed: an unreachable or too-stale store authenticates nobody.
            log.warning("[%s] credential store unavailable, refusing login: %s", conn_id, exc)
            return None
        except Exception:
            log.exception("[%s] credential lookup failed", conn_id)
            return None
        return Grant.of(credential) if credential is not None else None

    async def _call(
        self, conn: ServerConnection, conn_id: str, listener: Listener, call: ApiCall
    ) -> list[Output]:
        handler = self._handlers.get(call.header.api_key)
        if handler is None:
            return conn.fail_call(f"API key {call.header.api_key} is not served here")
        principal = KafkaPrincipal.user(call.session.authorization_id)
        ctx = RequestContext(
            principal=principal,
            session=call.session,
            security_protocol=listener.protocol,
            listener_name=listener.name,
            # Kafka's authorizer compares type and name; a token session acts as its owner.
            super_user=principal in self.config.super_users,
            client_id=call.header.client_id,
            connection_id=conn_id,
        )
        try:
            body = await handler(ctx, call.header.api_version, call.body)
        except Exception:
            log.exception("[%s] handler for API key %s failed", conn_id, call.header.api_key)
            return conn.fail_call("handler failed")
        return conn.respond(body)

    # -- built-in handlers -----------------------------------------------------------
    async def _metadata(self, ctx: RequestContext, version: int, body: dict[str, Any]) -> dict[str, Any]:
        response = _handlers.metadata(self.config, ctx, version, body)
        host, port = self.advertised_address(ctx.listener_name)
        response["brokers"][0]["host"] = host
        response["brokers"][0]["port"] = port
        return response

    async def _describe_scram(self, ctx: RequestContext, version: int, body: dict[str, Any]) -> dict[str, Any]:
        return await _handlers.describe_scram(self.store, ctx, version, body)

    async def _alter_scram(self, ctx: RequestContext, version: int, body: dict[str, Any]) -> dict[str, Any]:
        return await _handlers.alter_scram(self.store, ctx, version, body)
