"""Token-capable SCRAM and KIP-368 re-authentication for aiokafka 0.14, by a reversible patch.

aiokafka has no SASL plugin registry: ``AIOKafkaConnection`` picks its SCRAM
authenticator in one method, ``authenticator_scram``, and logs in once per
connection in ``_do_sasl_handshake``. :func:`install` replaces those two
methods and ``send``; :func:`uninstall` restores them. The replacements only
act on connections whose ``sasl_oauth_token_provider`` is a
:class:`~sasl_scram.integrations.CredentialsProvider` (that is what
:func:`client_kwargs` passes); every other connection gets aiokafka's own
code, unchanged. Nothing happens on import.

On those connections, a broker that sets a session lifetime (KIP-368,
``connections.max.reauth.ms``) gets an in-band re-authentication before the
session ends, as from Kafka's Java client; see ``_aiokafka_reauth``. The
provider is asked at every login and re-authentication, and may be
``async``. As in aiokafka, the PBKDF2 work runs in the loop's default
executor, never on the event loop.

A refused login ends ``start()`` with aiokafka's ``SaslAuthenticationFailed``
itself, as Kafka's Java client raises ``SaslAuthenticationException``:
``AIOKafkaClient.bootstrap`` logs each host's failure and raises a generic
"Unable to bootstrap", so :func:`install` also wraps it to raise the refusal
when a login was refused. When a port answered the SaslHandshake with an
error instead (ILLEGAL_SASL_STATE from a KRaft controller or a listener
without SASL, UNSUPPORTED_SASL_MECHANISM), the wrapper asks each bootstrap
address what it is, as :func:`~sasl_scram.integrations.check_listener` does,
and raises a :class:`~sasl_scram.integrations.ListenerError` saying so, which
is also aiokafka's ``KafkaConnectionError``. A network error still gives
aiokafka's own error. Both apply to every SASL connection, with or without a
credentials provider.

Example::

    from aiokafka import AIOKafkaConsumer
    from sasl_scram.integrations import aiokafka as scram_aiokafka

    scram_aiokafka.install()
    consumer = AIOKafkaConsumer("events", **scram_aiokafka.client_kwargs("client.properties"))
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import logging
import weakref
from collections.abc import Awaitable
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any
from typing import cast

from sasl_scram._client import ScramClient
from sasl_scram._errors import ScramError
from sasl_scram._keycache import DEFAULT_KEY_CACHE
from sasl_scram._keycache import SaltedPasswordCache
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.config import format_host_port
from sasl_scram.integrations import _common
from sasl_scram.integrations._aiokafka_reauth import STATE_ATTRIBUTE
from sasl_scram.integrations._aiokafka_reauth import ConnectionReauth
from sasl_scram.integrations._config import ConfigSource
from sasl_scram.integrations._credentials import CredentialsProvider
from sasl_scram.integrations._credentials import CredentialsSource
from sasl_scram.integrations._credentials import fetch_credentials_async
from sasl_scram.integrations._diagnosis import listener_problem
from sasl_scram.integrations._errors import CredentialsError
from sasl_scram.integrations._errors import IntegrationError
from sasl_scram.integrations._errors import refusal
from sasl_scram.integrations._patches import Patch
from sasl_scram.integrations._patches import PatchSet

__all__ = [
    "ScramAuthenticator",
    "client_kwargs",
    "install",
    "installed",
    "is_installed",
    "uninstall",
]

log = logging.getLogger("sasl_scram.integrations.aiokafka")

# aiokafka's methods this module replaces, with their originals while installed.
_patches = PatchSet("aiokafka")
# Connections' re-authentication schedules, to stop them at uninstall().
_sessions: weakref.WeakSet[ConnectionReauth] = weakref.WeakSet()
_key_cache: SaltedPasswordCache | None = DEFAULT_KEY_CACHE
# What the logins of the current bootstrap ran into (set by the wrapped bootstrap).
_bootstrapping: contextvars.ContextVar[_Bootstrap | None] = contextvars.ContextVar(
    "scram_aiokafka_bootstrap", default=None
)


def _auth_failed(message: str) -> Exception:
    import aiokafka.errors

    error: Exception = aiokafka.errors.SaslAuthenticationFailed(message)
    return error


class ScramAuthenticator:
    """An aiokafka SASL authenticator running :class:`sasl_scram.ScramClient`.

    Follows aiokafka's authenticator interface: ``await step(server_bytes)``
    returns ``(bytes_to_send, expect_response)``, or ``None`` when done.

    Args:
        loop: The connection's event loop.
        mechanism: SCRAM-SHA-256 or SCRAM-SHA-512.
        provider: Asked for credentials when the exchange starts.
        key_cache: Derived-key cache; ``None`` disables it.
    """

    def __init__(
        self,
        *,
        loop: asyncio.AbstractEventLoop,
        mechanism: ScramMechanism,
        provider: CredentialsProvider,
        key_cache: SaltedPasswordCache | None = DEFAULT_KEY_CACHE,
    ) -> None:
        self._loop = loop
        self._mechanism = mechanism
        self._provider = provider
        self._key_cache = key_cache
        self._client: ScramClient | None = None
        self._replies = 0

    def __repr__(self) -> str:
        return f"ScramAuthenticator({self._mechanism.mechanism_name}, {self._provider!r})"

    async def step(self, payload: bytes | None) -> tuple[bytes, bool] | None:
        """Advance the exchange with the server's last message (``None`` at first)."""
        try:
            return await self._step(payload)
        except CredentialsError as exc:
            raise _auth_failed(str(exc)) from exc
        except ScramError as exc:
            raise _auth_failed(refusal(exc)) from None

    async def _step(self, payload: bytes | None) -> tuple[bytes, bool] | None:
        if self._client is None:
            credentials = await fetch_credentials_async(self._provider)
            _common.token_login.set(credentials.token_auth)
            self._client = credentials.scram_client(self._mechanism, key_cache=self._key_cache)
            return self._client.client_first(), True
        assert payload is not None
        self._replies += 1
        if self._replies == 1:
            # PBKDF2 (4096+ iterations) off the event loop, as aiokafka does.
            final = await self._loop.run_in_executor(
                None, self._client.receive_server_first, payload
            )
            return final, True
        self._client.receive_server_final(payload)
        return None


