"""Token-capable SCRAM for kafka-python 3.x, through its SASL mechanism registry.

kafka-python's own SCRAM sends no extensions (so no delegation tokens), does
not escape ``,`` and ``=`` in user names, silently drops its configuration
errors and fails with ``KeyError`` on an ``e=`` reply. :func:`install`
registers :class:`ScramSaslMechanism` for ``SCRAM-SHA-256`` and
``SCRAM-SHA-512`` with ``kafka.net.sasl.register_sasl_mechanism(...,
overwrite=True)``: the mechanism name is also what SaslHandshake sends, so a
replacement must take over both names for the whole process. :func:`uninstall`
puts kafka-python's own classes back. Nothing happens on import.

A refused login ends the bootstrap at once with kafka-python's
``SaslAuthenticationFailedError``, as Kafka's Java client raises
``SaslAuthenticationException`` without retrying: kafka-python 3.0's
``KafkaConnection.initialize`` closes the connection on that error without
raising it, so its manager never caches it (``_auth_failures``) and the
bootstrap retried the refused login until its timeout (30 s), then said only
"Unable to bootstrap". :func:`install` wraps ``initialize`` to raise it for
SCRAM connections; network errors are retried as before.

A SCRAM client whose every bootstrap address refuses the connection fails at
once too, where kafka-python retries until ``bootstrap_timeout_ms``:
:func:`install` wraps ``KafkaConnectionManager.bootstrap`` to try a TCP
connection to each address first (not through a ``proxy_url``) and, when all
of them are refused, raise a :class:`~sasl_scram.integrations.ListenerError`
naming each address, which is also kafka-python's ``KafkaTimeoutError``. One
address that accepts, or does not answer, hands the bootstrap to kafka-python
as before.

How credentials reach the mechanism: kafka-python hands a mechanism only a
fixed whitelist of client settings, and its constructors refuse unknown ones.
``sasl_oauth_token_provider`` is the one whitelisted setting that carries an
arbitrary object and that non-OAUTHBEARER mechanisms ignore, so
:func:`client_kwargs` puts a :class:`CredentialsProvider` there. kafka-python
builds a new mechanism for every authentication, including each KIP-368
re-authentication, and the mechanism asks the provider each time; a rotated
token is therefore used from the next re-authentication on. Without a
provider the mechanism falls back to ``sasl_plain_username`` and
``sasl_plain_password`` (user logins only).

Example::

    from kafka import KafkaConsumer
    from sasl_scram.integrations import kafka_python

    kafka_python.install()
    consumer = KafkaConsumer("events", **kafka_python.client_kwargs("client.properties"))
"""

from __future__ import annotations

import inspect
import logging
from contextlib import AbstractContextManager
from typing import Any

from sasl_scram._client import ScramClient
from sasl_scram._errors import ScramError
from sasl_scram._errors import ScramUsageError
from sasl_scram._keycache import DEFAULT_KEY_CACHE
from sasl_scram._keycache import SaltedPasswordCache
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.integrations import _common
from sasl_scram.integrations._config import ConfigSource
from sasl_scram.integrations._credentials import CredentialsProvider
from sasl_scram.integrations._credentials import CredentialsSource
from sasl_scram.integrations._credentials import ScramCredentials
from sasl_scram.integrations._credentials import fetch_credentials
from sasl_scram.integrations._diagnosis import all_refused
from sasl_scram.integrations._errors import CredentialsError
from sasl_scram.integrations._errors import IntegrationError
from sasl_scram.integrations._errors import refusal
from sasl_scram.integrations._patches import Patch
from sasl_scram.integrations._patches import PatchSet

__all__ = [
    "ScramSaslMechanism",
    "client_kwargs",
    "install",
    "installed",
    "is_installed",
    "uninstall",
]

log = logging.getLogger("sasl_scram.integrations.kafka_python")

MECHANISM_NAMES = ("SCRAM-SHA-256", "SCRAM-SHA-512")

