"""A kazoo handler that bounds how long one connection attempt may wait.

kazoo gives a ZooKeeper server the whole session timeout to accept a
connection and then the session timeout divided by the number of hosts to
answer the session handshake (``ConnectRequest``). A server that is starting
can accept a connection and never answer it: ZooKeeper 3.8 listens before it
serves, and a connection that arrives in that window may be neither answered
nor closed. A store whose reconnect lands there was away for the whole session
timeout (30 s by default) after ZooKeeper came back.

:class:`HandshakeBound` bounds each wait of an attempt by
:data:`FIRST_ATTEMPT_S`: the connect, and each read or write of the handshake
and of the logins that follow it. Each attempt that runs out doubles the
bound, never past kazoo's own, and an established session resets it: a hung,
half-started server costs about a second, and a server slow to answer is
still reached after a few attempts.

kazoo is imported only when a session is created (see ``_session``), so the
handler class is made then, by :func:`bounded_handler`.
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["FIRST_ATTEMPT_S", "HandshakeBound", "bounded_handler"]

#: What each wait of the first connection attempt after a session ends may take: ZooKeeper
#: answers a handshake in milliseconds when it serves at all.
FIRST_ATTEMPT_S = 1.0


class HandshakeBound:
    """The bound on the connection attempt in progress, with its doubling rule.

    Kept apart from kazoo's handler so it can be tested without a server.
    ``limit(timeout)`` is what a wait of the attempt may take of kazoo's
    ``timeout``; ``ran_out()`` records that an attempt timed out under the
    bound (the next one waits twice as long); ``established()`` records a
    session, so the next outage starts from :data:`FIRST_ATTEMPT_S` again.
    """

    def __init__(self, first: float = FIRST_ATTEMPT_S) -> None:
        if first <= 0:
            raise ValueError(f"the first attempt's bound must be positive, not {first}")
        self._first = first
        self.current = first

    def limit(self, timeout: float | None) -> float:
        return self.current if timeout is None else min(timeout, self.current)

    def ran_out(self, timeout: float | None) -> None:
        """The attempt timed out after ``limit(timeout)``; kazoo allowed ``timeout``."""
        doubled = self.current * 2
        self.current = doubled if timeout is None else min(doubled, max(timeout, self._first))

    def established(self) -> None:
        self.current = self._first


def bounded_handler(kazoo: Any) -> Any:
    """A new (not started) ``SequentialThreadingHandler`` whose connection
    attempts are bounded by a :class:`HandshakeBound` of its own."""
    return _handler_class(kazoo)()


@functools.cache
def _handler_class(kazoo: Any) -> Any:
    """The handler class, made once per process (kazoo is imported late).

    It overrides the two calls kazoo's ``ConnectionHandler`` makes while it
    connects: ``create_connection`` (the TCP and TLS connect) and ``select`` on
    the new socket alone (each read and write of the handshake and the logins
    after it). kazoo's connection loop selects on that socket together with its
    wake-up pipe only once the session is up: that call marks it established.
    A select that returns nothing makes kazoo raise its time-out and try again
    after its back-off, exactly as when its own, longer, time-out expires.
    """
    base = kazoo.handlers.threading.SequentialThreadingHandler

    class BoundedHandshakeHandler(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.bound = HandshakeBound()
            self._connecting: object | None = None  # the attempt's socket

        @property
        def handshaking(self) -> bool:
            """Whether an attempt is under way (no session up on its socket yet)."""
            return self._connecting is not None

        def create_connection(self, *args: Any, **kwargs: Any) -> Any:
            timeout = kwargs.get("timeout")
            kwargs["timeout"] = self.bound.limit(timeout)
            try:
                sock = super().create_connection(*args, **kwargs)
            except TimeoutError:
                self.bound.ran_out(timeout)
                raise
            self._connecting = sock
            return sock

        def select(self, rlist: Any, wlist: Any, xlist: Any, timeout: Any = None) -> Any:
            connecting = self._connecting
            if connecting is None:
                return super().select(rlist, wlist, xlist, timeout)
            alone = [connecting]
            if rlist == alone or wlist == alone:
                ready = super().select(rlist, wlist, xlist, self.bound.limit(timeout))
                if not ready[0] and not ready[1] and not ready[2]:
                    self.bound.ran_out(timeout)
                return ready
            if connecting in rlist:  # the connection loop: the session is up
                self._connecting = None
                self.bound.established()
            return super().select(rlist, wlist, xlist, timeout)

    return BoundedHandshakeHandler
