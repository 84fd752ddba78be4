"""The front door while the cluster cannot be reached: a broker that is not ready.

A Kafka broker that is not ready does not answer: until its request
processing is enabled (``SocketServer.enableRequestProcessing``) nothing is
read from its listeners, and its clients wait for their connection set-up
time-out (``socket.connection.setup.timeout.ms``), then back off. A front door
that took every login and then closed the connection because the cluster was
down would be a broker that answers and drops: librdkafka takes a connection
lost during its login (a state past ``UP`` in its numbering) for a broker
that went down, refreshes metadata at once and reconnects, about every 50 ms.

So, per set of cluster addresses (the bootstrap servers behind the
listeners, or one broker behind its node port), a :class:`ClusterGate`:

- once a connection to them fails, new connections wait in the listener's
  queue (:meth:`ClusterGate.accepting` is False), as at a broker that is not
  ready;
- a login accepted before that waits for the cluster with its verdict held
  (:func:`open_when_reachable`), until the cluster is reached or the login's
  own time-out (``scram.authentication.timeout.ms``) closes it;
- one look at a time (a logged-in connection, closed at once) tries the
  addresses again, spaced as Kafka's clients space reconnections
  (:class:`~sasl_scram.frontdoor.Backoff`), while a connection waits for it;
- each change is logged once: unreachable (WARNING, with the reason), reached
  again (INFO, after how long).

A gate also remembers whether the latest login through it was taken
(:attr:`ClusterGate.login_taken`): a ``service``-mode login's verdict need not
wait for a cluster that took the last one and now merely answers slowly (a
frozen broker: the front door's ``ProxyAdapter``), but waits while the
cluster is away or refuses our login, so that no client is told "logged in"
and then dropped in a loop.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence

from sasl_scram.config import format_host_port
from sasl_scram.endpoint._forward_metrics import ForwardMetrics
from sasl_scram.endpoint.proxy._cluster_pool import ClusterBusy
from sasl_scram.endpoint.proxy._upstream import UpstreamLink
from sasl_scram.endpoint.proxy._upstream import UpstreamProtocol
from sasl_scram.endpoint.proxy._upstream import UpstreamUnavailable
from sasl_scram.endpoint.proxy._upstream import open_upstream
from sasl_scram.endpoint.proxy._upstream import why_unreachable
from sasl_scram.frontdoor import Backoff
from sasl_scram.frontdoor import FrontDoorError
from sasl_scram.frontdoor import Reachability

__all__ = ["ClusterGate", "ClusterGates", "open_when_reachable"]

log = logging.getLogger("sasl_scram.endpoint")

Targets = tuple[tuple[str, int], ...]


def describe(targets: Sequence[tuple[str, int]]) -> str:
    return ",".join(format_host_port(host, port) for host, port in targets)


class ClusterGate:
    """One set of cluster addresses at run time: reachable, or waited for.

    Args:
        name: What the log calls them (``the cluster (broker1:9092)``).
        look: One look at them: returns when they answer, raises
            :class:`UpstreamUnavailable` when they cannot be reached.
        on_change: Called after each change (the metrics' gauge).
        backoff: The spacing of the looks.
        draw: The random draw of the back-off's jitter.
        clock: Seconds, for how long the cluster was away.
    """

    def __init__(
        self,
        name: str,
        look: Callable[[], Awaitable[None]],
        on_change: Callable[[], None] = lambda: None,
        backoff: Backoff | None = None,
        draw: Callable[[], float] = random.random,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.state = Reachability(backoff)
        self._look = look
        self._on_change = on_change
        self._draw = draw
        self._clock = clock
        self._reached = asyncio.Event()
        self._reached.set()
        self._looking: asyncio.Task[None] | None = None
        self._waiting = 0
        # A connection asked to be accepted since the last look.
        self._asked = False
        #: Looks made while unreachable (for the log and the tests).
        self.looks = 0
        #: Whether the latest upstream login through these addresses (a
        #: forwarded connection's or a look's) was taken by the cluster.
        self.login_taken = False

    @property
    def reachable(self) -> bool:
        return self.state.reachable

    def accepting(self) -> bool:
        """Whether a new connection may be accepted now; while not, asking
        keeps the looks going (a connection waits in the queue)."""
        if self.state.reachable:
            return True
        self._asked = True
        self._keep_looking()
        return False

    def failed(self, problem: str) -> None:
        """A connection to these addresses could not be opened."""
        self.login_taken = False
        if self.state.failed(self._clock(), problem):
            self._reached.clear()
            log.warning(
                "Cannot reach %s: %s; new connections wait (as at a broker that is not ready) "
                "until it answers, looked at again with back-off up to %g s",
                self.name, problem, self.state.backoff.max_s,
            )  # fmt: skip
            self._on_change()
        else:
            log.debug("%s still cannot be reached: %s", self.name, problem)
        self._keep_looking()

    def reached(self) -> None:
        """A connection to these addresses was opened (or refused by a broker)."""
        since = self.state.down_since
        if self.state.reached():
            away = self._clock() - since if since is not None else 0.0
            log.info("Reached %s again after %.1f s", self.name, away)
            self._reached.set()
            self._on_change()

    async def wait_reached(self) -> None:
        """Until these addresses are reached."""
        self._waiting += 1
        try:
            self._keep_looking()
            await self._reached.wait()
        finally:
            self._waiting -= 1

    def _keep_looking(self) -> None:
        if self._looking is None and not self.state.reachable:
            self._looking = asyncio.get_running_loop().create_task(self._looks())

    async def _looks(self) -> None:
        try:
            while not self.state.reachable:
                await asyncio.sleep(self.state.next_look(self._draw()))
                if not (self._waiting or self._asked):
                    return  # nobody waits: the next connection to ask starts it again
                self._asked = False
                self.looks += 1
                try:
                    await self._look()
                except UpstreamUnavailable as exc:
                    self.failed(why_unreachable(exc))
                except FrontDoorError:
                    self.login_taken = False
                    self.reached()  # a broker answered, and refused: the logins say so
                else:
                    self.login_taken = True
                    self.reached()
        finally:
            self._looking = None

    def close(self) -> None:
        if self._looking is not None:
            self._looking.cancel()


class ClusterGates:
    """The gates of one front door, one per set of addresses, made when first asked.

    Args:
        link: How the looks log in (the ``upstream.`` login).
        metrics: The forwarding metrics, when on (read at each count).
        backoff: The spacing of the looks.
    """

    def __init__(
        self,
        link: UpstreamLink,
        metrics: Callable[[], ForwardMetrics | None] = lambda: None,
        backoff: Backoff | None = None,
    ) -> None:
        self._link = link
        self._metrics = metrics
        self._backoff = backoff
        self._gates: dict[Targets, ClusterGate] = {}

    def gate(self, targets: Sequence[tuple[str, int]]) -> ClusterGate:
        key = tuple(targets)
        gate = self._gates.get(key)
        if gate is None:
            gate = self._gates[key] = ClusterGate(
                f"the cluster ({describe(key)})",
                lambda: self._look(key),
                self._publish,
                self._backoff,
            )
        return gate

    def accepting(self, targets: Sequence[tuple[str, int]]) -> bool:
        """Whether a connection forwarded to ``targets`` may be accepted now."""
        gate = self._gates.get(tuple(targets))
        return gate is None or gate.accepting()

    @property
    def unreachable(self) -> int:
        """How many sets of addresses cannot be reached now."""
        return sum(not gate.reachable for gate in self._gates.values())

    def unforwarded(self, reason: str) -> None:
        """A login the edge took could not be forwarded (``login_refused``, ``unreachable``)."""
        metrics = self._metrics()
        if metrics is not None:
            metrics.unforwarded(reason)

    def _publish(self) -> None:
        metrics = self._metrics()
        if metrics is not None:
            metrics.set_unreachable(self.unreachable)

    async def _look(self, targets: Targets) -> None:
        upstream = await open_upstream(self._link, targets)
        upstream.close()

    def close(self) -> None:
        for gate in self._gates.values():
            gate.close()


async def open_when_reachable(
    gates: ClusterGates,
    targets: Sequence[tuple[str, int]],
    open_once: Callable[[], Awaitable[UpstreamProtocol]],
    may_wait: Callable[[], bool] = lambda: True,
) -> UpstreamProtocol:
    """An upstream connection for a login the edge took, its verdict held: opened
    now if ``targets`` answer, else once they do.

    The wait ends with the cluster reached, or with the login: its deadline
    (``scram.authentication.timeout.ms``) or the client leaving closes the
    connection, which cancels this (counted as a login not forwarded,
    ``unreachable``). ``may_wait`` is asked after a failed try: once the
    verdict is out, no login deadline bounds a wait, so the failure is raised.

    Raises:
        FrontDoorError: the cluster refused the login (``UpstreamLoginError``,
            ``OwnerTokenError``), the node port's broker is not known, too
            many calls wait for the cluster (``ClusterBusy``), or it could not
            be reached and ``may_wait`` says no (``UpstreamUnavailable``).
    """
    if not targets:
        return await open_once()
    gate = gates.gate(targets)
    while True:
        if not gate.reachable:
            try:
                await gate.wait_reached()
            except asyncio.CancelledError:
                gates.unforwarded("unreachable")
                raise
        try:
            upstream = await open_once()
        except ClusterBusy:
            raise  # the front door's own calls are many, not the cluster away: fail now
        except UpstreamUnavailable as exc:
            gate.failed(why_unreachable(exc))
            if may_wait():
                continue
            raise
        except FrontDoorError:
            gate.login_taken = False  # refused: the next logins hear it as theirs
            raise
        gate.login_taken = True
        gate.reached()
        return upstream