def _authenticator_scram(self: Any) -> Any:
    """Replacement for ``AIOKafkaConnection.authenticator_scram``."""
    provider = self._sasl_oauth_token_provider
    if not isinstance(provider, CredentialsProvider):
        return _own(self, "authenticator_scram")(self)
    return ScramAuthenticator(
        loop=self._loop,
        mechanism=ScramMechanism.from_name(self._sasl_mechanism),
        provider=provider,
        key_cache=_key_cache,
    )


async def _do_sasl_handshake(self: Any) -> None:
    """Replacement for ``AIOKafkaConnection._do_sasl_handshake``: the first
    login, then KIP-368 re-authentication planned from its session lifetime."""
    try:
        await _first_login(self)
    except Exception as exc:
        bootstrap = _bootstrapping.get()
        if isinstance(exc, _handshake_error_types()):
            if bootstrap is not None:
                bootstrap.handshake_failed = True
            raise
        if not isinstance(exc, _auth_failed_type()):
            raise
        hinted = _common.with_token_hint(exc, format_host_port(self.host, self.port))
        if bootstrap is not None:
            bootstrap.refusals.append(hinted)
        if hinted is exc:
            raise
        raise hinted from None


class _Bootstrap:
    """What the logins of one ``AIOKafkaClient.bootstrap`` ran into."""

    __slots__ = ("handshake_failed", "refusals")

    def __init__(self) -> None:
        self.refusals: list[Exception] = []
        self.handshake_failed = False


async def _bootstrap(self: Any) -> None:
    """Replacement for ``AIOKafkaClient.bootstrap``: a refused login is the error,
    and a port that is not a SASL listener offering the mechanism is named."""
    bootstrap = _Bootstrap()
    reset = _bootstrapping.set(bootstrap)
    try:
        await _own(self, "bootstrap")(self)
    except _connection_error_type():
        if bootstrap.refusals:
            raise bootstrap.refusals[-1] from None
        problem = await _listener_problem(self) if bootstrap.handshake_failed else None
        if problem is not None:
            raise _common.listener_error(problem, _connection_error_type()) from None
        raise
    finally:
        _bootstrapping.reset(reset)


async def _listener_problem(client: Any) -> str | None:
    """What each bootstrap address is, asked as :func:`check_listener` asks: the
    SaslHandshake error aiokafka got (ILLEGAL_SASL_STATE, UNSUPPORTED_SASL_MECHANISM)
    cannot tell a controller from a listener without SASL, nor name what is offered."""
    addresses = [(host, port) for host, port, _ in client.hosts]
    context = client._ssl_context if client._security_protocol == "SASL_SSL" else None
    timeout = client._request_timeout_ms / 1000
    return await asyncio.to_thread(
        listener_problem, addresses, client._sasl_mechanism, context, timeout
    )


