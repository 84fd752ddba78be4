"""``ClusterGate`` and ``open_when_reachable`` (``endpoint/proxy/_reachable.py``)
on asyncio with a fake cluster: one look at a time while someone waits, none
while nobody does, each change logged once, and a held login opened as soon
as the cluster answers. The real cluster's part is ``tests/faults/test_cluster_down.py``."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from sasl_scram.endpoint.proxy._reachable import ClusterGate
from sasl_scram.endpoint.proxy._reachable import ClusterGates
from sasl_scram.endpoint.proxy._reachable import open_when_reachable
from sasl_scram.endpoint.proxy._upstream import UpstreamLink
from sasl_scram.endpoint.proxy._upstream import UpstreamProtocol
from sasl_scram.endpoint.proxy._upstream import UpstreamUnavailable
from sasl_scram.frontdoor import Backoff
from sasl_scram.frontdoor import UpstreamLoginError

FAST = Backoff(initial_s=0.01, max_s=0.02)


class FakeCluster:
    def __init__(self) -> None:
        self.up = False
        self.looks = 0
        self.refuses = False

    async def look(self) -> None:
        self.looks += 1
        if self.refuses:
            raise UpstreamLoginError("the cluster refused the login of 'svc'")
        if not self.up:
            raise UpstreamUnavailable("cannot reach the cluster: 127.0.0.1:1: refused")


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_looks_go_on_while_a_login_waits_and_it_goes_through_once_reached(
    caplog: pytest.LogCaptureFixture,
) -> None:
    cluster = FakeCluster()

    async def scenario() -> tuple[bool, int]:
        gate = ClusterGate("the cluster (127.0.0.1:1)", cluster.look, backoff=FAST)
        gate.failed("127.0.0.1:1: refused")
        waiting = asyncio.ensure_future(gate.wait_reached())
        await asyncio.sleep(0.2)
        still = not waiting.done()
        cluster.up = True
        await asyncio.wait_for(waiting, 2)
        gate.close()
        return still, cluster.looks

    with caplog.at_level(logging.DEBUG, "sasl_scram.endpoint"):
        still, looks = run(scenario())
    assert still
    assert looks >= 5  # spaced 10-20 ms, for 200 ms
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.getMessage()[:40] for r in warnings] == ["Cannot reach the cluster (127.0.0.1:1): "]
    assert sum("Reached the cluster (127.0.0.1:1) again" in m for m in caplog.messages) == 1


def test_nobody_waiting_no_looks_and_a_queued_connection_starts_them_again() -> None:
    cluster = FakeCluster()

    async def scenario() -> tuple[int, int, bool]:
        gate = ClusterGate("the cluster", cluster.look, backoff=FAST)
        gate.failed("refused")
        await asyncio.sleep(0.2)
        idle = cluster.looks  # the first look finds nobody waiting, and stops
        assert gate.accepting() is False  # a connection waits in the queue
        cluster.up = True
        for _ in range(100):
            await asyncio.sleep(0.01)
            if gate.reachable:
                break
        gate.close()
        return idle, cluster.looks, gate.accepting()

    idle, looks, accepting = run(scenario())
    assert idle == 0
    assert looks >= 1 and accepting


def test_a_broker_that_refuses_the_login_answers() -> None:
    cluster = FakeCluster()
    cluster.refuses = True

    async def scenario() -> bool:
        gate = ClusterGate("the cluster", cluster.look, backoff=FAST)
        gate.failed("refused")
        await asyncio.wait_for(gate.wait_reached(), 2)
        return gate.reachable

    assert run(scenario())


def test_open_when_reachable_holds_the_login_until_the_cluster_answers() -> None:
    opened: list[int] = []
    attempts = 0
    cluster = FakeCluster()

    async def open_once() -> UpstreamProtocol:
        nonlocal attempts
        attempts += 1
        await cluster.look()
        opened.append(attempts)
        return UpstreamProtocol(None, asyncio.get_running_loop())

    async def scenario() -> tuple[int, int]:
        gates = ClusterGates(UpstreamLink(None, None, 1.0), backoff=FAST)
        gates._look = lambda targets: cluster.look()  # type: ignore[method-assign]
        targets = [("127.0.0.1", 1)]
        login = asyncio.ensure_future(open_when_reachable(gates, targets, open_once))
        await asyncio.sleep(0.2)
        assert not login.done()
        during = attempts  # the login's own try; the looks are the gate's
        assert gates.unreachable == 1
        cluster.up = True
        await asyncio.wait_for(login, 2)
        gates.close()
        return during, gates.unreachable

    during, unreachable = run(scenario())
    assert during == 1
    assert opened == [2] and unreachable == 0


def test_a_login_closed_while_it_waits_is_counted_unreachable() -> None:
    cluster = FakeCluster()
    counted: list[str] = []

    async def open_once() -> UpstreamProtocol:
        await cluster.look()
        raise AssertionError("never reached")

    async def scenario() -> None:
        gates = ClusterGates(UpstreamLink(None, None, 1.0), backoff=FAST)
        gates.unforwarded = counted.append  # type: ignore[method-assign,assignment]
        gates._look = lambda targets: cluster.look()  # type: ignore[method-assign]
        login = asyncio.ensure_future(open_when_reachable(gates, [("h", 1)], open_once))
        await asyncio.sleep(0.05)
        login.cancel()  # the login's deadline closed the client connection
        with pytest.raises(asyncio.CancelledError):
            await login
        gates.close()

    run(scenario())
    assert counted == ["unreachable"]


def test_the_gate_remembers_whether_the_cluster_took_the_latest_login() -> None:
    cluster = FakeCluster()
    cluster.up = True

    async def open_once() -> UpstreamProtocol:
        await cluster.look()
        return UpstreamProtocol(None, asyncio.get_running_loop())

    async def scenario() -> list[bool]:
        gates = ClusterGates(UpstreamLink(None, None, 1.0), backoff=FAST)
        targets = [("127.0.0.1", 1)]
        gate = gates.gate(targets)
        seen = [gate.login_taken]  # nothing tried yet: not known to take it
        await open_when_reachable(gates, targets, open_once)
        seen.append(gate.login_taken)
        cluster.refuses = True
        with pytest.raises(UpstreamLoginError):
            await open_when_reachable(gates, targets, open_once)
        seen.append(gate.login_taken)
        cluster.refuses = False
        await open_when_reachable(gates, targets, open_once)
        seen.append(gate.login_taken)
        cluster.up = False
        with pytest.raises(UpstreamUnavailable):
            # A login already told its verdict does not wait for the cluster.
            await open_when_reachable(gates, targets, open_once, may_wait=lambda: False)
        seen.append(gate.login_taken)
        gates.close()
        return seen

    assert run(scenario()) == [False, True, False, True, False]


def test_a_look_that_logs_in_marks_the_login_taken_and_a_refused_one_does_not() -> None:
    cluster = FakeCluster()

    async def scenario() -> tuple[bool, bool]:
        gate = ClusterGate("the cluster", cluster.look, backoff=FAST)
        cluster.refuses = True
        gate.failed("refused")
        await asyncio.wait_for(gate.wait_reached(), 2)
        refused = gate.login_taken
        cluster.refuses, cluster.up = False, True
        gate.failed("refused")
        await asyncio.wait_for(gate.wait_reached(), 2)
        gate.close()
        return refused, gate.login_taken

    assert run(scenario()) == (False, True)
