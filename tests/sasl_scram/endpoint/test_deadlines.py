"""Authentication and idle deadlines on one timer (Kafka's idle-expiry shape)."""

from __future__ import annotations

import asyncio
import socket
import time
from typing import Any

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram.admin import KafkaConnection, KafkaConnectionError, SaslCredentials
from sasl_scram.endpoint._deadlines import ConnectionDeadlines
from tests.endpoint_harness import ALICE, RunningEndpoint


class Recorder:
    def __init__(self, busy: set[str] | None = None) -> None:
        self.auth_timeouts: list[str] = []
        self.idle: list[str] = []
        self.busy = busy or set()

    def on_auth_timeout(self, conn: str) -> None:
        self.auth_timeouts.append(conn)

    def on_idle(self, conn: str) -> bool:
        if conn in self.busy:
            return False
        self.idle.append(conn)
        return True


def make(
    loop: asyncio.AbstractEventLoop, rec: Recorder, auth: float = 0.05, idle: float = 0.05
) -> ConnectionDeadlines[str]:
    return ConnectionDeadlines(loop, auth, idle, rec.on_auth_timeout, rec.on_idle)


def test_connections_that_do_not_authenticate_time_out_in_order() -> None:
    async def scenario() -> tuple[list[str], Recorder]:
        rec = Recorder()
        deadlines = make(asyncio.get_running_loop(), rec, auth=0.2, idle=0.2)
        start = time.monotonic()
        deadlines.connected("a", time.monotonic())  # deadline at about 0.20 s
        await asyncio.sleep(0.12)
        deadlines.connected("b", time.monotonic())  # 0.32 s
        await asyncio.sleep(0.12)
        deadlines.connected("c", time.monotonic())  # 0.44 s
        deadlines.authenticated("b", time.monotonic())
        await asyncio.sleep(max(0.0, 0.30 - (time.monotonic() - start)))
        early = list(rec.auth_timeouts)
        await asyncio.sleep(0.6)
        deadlines.close()
        return early, rec

    early, rec = asyncio.run(scenario())
    assert early == ["a"]  # a's deadline passed first; c's had not yet
    assert rec.auth_timeouts == ["a", "c"]  # b authenticated in time
    assert rec.idle == ["b"]  # and then stayed quiet past the idle timeout


def test_activity_keeps_a_connection_and_busy_counts_as_activity() -> None:
    async def scenario() -> Recorder:
        rec = Recorder(busy={"busy"})
        deadlines = make(asyncio.get_running_loop(), rec, idle=0.16)
        for name in ("quiet", "chatty", "busy"):
            deadlines.connected(name, time.monotonic())
            deadlines.authenticated(name, time.monotonic())
        for _ in range(10):
            await asyncio.sleep(0.04)
            deadlines.touch("chatty", time.monotonic())
        rec.busy.clear()
        await asyncio.sleep(0.4)
        deadlines.close()
        return rec

    rec = asyncio.run(scenario())
    # quiet expired first; busy only once it was no longer busy; chatty last,
    # after its activity stopped.
    assert rec.idle == ["quiet", "busy", "chatty"]


def test_removed_connections_are_forgotten() -> None:
    async def scenario() -> tuple[Recorder, int]:
        rec = Recorder()
        deadlines = make(asyncio.get_running_loop(), rec)
        deadlines.connected("gone", time.monotonic())
        deadlines.authenticated("also-gone", time.monotonic())
        deadlines.remove("gone")
        deadlines.remove("also-gone")
        await asyncio.sleep(0.12)
        return rec, len(deadlines)

    rec, left = asyncio.run(scenario())
    assert rec.auth_timeouts == [] and rec.idle == [] and left == 0


def test_many_connections_share_one_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    async def scenario() -> tuple[int, Recorder]:
        loop = asyncio.get_running_loop()
        armed = 0
        original = loop.call_later

        def counting(delay: float, callback: Any, *args: Any) -> asyncio.TimerHandle:
            nonlocal armed
            armed += 1
            return original(delay, callback, *args)

        monkeypatch.setattr(loop, "call_later", counting)
        rec = Recorder()
        deadlines = make(loop, rec, auth=0.05, idle=10)
        for i in range(1000):
            now = time.monotonic()
            deadlines.connected(f"c{i}", now)
            if i % 2:
                deadlines.authenticated(f"c{i}", now)
        armed_while_adding = armed
        await asyncio.sleep(0.1)
        deadlines.close()
        return armed_while_adding, rec

    armed_while_adding, rec = asyncio.run(scenario())
    assert armed_while_adding == 1
    assert len(rec.auth_timeouts) == 500 and rec.idle == []


def test_endpoint_closes_idle_connections_and_keeps_active_ones() -> None:
    with RunningEndpoint(properties={"connections.max.idle.ms": "400"}) as ep:
        quiet = KafkaConnection(ep.bootstrap, SaslCredentials(SCRAM_SHA_256, *ALICE))
        active = KafkaConnection(ep.bootstrap, SaslCredentials(SCRAM_SHA_256, *ALICE))
        start = time.monotonic()
        while time.monotonic() - start < 1.2:
            assert active.request(3, {"topics": None})["brokers"]
            time.sleep(0.1)
        # The active one is older than the idle limit and still served.
        assert active.request(3, {"topics": None})["brokers"]
        with pytest.raises(KafkaConnectionError):
            quiet.request(3, {"topics": None})
        quiet.close()
        active.close()


def test_endpoint_closes_a_connection_that_never_authenticates() -> None:
    with (
        RunningEndpoint(properties={"scram.authentication.timeout.ms": "200"}) as ep,
        socket.create_connection((ep.host, ep.port), timeout=5) as s,
    ):
        start = time.monotonic()
        assert s.recv(1) == b""
        assert 0.15 < time.monotonic() - start < 3
