"""The front door's own threads for the cluster's blocking RPCs.

``upstream.identity=owner-token``'s token RPCs (``ClusterTokenIssuer``) block
on a socket for up to the upstream time-out, and a cluster that stops
answering holds each thread that makes one. On asyncio's default pool they
would hold the threads that credential look-ups
(``ConnectionProtocol._grant_in_thread``), the KIP-554 handlers and the edge's
own token RPCs need, and logins and requests that need nothing from the
cluster would wait behind them. So they get a pool of their own: a few
threads, and a bound on the calls waiting for one, past which a login that
needs the cluster fails at once as if the cluster were down (the client
reconnects, as it does when a broker is down) instead of queueing without end.

Everything else the front door asks of the cluster (the start-up look, each
forwarded connection's login) is asynchronous on the event loop and needs no
thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable
from typing import TypeVar

from sasl_scram.endpoint.proxy._upstream import UpstreamUnavailable

__all__ = ["CLUSTER_THREADS", "MAX_PENDING_CALLS", "ClusterBusy", "ClusterPool"]

log = logging.getLogger("sasl_scram.endpoint")

_R = TypeVar("_R")

#: Threads for the cluster's RPCs. ``ClusterTokenIssuer`` makes them one at a
#: time on one connection, so more threads would not get more answers: the
#: others only wait, for that connection or for a create another login of the
#: same user started (``OwnerTokens.login_for``).
CLUSTER_THREADS = 4
#: Calls waiting for or running on those threads, at most. A healthy cluster
#: creates a token in tens of milliseconds (about 35 ms each, one after the
#: other, on the tests' KRaft broker), so a burst of this many new users is
#: served in about 10 s, within the default 30 s authentication time-out; while
#: the cluster does not answer, each waiting login gives up at that time-out and
#: its call is dropped, so only more new logins than this within one time-out
#: are refused.
MAX_PENDING_CALLS = 256
_THREAD_NAME = "kafka-scram-cluster"


class ClusterBusy(UpstreamUnavailable):
    """Too many calls wait for the cluster: a login that needs it fails as one
    does when the cluster cannot be reached."""


class ClusterPool:
    """A few threads of their own for the cluster's blocking RPCs, with a bound
    on the calls that wait for them.

    Args:
        threads: How many threads (started on first use).
        max_pending: How many calls may wait or run at once; :meth:`call`
            refuses more.
        executor: Runs the calls (tests); by default a ``ThreadPoolExecutor``
            of ``threads`` threads named ``kafka-scram-cluster_N``.
    """

    def __init__(
        self,
        threads: int = CLUSTER_THREADS,
        max_pending: int = MAX_PENDING_CALLS,
        *,
        executor: concurrent.futures.Executor | None = None,
    ) -> None:
        if threads < 1 or max_pending < threads:
            raise ValueError("a cluster pool needs a thread and room for a call per thread")
        self._executor = executor or concurrent.futures.ThreadPoolExecutor(
            threads, thread_name_prefix=_THREAD_NAME
        )
        self._max = max_pending
        # Once full, the pool counts as drained again at half its bound, so a pool
        # hovering at the bound says so once, not once per call.
        self._drained_at = max_pending // 2
        self._lock = threading.Lock()
        self._pending = 0
        self._full = False
        self._refused = 0  # calls refused since the pool became full
        self._closed = False

    def __repr__(self) -> str:
        return f"ClusterPool(pending={self._pending}, max_pending={self._max})"

    @property
    def pending(self) -> int:
        """Calls waiting for a thread or running on one."""
        return self._pending

    async def call(self, fn: Callable[[], _R]) -> _R:
        """``fn()`` on the pool, for a peer (a login): refused at once when
        :data:`MAX_PENDING_CALLS` calls are already there. Cancelling the
        awaiting task (the login's deadline) drops a call that has not started.

        Raises:
            ClusterBusy: the pool is full.
        """
        self._admit(bounded=True)
        return await self._submit(fn)

    async def run(self, fn: Callable[[], _R]) -> _R:
        """``fn()`` on the pool for the front door itself (the start-up check,
        the tokens' upkeep, the stop, each one call at a time): counted, never
        refused."""
        self._admit(bounded=False)
        return await self._submit(fn)

    def _admit(self, bounded: bool) -> None:
        with self._lock:
            if self._closed:
                raise UpstreamUnavailable("the front door is stopping")
            if bounded and self._pending >= self._max:
                first, self._full = not self._full, True
                self._refused += 1
            else:
                self._pending += 1
                return
        if first:
            log.warning(
                "%d calls wait for the cluster (upstream.identity=owner-token): logins "
                "that need a token from it fail as if it were unreachable until they drain",
                self._max,
            )
        raise ClusterBusy(f"{self._max} calls already wait for the cluster")

    async def _submit(self, fn: Callable[[], _R]) -> _R:
        try:
            future = self._executor.submit(fn)
        except RuntimeError:  # shut down meanwhile
            self._finished(None)
            raise UpstreamUnavailable("the front door is stopping") from None
        # Called once the call has run, or was cancelled before it started.
        future.add_done_callback(self._finished)
        return await asyncio.wrap_future(future)

    def _finished(self, _: object) -> None:
        with self._lock:
            self._pending -= 1
            drained = self._full and self._pending <= self._drained_at
            if drained:
                self._full, refused, self._refused = False, self._refused, 0
        if drained:
            log.info("the calls waiting for the cluster drained; %d logins were refused", refused)

    def shutdown(self) -> None:
        """No more calls; those not started are dropped. A thread still waiting
        for the cluster ends when its RPC does (at the upstream time-out)."""
        with self._lock:
            self._closed = True
        self._executor.shutdown(wait=False, cancel_futures=True)
