"""Opening the front door at start, when the cluster answers now or later.

The front door needs one look at the cluster before it can answer anyone:
the ApiVersions it advertises are the cluster's, capped, and its node ports
are the cluster's brokers. With ``upstream.start.wait=true`` (the default) a
cluster that cannot be reached at start does not stop ``serve``: it listens,
and its listeners accept nothing until the look succeeds, as a Kafka broker
reads nothing from its listeners until its request processing is enabled
(``SocketServer.enableRequestProcessing``); clients wait for their
connection set-up time-out and try again, as they do against a broker that
is starting. The look is tried again with Kafka's reconnection back-off
(:class:`~sasl_scram.frontdoor.Backoff`), and the state is logged once per
change. With ``upstream.start.wait=false`` the first failure is one line and
exit 1, as before.

What waiting cannot fix is never waited for: a refused ``upstream.`` login,
an untrusted certificate, a cluster that will not issue owner tokens, a node
port in use. At the first look each is one line and exit 1; found by a later
look, each ends ``serve`` the same way.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable

from sasl_scram.endpoint._config import EndpointConfig
from sasl_scram.endpoint._forward_metrics import ForwardMetrics
from sasl_scram.endpoint.acls import EdgeAcls
from sasl_scram.endpoint.login import ConnectionSettings
from sasl_scram.endpoint.proxy._forward import FrontDoor
from sasl_scram.endpoint.proxy._forward import open_front_door
from sasl_scram.endpoint.proxy._upstream import UpstreamUnavailable
from sasl_scram.endpoint.proxy._upstream import UpstreamUntrusted
from sasl_scram.endpoint.proxy._upstream import why_unreachable
from sasl_scram.frontdoor import START_WAIT_KEY
from sasl_scram.frontdoor import Backoff
from sasl_scram.frontdoor import Reachability

__all__ = ["FrontDoorStart"]

log = logging.getLogger("sasl_scram.endpoint")


class FrontDoorStart:
    """The front door's first look at the cluster, and the later ones while
    it cannot be reached.

    Args:
        config: the endpoint's configuration (``upstream.`` keys set).
        settings: the connections' settings before the front door's.
        metrics: the forwarding metrics, when on.
        backoff: the spacing of the looks.
        acls: the edge's ACLs (``authorizer.class.name``).
    """

    def __init__(
        self,
        config: EndpointConfig,
        settings: ConnectionSettings,
        metrics: ForwardMetrics | None,
        backoff: Backoff | None = None,
        acls: EdgeAcls | None = None,
    ) -> None:
        assert config.upstream is not None
        self._acls = acls
        self._config = config
        self._settings = settings
        self._metrics = metrics
        self._state = Reachability(backoff)
        self._began = time.monotonic()
        self._task: asyncio.Task[None] | None = None
        #: Looks made after the first one (for the tests).
        self.looks = 0

    async def _open(self) -> FrontDoor:
        return await open_front_door(self._config, self._settings, self._metrics, self._acls)

    async def first(self) -> FrontDoor | None:
        """The front door, or ``None`` when the cluster cannot be reached and
        ``upstream.start.wait`` says to wait (then :meth:`keep_trying`).

        Raises:
            ScramError: what waiting cannot fix, or any failure with
                ``upstream.start.wait=false``.
        """
        upstream = self._config.upstream
        assert upstream is not None
        try:
            return await self._open()
        except UpstreamUntrusted:
            raise
        except UpstreamUnavailable as exc:
            if not upstream.start_wait:
                raise
            self._state.failed(time.monotonic(), str(exc))
            self._set_unreachable(1)
            log.warning(
                "Cannot reach the cluster at start: %s; listening, and accepting connections "
                "once it is reached (as a broker that is not ready), looked at again with "
                "back-off up to %g s (%s=false exits instead)",
                why_unreachable(exc), self._state.backoff.max_s, START_WAIT_KEY,
            )  # fmt: skip
            return None

    def keep_trying(
        self, opened: Callable[[FrontDoor], None], failed: Callable[[BaseException], None]
    ) -> None:
        """Look again until the cluster is reached, then ``opened(door)``; what
        waiting cannot fix goes to ``failed``."""
        self._task = asyncio.get_running_loop().create_task(self._tries(opened, failed))

    async def _tries(
        self, opened: Callable[[FrontDoor], None], failed: Callable[[BaseException], None]
    ) -> None:
        while True:
            await asyncio.sleep(self._state.next_look(random.random()))
            self.looks += 1
            try:
                door = await self._open()
            except UpstreamUntrusted as exc:
                failed(exc)
                return
            except UpstreamUnavailable as exc:
                self._state.failed(time.monotonic(), str(exc))
                log.debug("the cluster still cannot be reached: %s", exc)
                continue
            except Exception as exc:  # a refused login, owner tokens refused: one line, exit 1
                failed(exc)
                return
            log.info("Reached the cluster %.1f s after start", time.monotonic() - self._began)
            self._set_unreachable(0)  # from now on the front door's gates count
            try:
                opened(door)
            except Exception as exc:  # a node port in use
                failed(exc)
            return

    def _set_unreachable(self, count: int) -> None:
        """The gauge of the sets of addresses not reached (the bootstrap servers
        here): while waiting at start nothing is accepted, as in an outage later."""
        if self._metrics is not None:
            self._metrics.set_unreachable(count)

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
