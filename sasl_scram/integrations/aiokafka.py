"""Token-capable SCRAM for aiokafka 0.14, through a narrow, reversible patch.

aiokafka has no SASL plugin registry: ``AIOKafkaConnection`` picks its SCRAM
authenticator in one method, ``authenticator_scram``. :func:`install` replaces
that one method; :func:`uninstall` restores it. The replacement only acts on
connections whose ``sasl_oauth_token_provider`` is a
:class:`~sasl_scram.integrations.CredentialsProvider` (that is what
:func:`client_kwargs` passes); every other connection gets aiokafka's own
authenticator, unchanged. Nothing happens on import.

The provider is asked at every new connection (aiokafka does not implement
KIP-368 re-authentication) and may be ``async``. As in aiokafka, the PBKDF2
work runs in the loop's default executor, never on the event loop.

Example::

    from aiokafka import AIOKafkaConsumer
    from sasl_scram.integrations import aiokafka as scram_aiokafka

    scram_aiokafka.install()
    consumer = AIOKafkaConsumer("events", **scram_aiokafka.client_kwargs("client.properties"))
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sasl_scram._client import ScramClient
from sasl_scram._errors import ScramError, ScramServerError
from sasl_scram._keycache import DEFAULT_KEY_CACHE, SaltedPasswordCache
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.integrations import _common
from sasl_scram.integrations._config import ConfigSource
from sasl_scram.integrations._credentials import (
    CredentialsProvider,
    CredentialsSource,
    fetch_credentials_async,
)
from sasl_scram.integrations._errors import CredentialsError, IntegrationError

__all__ = [
    "ScramAuthenticator",
    "client_kwargs",
    "install",
    "installed",
    "is_installed",
    "uninstall",
]

log = logging.getLogger("sasl_scram.integrations.aiokafka")

_lock = threading.Lock()
_original: Callable[..., Any] | None = None
_key_cache: SaltedPasswordCache | None = DEFAULT_KEY_CACHE


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
        except ScramServerError as exc:
            raise _auth_failed(f"server refused the login: e={exc.error}") from None
        except CredentialsError as exc:
            raise _auth_failed(str(exc)) from exc
        except ScramError as exc:
            raise _auth_failed(str(exc)) from None

    async def _step(self, payload: bytes | None) -> tuple[bytes, bool] | None:
        if self._client is None:
            credentials = await fetch_credentials_async(self._provider)
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
        assert _original is not None
        return _original(self)
    return ScramAuthenticator(
        loop=self._loop,
        mechanism=ScramMechanism.from_name(self._sasl_mechanism),
        provider=provider,
        key_cache=_key_cache,
    )


def _connection_class() -> Any:
    try:
        from aiokafka.conn import AIOKafkaConnection
    except ImportError as exc:
        raise IntegrationError("aiokafka is required") from exc
    if not callable(getattr(AIOKafkaConnection, "authenticator_scram", None)):
        raise IntegrationError(
            "this aiokafka has no AIOKafkaConnection.authenticator_scram; 0.14 is supported"
        )
    return AIOKafkaConnection


def install(*, key_cache: SaltedPasswordCache | None = DEFAULT_KEY_CACHE) -> None:
    """Patch ``AIOKafkaConnection.authenticator_scram``; idempotent.

    Only connections configured with a credentials provider (see
    :func:`client_kwargs`) use the token-capable authenticator.

    Args:
        key_cache: Derived-key cache shared by these connections; ``None`` disables it.

    Raises:
        IntegrationError: aiokafka is missing or not shaped like 0.14.
    """
    global _original, _key_cache
    conn_class = _connection_class()
    with _lock:
        _key_cache = key_cache
        if _original is not None:
            return
        _original = conn_class.authenticator_scram
        conn_class.authenticator_scram = _authenticator_scram
    log.debug("patched aiokafka's SCRAM authenticator")


def uninstall() -> None:
    """Restore aiokafka's own ``authenticator_scram``. A no-op when not installed."""
    global _original
    with _lock:
        if _original is None:
            return
        conn_class = _connection_class()
        if conn_class.authenticator_scram is _authenticator_scram:
            conn_class.authenticator_scram = _original
        _original = None
    log.debug("restored aiokafka's SCRAM authenticator")


def is_installed() -> bool:
    try:
        return bool(_connection_class().authenticator_scram is _authenticator_scram)
    except IntegrationError:
        return False


@contextmanager
def installed(*, key_cache: SaltedPasswordCache | None = DEFAULT_KEY_CACHE) -> Iterator[None]:
    """:func:`install` for the duration of a ``with`` block, then :func:`uninstall`."""
    install(key_cache=key_cache)
    try:
        yield
    finally:
        uninstall()


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
            new connection; overrides ``sasl.jaas.config``.
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