_patches = PatchSet("kafka-python")
_key_cache: SaltedPasswordCache | None = DEFAULT_KEY_CACHE
# A refusal (a TCP reset) comes back within one round trip, well under a
# second on any route; an address silent for longer is left to kafka-python's
# own socket_connection_setup_timeout_ms.
_REFUSAL_PROBE_TIMEOUT = 1.0


def _kafka_error(name: str, message: str) -> Exception:
    return _kafka_error_type(name)(message)


class ScramSaslMechanism:
    """A kafka-python SASL mechanism running :class:`sasl_scram.ScramClient`.

    kafka-python constructs it with its connection settings for every
    (re-)authentication, then alternates :meth:`auth_bytes` and
    :meth:`receive`. It follows kafka-python's ``SaslMechanism`` interface
    without inheriting from it, so this module can load without kafka-python.

    Args:
        **config: kafka-python's whitelisted connection settings plus ``host``.
            Uses ``sasl_mechanism``, ``sasl_oauth_token_provider`` (a
            :class:`CredentialsProvider`) or else ``sasl_plain_username`` and
            ``sasl_plain_password``, and ``security_protocol``.

    Raises:
        kafka.errors.KafkaConfigurationError: Unknown mechanism, or no usable
            credentials (the provider failure is chained).
    """

    def __init__(self, **config: Any) -> None:
        name = config.get("sasl_mechanism") or ""
        try:
            mechanism = ScramMechanism.from_name(name)
        except ScramUsageError as exc:
            raise _kafka_error("KafkaConfigurationError", str(exc)) from None
        try:
            credentials = self._credentials(config)
        except CredentialsError as exc:
            raise _kafka_error("KafkaConfigurationError", str(exc)) from exc
        if config.get("security_protocol") == "SASL_PLAINTEXT":
            log.debug("SCRAM over SASL_PLAINTEXT: the exchange is visible but reveals no password")
        self._mechanism = mechanism
        self._username = credentials.username
        self._token_auth = credentials.token_auth
        _common.token_login.set(credentials.token_auth)
        self._client: ScramClient = credentials.scram_client(mechanism, key_cache=_key_cache)
        self._pending: bytes | None = self._client.client_first()
        self._got_server_first = False
        self._done = False

    @staticmethod
    def _credentials(config: dict[str, Any]) -> ScramCredentials:
        provider = config.get("sasl_oauth_token_provider")
        if isinstance(provider, CredentialsProvider):
            # Asked at every (re-)authentication: rotated tokens are picked up.
            return fetch_credentials(provider)
        username = config.get("sasl_plain_username")
        password = config.get("sasl_plain_password")
        if not username or not password:
            raise CredentialsError(
                "SCRAM needs sasl_plain_username and sasl_plain_password, or a "
                "credentials provider in sasl_oauth_token_provider (see client_kwargs)"
            )
        return ScramCredentials(username, password)

    def __repr__(self) -> str:
        return (
            f"ScramSaslMechanism({self._mechanism.mechanism_name}, user={self._username!r}, "
            f"token_auth={self._token_auth})"
        )

    def auth_bytes(self) -> bytes:
        """The next message for the server."""
        if self._pending is None:
            raise _kafka_error("IllegalStateError", "no SCRAM message to send in this state")
        pending, self._pending = self._pending, None
        return pending

    def receive(self, auth_bytes: bytes) -> bool:
        """Process the server's message; returns :meth:`is_done`.

        Raises:
            kafka.errors.SaslAuthenticationFailedError: The server sent ``e=``,
                an invalid message, or a wrong signature.
        """
        client = self._client
        if self._done:
            raise _kafka_error("IllegalStateError", "SCRAM exchange is over")
        try:
            if not self._got_server_first:
                self._got_server_first = True
                self._pending = client.receive_server_first(auth_bytes)
            else:
                client.receive_server_final(auth_bytes)
                self._done = True
        except ScramError as exc:
            # kafka-python's own client dies on KeyError at an e= reply.
            self._done = True
            raise _kafka_error("SaslAuthenticationFailedError", refusal(exc)) from None
        return self._done

    def is_done(self) -> bool:
        return self._done

    def is_authenticated(self) -> bool:
        return self._client.complete

    def auth_details(self) -> str:
        """kafka-python logs this after a successful login."""
        if not self.is_authenticated():
            raise RuntimeError("Not authenticated yet!")
        how = " with a delegation token" if self._token_auth else ""
        return f"Authenticated as {self._username} via SASL / {self._mechanism.mechanism_name}{how}"