def _auth_failed_type() -> type[Exception]:
    import aiokafka.errors

    return cast(type[Exception], aiokafka.errors.SaslAuthenticationFailed)


def _handshake_error_types() -> tuple[type[Exception], ...]:
    import aiokafka.errors

    return (aiokafka.errors.IllegalSaslStateError, aiokafka.errors.UnsupportedSaslMechanismError)


def _connection_error_type() -> type[Exception]:
    import aiokafka.errors

    return cast(type[Exception], aiokafka.errors.KafkaConnectionError)


async def _first_login(self: Any) -> None:
    login = _own(self, "_do_sasl_handshake")
    if not isinstance(self._sasl_oauth_token_provider, CredentialsProvider):
        await login(self)
        return
    state = ConnectionReauth(self._loop, _WeakConnection(self, login))
    setattr(self, STATE_ATTRIBUTE, state)
    await login(self)
    with _patches.lock:
        if _patches.applied:  # not uninstalled meanwhile
            _sessions.add(state)
            state.logged_in()


def _send(self: Any, request: Any, expect_response: bool = True) -> Any:
    """Replacement for ``AIOKafkaConnection.send``: requests wait while the
    connection re-authenticates; SaslAuthenticate answers give the lifetime."""
    state: ConnectionReauth | None = getattr(self, STATE_ATTRIBUTE, None)
    if state is None:
        return _own(self, "send")(self, request, expect_response)
    if state.must_wait():
        send = functools.partial(_send_now, self, state, request, expect_response)
        return state.after_reauthentication(send)
    return _send_now(self, state, request, expect_response)


def _send_now(self: Any, state: ConnectionReauth, request: Any, expect_response: bool) -> Any:
    sent = _own(self, "send")(self, request, expect_response)
    if isinstance(request, _sasl_authenticate_request()):
        return _noting_lifetime(state, sent)
    return sent


@functools.cache
def _sasl_authenticate_request() -> type:
    # Resolved once, not on every request this patched send() sees.
    from aiokafka.conn import SaslAuthenticateRequest

    return cast(type, SaslAuthenticateRequest)


def _own(obj: Any, name: str) -> Callable[..., Any]:
    """aiokafka's own method, also for a request that waited across uninstall()."""
    own: Callable[..., Any] = _patches.original(name) or getattr(type(obj), name)
    return own


async def _noting_lifetime(state: ConnectionReauth, sent: Awaitable[Any]) -> Any:
    response = await sent
    state.note_response(response)
    return response


class _WeakConnection:
    """An aiokafka connection, held weakly, as its re-authentication sees it."""

    __slots__ = ("_login", "_ref")

    def __init__(self, conn: Any, login: Callable[[Any], Awaitable[None]]) -> None:
        self._ref = weakref.ref(conn)
        self._login = login

    async def login(self) -> None:
        conn = self._ref()
        if conn is not None:
            await self._login(conn)

    def close(self, exc: BaseException) -> None:
        from aiokafka.conn import CloseReason

        conn = self._ref()
        if conn is not None:
            conn.close(reason=CloseReason.AUTH_FAILURE, exc=exc)

    def connected(self) -> bool:
        conn = self._ref()
        return conn is not None and bool(conn.connected())


_PATCHES: dict[str, Callable[..., Any]] = {
    "authenticator_scram": _authenticator_scram,
    "_do_sasl_handshake": _do_sasl_handshake,
    "send": _send,
}


def _connection_class() -> Any:
    """aiokafka's connection class, if its internals are those of 0.14."""
    try:
        import aiokafka.conn
        from aiokafka.protocol.admin import SaslAuthenticateResponse_v1
    except ImportError as exc:
        raise IntegrationError(
            "aiokafka 0.14 is required (aiokafka.conn, aiokafka.protocol.admin)"
        ) from exc
    conn_class = aiokafka.conn.AIOKafkaConnection
    problems = [
        f"AIOKafkaConnection.{name}"
        for name in ("authenticator_scram", "send", "connected", "close")
        if not callable(getattr(conn_class, name, None))
    ]
    if not inspect.iscoroutinefunction(getattr(conn_class, "_do_sasl_handshake", None)):
        problems.append("async AIOKafkaConnection._do_sasl_handshake")
    elif list(inspect.signature(_original_or_current(conn_class, "send")).parameters) != [
        "self",
        "request",
        "expect_response",
    ]:
        problems.append("AIOKafkaConnection.send(self, request, expect_response)")
    if "session_lifetime_ms" not in SaslAuthenticateResponse_v1.SCHEMA.names:
        problems.append("SaslAuthenticateResponse_v1.session_lifetime_ms")
    for name in ("CloseReason", "SaslAuthenticateRequest"):
        if not hasattr(aiokafka.conn, name):
            problems.append(f"aiokafka.conn.{name}")
    if problems:
        raise IntegrationError(
            f"this aiokafka ({getattr(aiokafka, '__version__', '?')}) lacks "
            f"{', '.join(problems)}; sasl_scram.integrations.aiokafka supports aiokafka 0.14"
        )
    return conn_class


