"""KIP-368 re-authentication on aiokafka 0.14 connections that use our SCRAM.

aiokafka logs in once per connection (``AIOKafkaConnection._do_sasl_handshake``)
and ignores ``session_lifetime_ms``; a broker with ``connections.max.reauth.ms``
then closes the connection when the session ends, failing what is in flight.
This module does what Kafka's Java client does (``SaslClientAuthenticator``,
``KafkaChannel``), for the connections our integration logs in:

* it reads ``session_lifetime_ms`` from the SaslAuthenticate (v1+) responses;
* at 85 % of the lifetime plus up to 10 % jitter (``ReauthInfo``) it runs
  aiokafka's own SaslHandshake and SaslAuthenticate exchange again on the same
  connection, which asks the credentials provider again;
* requests sent meanwhile wait and go out once the session is renewed; the
  broker answers in order, so requests already in flight are not disturbed;
* a failed re-authentication closes the connection as aiokafka closes a
  failed login (``CloseReason.AUTH_FAILURE``, the error chained into every
  pending request's ``KafkaConnectionError``); nothing is retried with old
  credentials;
* a connection closed by someone else during the exchange (the application's
  ``stop()``, or the broker) ends it without an error line: the close is not a
  re-authentication failure.

The per-connection state lives in one attribute of the connection; the
decisions (:func:`reauth_delay_ms`) are plain functions of injected jitter.
"""

from __future__ import annotations

import asyncio
import logging
import random
import weakref
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any
from typing import Protocol

__all__ = ["ConnectionReauth", "reauth_delay_ms"]

log = logging.getLogger("sasl_scram.integrations.aiokafka")

# Kafka's SaslClientAuthenticator.ReauthInfo: re-authenticate at 85 % of the
# session lifetime (network latency, clock drift) plus up to 10 % jitter, so
# that many connections opened together do not re-authenticate together.
_REAUTH_AT = 0.85
_REAUTH_JITTER = 0.10

#: The attribute holding a connection's :class:`ConnectionReauth`.
STATE_ATTRIBUTE = "_sasl_scram_reauth"


def reauth_delay_ms(session_lifetime_ms: int, jitter: float) -> int:
    """When to re-authenticate, in ms after the login, for ``jitter`` in [0, 1)."""
    if session_lifetime_ms <= 0:
        raise ValueError("session_lifetime_ms: must be positive")
    return int(session_lifetime_ms * (_REAUTH_AT + _REAUTH_JITTER * jitter))


class ReauthTarget(Protocol):
    """The connection a :class:`ConnectionReauth` re-authenticates."""

    async def login(self) -> None:
        """Run aiokafka's SaslHandshake and SaslAuthenticate exchange (it closes
        the connection and raises on failure)."""

    def close(self, exc: BaseException) -> None:
        """Close the connection with aiokafka's AUTH_FAILURE reason."""

    def connected(self) -> bool:
        """Whether the connection is still open."""


class ConnectionReauth:
    """One connection's session: its lifetime, the timer, and the send gate.

    Args:
        loop: The connection's event loop.
        target: The connection, as re-authentication sees it.
        jitter: Random numbers in [0, 1); injected by tests.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        target: ReauthTarget,
        *,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self._loop = loop
        self._target = target
        self._jitter = jitter
        self.session_lifetime_ms = 0
        self.reauthentications = 0
        self.failure: BaseException | None = None
        self._open = asyncio.Event()  # set while requests may go out directly
        self._open.set()
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._cancelled = False

    # -- the send gate -----------------------------------------------------------
    def must_wait(self) -> bool:
        """Whether a request sent now has to wait for the re-authentication.

        The exchange itself (sent from the re-authentication task) never waits.
        """
        if self._open.is_set():
            return False
        return asyncio.current_task() is not self._task

    async def after_reauthentication(self, send: Callable[[], Awaitable[Any]]) -> Any:
        """Send once the session is renewed; fail if the re-authentication did."""
        await self._open.wait()
        if self.failure is not None:
            import aiokafka.errors

            raise aiokafka.errors.KafkaConnectionError(
                "re-authentication failed; the connection is closed"
            ) from self.failure
        return await send()

    def note_response(self, response: Any) -> None:
        """Keep the ``session_lifetime_ms`` of a SaslAuthenticate response (v1+)."""
        self.session_lifetime_ms = int(getattr(response, "session_lifetime_ms", 0) or 0)

    # -- the schedule ------------------------------------------------------------
    def logged_in(self) -> None:
        """A login or re-authentication succeeded: plan the next one, if the
        broker set a session lifetime (0: no re-authentication, KIP-368)."""
        lifetime = self.session_lifetime_ms
        if lifetime <= 0 or self._cancelled:
            return
        delay = reauth_delay_ms(lifetime, self._jitter())
        log.debug("session lifetime %d ms; re-authenticating in %d ms", lifetime, delay)
        self._timer = self._loop.call_later(delay / 1000, _fire, weakref.ref(self))

    def cancel(self) -> None:
        """Re-authenticate no more (``uninstall()``; may run on another thread)."""
        self._cancelled = True
        timer = self._timer
        if timer is not None:
            timer.cancel()

    def _start(self) -> None:
        self._timer = None
        if self._cancelled or not self._target.connected() or self._task is not None:
            return
        self._open.clear()
        self._task = self._loop.create_task(self._reauthenticate())

    async def _reauthenticate(self) -> None:
        self.session_lifetime_ms = 0
        try:
            await self._target.login()
        except BaseException as exc:
            self.failure = exc
            if self._closed_meanwhile(exc):
                # Someone else closed the connection (the application's stop(),
                # or the broker): the session ends with it, nothing failed here.
                log.debug("re-authentication ended: the connection closed")
            else:
                # aiokafka's login closes the connection on a refusal; a provider or
                # transport failure must not leave a session that is about to end.
                self._target.close(exc)
                log.error("re-authentication failed; connection closed: %s", type(exc).__name__)
            if not isinstance(exc, Exception):
                raise
        else:
            self.reauthentications += 1
            log.debug("re-authenticated (%d)", self.reauthentications)
            self.logged_in()
        finally:
            self._task = None
            self._open.set()

    def _closed_meanwhile(self, exc: BaseException) -> bool:
        """Whether the exchange failed because the connection was closed under
        it: aiokafka fails a request on a closed connection with
        KafkaConnectionError, while a refusal raises SaslAuthenticationFailed."""
        import aiokafka.errors

        return (
            isinstance(exc, aiokafka.errors.KafkaConnectionError) and not self._target.connected()
        )


def _fire(ref: weakref.ReferenceType[ConnectionReauth]) -> None:
    state = ref()
    if state is not None:
        state._start()