async def _initialize_raising_refusals(self: Any, timeout_at: float | None = None) -> None:
    """``KafkaConnection.initialize``, raising a refused SCRAM login instead of only
    closing on it: the manager then caches it and the bootstrap fails at once."""
    # The peer, while the socket is open: "host:port<-local port".
    peer = str(self.transport.host_port()).split("<-")[0] if self.transport else ""
    # kafka-python's own; after uninstall() (a connection mid-initialize) the class's again.
    await _patches.original("initialize", type(self).initialize)(self, timeout_at)
    if self.config.get("sasl_mechanism") not in MECHANISM_NAMES:
        return
    future = self.init_future
    failure = future.exception if future.is_done else None
    if isinstance(failure, _kafka_error_type("SaslAuthenticationFailedError")):
        hinted = _common.with_token_hint(failure, "" if peer == "none" else peer)
        if hinted is failure:
            raise failure
        raise hinted from None


def _bootstrap_failing_fast(
    self: Any, timeout_ms: float | None = None, refresh: bool = True
) -> None:
    """``KafkaConnectionManager.bootstrap``, raising at once when every bootstrap
    address refuses the connection, where kafka-python retries it until
    ``bootstrap_timeout_ms``; the first bootstrap of a SCRAM client only."""
    if (
        self.config.get("sasl_mechanism") in MECHANISM_NAMES
        and getattr(self, "_bootstrap_future", None) is None
        and not self.config.get("proxy_url")  # the proxy reaches the addresses, not us
    ):
        from kafka.cluster import collect_hosts

        # kafka-python's own reading of the addresses, in the order given.
        hosts = collect_hosts(self.config["bootstrap_servers"], randomize=False)
        problem = all_refused([(host, port) for host, port, _ in hosts], _REFUSAL_PROBE_TIMEOUT)
        if problem is not None:
            raise _common.listener_error(problem, _kafka_error_type("KafkaTimeoutError"))
    _patches.original("bootstrap", type(self).bootstrap)(self, timeout_ms, refresh)


def _kafka_error_type(name: str) -> type[Exception]:
    import kafka.errors

    error_type: type[Exception] = getattr(kafka.errors, name)
    return error_type


def _connection_class() -> Any:
    """kafka-python's connection class, if it has the internals the wrapper relies on."""
    from kafka.net.connection import KafkaConnection
    from kafka.net.manager import KafkaConnectionManager

    if not (
        inspect.iscoroutinefunction(getattr(KafkaConnection, "initialize", None))
        and hasattr(KafkaConnection, "init_future")
        and hasattr(KafkaConnectionManager, "maybe_raise_auth_failure")
    ):
        return None
    return KafkaConnection


def _manager_class() -> Any:
    """kafka-python's connection manager, if its ``bootstrap`` is the one wrapped."""
    import kafka.cluster
    from kafka.net.manager import KafkaConnectionManager

    bootstrap = getattr(KafkaConnectionManager, "bootstrap", None)
    if not (
        callable(bootstrap)
        and list(inspect.signature(bootstrap).parameters) == ["self", "timeout_ms", "refresh"]
        and "randomize" in inspect.signature(kafka.cluster.collect_hosts).parameters
    ):
        return None
    return KafkaConnectionManager


