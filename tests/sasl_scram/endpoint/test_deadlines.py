"""Authentication and idle deadlines on one alarm (Kafka's idle-expiry shape), kept
off the event loop."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import KafkaConnectionError
from sasl_scram.admin import SaslCredentials
from sasl_scram.endpoint.login._deadlines import ConnectionDeadlines
from sasl_scram.endpoint.login._deadlines import ThreadAlarm
from tests.sasl_scram.endpoint.serve_process import Serve
from tests.sasl_scram.endpoint.serve_process import seed
from tests.support.endpoint_harness import ALICE
from tests.support.endpoint_harness import RunningEndpoint


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


class CountingAlarm:
    """A ThreadAlarm that counts how often it is set."""

    def __init__(self, loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> None:
        self.sets = 0
        self._alarm = ThreadAlarm(loop, callback)

    def set(self, delay_s: float) -> None:
        self.sets += 1
        self._alarm.set(delay_s)

    def close(self) -> None:
        self._alarm.close()


def test_many_connections_share_one_alarm_and_the_loop_keeps_no_timer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def scenario() -> tuple[int, int, Recorder]:
        loop = asyncio.get_running_loop()
        on_loop = 0
        original = loop.call_later

        def counting(delay: float, callback: Any, *args: Any) -> asyncio.TimerHandle:
            nonlocal on_loop
            on_loop += 1
            return original(delay, callback, *args)

        monkeypatch.setattr(loop, "call_later", counting)
        alarms: list[CountingAlarm] = []

        def alarm(callback: Callable[[], None]) -> CountingAlarm:
            alarms.append(CountingAlarm(loop, callback))
            return alarms[-1]

        rec = Recorder()
        deadlines = ConnectionDeadlines(
            loop, 0.05, 10, rec.on_auth_timeout, rec.on_idle, alarm=alarm
        )
        for i in range(1000):
            now = time.monotonic()
            deadlines.connected(f"c{i}", now)
            if i % 2:
                deadlines.authenticated(f"c{i}", now)
        set_while_adding, on_loop_while_adding = alarms[0].sets, on_loop
        await asyncio.sleep(0.1)
        deadlines.close()
        return set_while_adding, on_loop_while_adding, rec

    set_while_adding, on_loop, rec = asyncio.run(scenario())
    assert set_while_adding == 1
    # The alarm waits in its own thread: the deadlines put no timer on the loop.
    assert on_loop == 0
    assert len(rec.auth_timeouts) == 500 and rec.idle == []


def test_thread_alarm_fires_on_the_loop_and_the_last_setting_wins() -> None:
    async def scenario() -> tuple[list[tuple[float, bool]], float]:
        loop = asyncio.get_running_loop()
        fired: list[tuple[float, bool]] = []
        start = time.monotonic()

        def callback() -> None:
            on_loop = asyncio.get_running_loop() is loop
            fired.append((time.monotonic() - start, on_loop))

        alarm = ThreadAlarm(loop, callback)
        alarm.set(0.3)
        alarm.set(0.05)  # brought forward
        await asyncio.sleep(0.2)
        alarm.set(0.4)
        alarm.set(0.1)  # brought forward again, to 0.3 s from the start
        await asyncio.sleep(0.4)
        alarm.close()
        alarm.set(0.01)  # closed: never fires
        await asyncio.sleep(0.1)
        return fired, time.monotonic() - start

    fired, _ = asyncio.run(scenario())
    assert len(fired) == 2, fired
    (first, first_on_loop), (second, second_on_loop) = fired
    assert first_on_loop and second_on_loop
    assert 0.04 < first < 0.2
    assert 0.29 < second < 0.5


def test_thread_alarm_postponed_does_not_fire_early() -> None:
    async def scenario() -> list[float]:
        loop = asyncio.get_running_loop()
        fired: list[float] = []
        start = time.monotonic()
        alarm = ThreadAlarm(loop, lambda: fired.append(time.monotonic() - start))
        alarm.set(0.05)
        alarm.set(0.3)  # pushed back before it fired
        await asyncio.sleep(0.2)
        early = list(fired)
        await asyncio.sleep(0.3)
        alarm.close()
        assert early == []
        return fired

    fired = asyncio.run(scenario())
    assert len(fired) == 1 and 0.29 < fired[0] < 0.5


def test_thread_alarm_on_a_closed_loop_ends_its_thread() -> None:
    loop = asyncio.new_event_loop()
    alarm = ThreadAlarm(loop, lambda: None, name="alarm-under-test")
    loop.close()
    alarm.set(0.0)
    deadline = time.monotonic() + 5
    while any(t.name == "alarm-under-test" for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the alarm's thread outlived its loop"
        time.sleep(0.01)
    alarm.close()


def test_thread_alarm_starts_a_new_thread_if_its_thread_ended(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop = asyncio.new_event_loop()
    original = loop.call_soon_threadsafe
    refused: list[bool] = []

    def refuse_once(callback: Callable[[], None]) -> asyncio.Handle:
        if not refused:  # as a closed loop does
            refused.append(True)
            raise RuntimeError("Event loop is closed")
        return original(callback)

    monkeypatch.setattr(loop, "call_soon_threadsafe", refuse_once)
    fired: list[bool] = []
    alarm = ThreadAlarm(loop, lambda: fired.append(True), name="alarm-restarted")
    try:
        alarm.set(0.0)  # refused: the thread ends
        deadline = time.monotonic() + 5
        while any(t.name == "alarm-restarted" for t in threading.enumerate()):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        alarm.set(0.0)  # a new thread, and this time the loop takes it
        loop.run_until_complete(asyncio.sleep(0.2))
        assert fired == [True] and refused == [True]
    finally:
        alarm.close()
        loop.close()


def test_endpoint_loop_holds_no_timer_while_connections_wait() -> None:
    """Deadlines live in the alarm's thread: with a login done and a connection
    waiting to authenticate, the endpoint's loop has nothing scheduled, so it
    sleeps without a timeout."""
    with (
        RunningEndpoint(properties={"connections.max.idle.ms": "60000"}) as ep,
        socket.create_connection((ep.host, ep.port), timeout=5) as waiting,
    ):
        logged_in = KafkaConnection(ep.bootstrap, SaslCredentials(SCRAM_SHA_256, *ALICE))
        assert logged_in.request(3, {"topics": None})["brokers"]
        assert ep.connection_count() == 2

        async def scheduled() -> int:
            timers = getattr(asyncio.get_running_loop(), "_scheduled")  # noqa: B009
            return sum(1 for handle in timers if not handle.cancelled())

        assert ep.call(scheduled()) == 0
        assert waiting.fileno() >= 0
        logged_in.close()


@pytest.mark.slow
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


@pytest.mark.slow
def test_serve_on_uvloop_closes_unauthenticated_and_idle_connections(tmp_path: Path) -> None:
    """The real ``kafka-scram serve`` process, on uvloop (whose call_soon_threadsafe
    the alarm thread uses), enforces both deadlines."""
    db = tmp_path / "data" / "creds.db"
    seed(db)
    props = {
        # Explicit: serve refuses to start if uvloop cannot be used.
        "scram.event.loop": "uvloop",
        "scram.authentication.timeout.ms": "300",
        "connections.max.idle.ms": "600",
    }
    with Serve(tmp_path, db, props) as serve:
        with socket.create_connection(("127.0.0.1", serve.port), timeout=5) as silent:
            start = time.monotonic()
            assert silent.recv(1) == b""
            assert 0.25 < time.monotonic() - start < 3
        idle = KafkaConnection(serve.bootstrap, SaslCredentials(SCRAM_SHA_256, *ALICE))
        assert idle.request(3, {"topics": None})["brokers"]
        time.sleep(1.5)
        with pytest.raises(KafkaConnectionError):
            idle.request(3, {"topics": None})
        idle.close()