def _targets() -> list[Patch]:
    """(class, method name, replacement) of every patch."""
    import aiokafka.client

    conn_class = _connection_class()
    client_class = aiokafka.client.AIOKafkaClient
    if not inspect.iscoroutinefunction(getattr(client_class, "bootstrap", None)):
        raise IntegrationError(
            "this aiokafka lacks async AIOKafkaClient.bootstrap; "
            "sasl_scram.integrations.aiokafka supports aiokafka 0.14"
        )
    patches = [(conn_class, name, fn) for name, fn in _PATCHES.items()]
    return [*patches, (client_class, "bootstrap", _bootstrap)]


def _original_or_current(conn_class: Any, name: str) -> Any:
    return _patches.original(name) or getattr(conn_class, name)


def install(*, key_cache: SaltedPasswordCache | None = DEFAULT_KEY_CACHE) -> None:
    """Patch aiokafka's connection (SCRAM authenticator, login, send); idempotent.

    Only connections configured with a credentials provider (see
    :func:`client_kwargs`) use the token-capable authenticator and
    re-authenticate (KIP-368).

    Args:
        key_cache: Derived-key cache shared by these connections; ``None`` disables it.

    Raises:
        IntegrationError: aiokafka is missing or its internals are not those of 0.14.
    """
    global _key_cache
    targets = _targets()
    _key_cache = key_cache
    if _patches.apply(targets):
        log.debug("patched aiokafka's SCRAM login")


def uninstall() -> None:
    """Restore aiokafka's own methods. A no-op when not installed.

    Connections already open stop re-authenticating: a broker enforcing a
    session lifetime closes them when it ends, as without the integration.
    """
    with _patches.lock:  # no login may add a session between the two
        if not _patches.revert():
            return
        for state in list(_sessions):
            state.cancel()
        _sessions.clear()
    log.debug("restored aiokafka's SCRAM login")


def is_installed() -> bool:
    try:
        targets = _targets()
    except IntegrationError:
        return False
    return PatchSet.in_place(targets)


def installed(
    *, key_cache: SaltedPasswordCache | None = DEFAULT_KEY_CACHE
) -> AbstractContextManager[None]:
    """:func:`install` for the duration of a ``with`` block, then :func:`uninstall`."""
    return _common.installed_while(install, uninstall, key_cache=key_cache)


def client_kwargs(
    config: ConfigSource,
    *,
    credentials: CredentialsSource | None = None,
    bootstrap_servers: str | None = None,
) -> dict[str, Any]:
    """Keyword arguments for ``AIOKafkaConsumer``, ``AIOKafkaProducer`` and ``AIOKafkaAdminClient``.

    Args:
        config: A ``client.properties`` path, its properties, or a ``ClientConfig``.
        credentials: Credentials or a provider (sync or async), asked at every
            login and re-authentication; overrides ``sasl.jaas.config``.
        bootstrap_servers: Overrides ``bootstrap.servers``.

    Returns:
        ``bootstrap_servers``, ``security_protocol`` and, as needed,
        ``sasl_mechanism``, ``sasl_oauth_token_provider`` (the credentials
        provider) and ``ssl_context``.

    Raises:
        ClientConfigError: A property is missing or invalid; the message names it.
        IntegrationError: SASL is configured but :func:`install` was not called.
    """
    return _common.client_kwargs(
        config,
        credentials=credentials,
        bootstrap_servers=bootstrap_servers,
        is_installed=is_installed,
        not_installed=(
            "call sasl_scram.integrations.aiokafka.install() first: aiokafka's own "
            "SCRAM cannot read a credentials provider or send tokenauth"
        ),
    )