def install(*, key_cache: SaltedPasswordCache | None = DEFAULT_KEY_CACHE) -> None:
    """Register :class:`ScramSaslMechanism` for SCRAM-SHA-256 and SCRAM-SHA-512.

    Process-wide: every kafka-python client created or re-authenticating
    afterwards uses it. Calling it again only updates ``key_cache``.

    Args:
        key_cache: Where derived keys are kept so reconnects and
            re-authentications skip PBKDF2; ``None`` disables caching.

    Raises:
        IntegrationError: kafka-python is not installed or has no 3.x registry.
    """
    global _key_cache
    sasl = _registry()
    _key_cache = key_cache
    patches: list[Patch] = [(sasl.SASL_MECHANISMS, n, ScramSaslMechanism) for n in MECHANISM_NAMES]
    conn_class = _connection_class()
    if conn_class is not None:
        patches.append((conn_class, "initialize", _initialize_raising_refusals))
    manager_class = _manager_class()
    if manager_class is not None:
        patches.append((manager_class, "bootstrap", _bootstrap_failing_fast))
    if _patches.apply(patches):
        if conn_class is None:
            log.debug("this kafka-python retries refused logins until its bootstrap timeout")
        if manager_class is None:
            log.debug("this kafka-python retries refused ports until its bootstrap timeout")
        log.debug("installed token-capable SCRAM for kafka-python")


def uninstall() -> None:
    """Put kafka-python's own SCRAM mechanism back. A no-op when not installed.

    A name that someone re-registered after :func:`install` is left alone.
    """
    if _patches.revert():
        log.debug("restored kafka-python's own SCRAM")


def is_installed() -> bool:
    """True while both SCRAM names resolve to :class:`ScramSaslMechanism`."""
    try:
        sasl = _registry()
    except IntegrationError:
        return False
    return all(sasl.SASL_MECHANISMS.get(n) is ScramSaslMechanism for n in MECHANISM_NAMES)


def installed(
    *, key_cache: SaltedPasswordCache | None = DEFAULT_KEY_CACHE
) -> AbstractContextManager[None]:
    """:func:`install` for the duration of a ``with`` block, then :func:`uninstall`.

    Clients still open after the block fall back to kafka-python's own SCRAM at
    their next re-authentication.
    """
    return _common.installed_while(install, uninstall, key_cache=key_cache)


def _registry() -> Any:
    try:
        import kafka.net.sasl as sasl
    except ImportError as exc:
        raise IntegrationError(
            "kafka-python 3.x is required (kafka.net.sasl.register_sasl_mechanism)"
        ) from exc
    return sasl


def client_kwargs(
    config: ConfigSource,
    *,
    credentials: CredentialsSource | None = None,
    bootstrap_servers: str | None = None,
) -> dict[str, Any]:
    """Keyword arguments for ``KafkaConsumer``, ``KafkaProducer`` and ``KafkaAdminClient``.

    Args:
        config: A ``client.properties`` path, its properties, or a ``ClientConfig``.
        credentials: Credentials or a provider, asked at every (re-)authentication;
            overrides ``sasl.jaas.config``, which may then be left out.
        bootstrap_servers: Overrides ``bootstrap.servers``.

    Returns:
        ``bootstrap_servers``, ``security_protocol`` and, as the configuration
        needs them, ``sasl_mechanism``, ``sasl_oauth_token_provider`` (the
        credentials provider) and ``ssl_context``.

    Raises:
        ClientConfigError: A property is missing or invalid; the message names it.
        IntegrationError: SASL is configured but :func:`install` was not called:
            kafka-python's own SCRAM cannot use a credentials provider.
    """
    return _common.client_kwargs(
        config,
        credentials=credentials,
        bootstrap_servers=bootstrap_servers,
        is_installed=is_installed,
        not_installed=(
            "call sasl_scram.integrations.kafka_python.install() first: kafka-python's "
            "own SCRAM cannot read a credentials provider or send tokenauth"
        ),
    )
