"""A rotation's leftovers in Spark's JVM, with fakes (no Spark).

The supervisor closes the idle Kafka clients Spark keeps with a token before
it expires that token, and stops a query between micro-batches.
test_example_output.py shows both on the real thing.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.clock import T0
from tests.support.clock import FakeClock
from tokenauth.spark import SupervisorPolicy
from tokenauth.spark import SupervisorState
from tokenauth.spark import TokenSupervisor
from tokenauth.spark import _jvm_login
from tokenauth.spark import _supervisor
from tokenauth.spark._jvm_clients import close_idle_clients
from tokenauth.spark._jvm_login import stop_between_batches

from .fake_jvm import FakeConsumerPool
from .fake_jvm import FakeJvm
from .fake_jvm import FakeQuery
from .fakes import FakeBroker
from .fakes import FakeSpark


def test_clients_of_a_token_are_released_before_it_is_expired(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock.epoch_ms()
    broker = FakeBroker(clock)
    spark = FakeSpark()
    released: list[tuple[list[str], list[str], object]] = []

    def release(query: object, token_ids: Iterable[str]) -> int:
        released.append((list(token_ids), list(broker.expired), query))
        return 0

    monkeypatch.setattr(_jvm_login, "close_idle_clients", release)
    sup = TokenSupervisor(
        broker.connect,
        spark.start,
        bootstrap_servers="broker:9093",
        policy=SupervisorPolicy(),
        clock_ms=clock,
    )
    sup.start(background=False)
    first = sup.token_id
    while sup.token_id == first:  # renewals, then the rotation (as run() drives step())
        clock.now = max(sup.step(), clock() + 1)
    second = sup.token_id
    assert first != second and broker.expired == [first]
    # Released while not yet expired, with the query that runs now (same JVM).
    assert released == [([first], [], spark.queries[1])]
    sup.stop()
    assert released[1] == ([second], [first], spark.queries[1])
    assert broker.expired == [first, second]


def test_a_rotation_waits_for_the_batch_up_to_half_the_old_tokens_remaining_life(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The first batch of a fresh JVM can take seconds; the old token stays
    # valid for the whole wait, and the new run logs in with the new one.
    clock = FakeClock.epoch_ms()
    broker = FakeBroker(clock)
    waits: list[tuple[float, float]] = []

    def stop(query: Any, wait_s: float = 5.0, stopping: Any = None) -> None:
        [old] = [i for i in broker.tokens.values() if i.token_id == first]
        waits.append((wait_s, (old.expiry_timestamp_ms - clock()) / 1000))
        query.stop()

    monkeypatch.setattr(_supervisor, "stop_between_batches", stop)
    sup = TokenSupervisor(
        broker.connect,
        FakeSpark().start,
        bootstrap_servers="broker:9093",
        policy=SupervisorPolicy(),
        clock_ms=clock,
    )
    sup.start(background=False)
    first = sup.token_id
    while sup.token_id == first:
        clock.now = max(sup.step(), clock() + 1)
    [(wait_s, remaining_s)] = waits
    assert remaining_s > 0 and wait_s == pytest.approx(remaining_s / 2)
    sup.stop()


class StatusQuery:
    """A query whose ``status`` reports the given trigger states, then idle."""

    def __init__(self, active: Iterable[bool]) -> None:
        self._active: Iterator[bool] = iter(active)
        self.looks = 0
        self.stopped_at_look: int | None = None

    @property
    def status(self) -> dict[str, Any]:
        self.looks += 1
        return {"isTriggerActive": next(self._active, False), "message": ""}

    def stop(self) -> None:
        self.stopped_at_look = self.looks


def test_a_stop_waits_for_the_running_batch_to_end() -> None:
    query = StatusQuery([True, True, True, False])
    stop_between_batches(query, wait_s=10)  # type: ignore[arg-type]
    assert query.stopped_at_look == 4


def test_an_idle_query_stops_right_after_its_next_batch() -> None:
    # Found idle, it may be about to start a batch: the stop waits for one to end.
    query = StatusQuery([False, False, True, False])
    stop_between_batches(query, wait_s=10)  # type: ignore[arg-type]
    assert query.stopped_at_look == 4


def test_a_batch_outlasting_the_wait_is_interrupted() -> None:
    query = StatusQuery(iter(lambda: True, False))
    stop_between_batches(query, wait_s=0.1)  # type: ignore[arg-type]
    assert query.stopped_at_look is not None and query.looks >= 2


def test_a_query_without_status_stops_at_once() -> None:
    class Plain:
        stops = 0

        def stop(self) -> None:
            self.stops += 1

    query = Plain()
    stop_between_batches(query, wait_s=10)  # type: ignore[arg-type]
    assert query.stops == 1


def test_without_a_jvm_nothing_is_closed() -> None:
    assert close_idle_clients(object(), ["token-id"]) == 0

    class BrokenJvm:
        _jsq = object()  # no getClass(): Spark's internals are not there

    assert close_idle_clients(BrokenJvm(), ["token-id"]) == 0


def _token_jaas(token_id: str) -> str:
    return (
        f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{token_id}";'
    )


def test_idle_consumers_of_the_token_are_closed_and_others_kept() -> None:
    pool = FakeConsumerPool({"old-run": _token_jaas("old"), "new-run": _token_jaas("new")})
    pool.idle.update({"old-run": 2, "new-run": 1})
    assert close_idle_clients(FakeQuery(FakeJvm(pool)), ["old"]) == 2
    assert pool.closed == {"old-run": 2, "new-run": 0}
    assert pool.idle == {"old-run": 0, "new-run": 1}


def test_a_consumer_still_borrowed_is_closed_once_its_task_returns_it() -> None:
    # A stop cancels the run's tasks, but a task in a Kafka poll ends (and
    # returns its consumer to the pool) a little later. Closed before that, it
    # would sit idle until the JVM's shutdown, then close with an expired token.
    pool = FakeConsumerPool({"run": _token_jaas("tok")})
    pool.idle["run"], pool.borrowed["run"] = 1, 1
    task_end = threading.Timer(0.3, pool.give_back, args=("run",))
    task_end.start()
    try:
        assert close_idle_clients(FakeQuery(FakeJvm(pool)), ["tok"]) == 2
    finally:
        task_end.cancel()
    assert pool.closed == {"run": 2} and pool.borrowed == {"run": 0}


def test_a_consumer_never_returned_is_waited_for_a_bounded_time(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pool = FakeConsumerPool({"run": _token_jaas("tok")})
    pool.idle["run"], pool.borrowed["run"] = 1, 1
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="tokenauth.spark"):
        assert close_idle_clients(FakeQuery(FakeJvm(pool)), ["tok"], wait_s=0.3) == 1
    assert 0.3 <= time.monotonic() - started < 5
    assert pool.closed == {"run": 1}
    assert [r.getMessage() for r in caplog.records] == [
        "1 Kafka client of Spark's pools still in use 0.3 s after the query stopped; "
        "it closes later, and its close may log a failed re-authentication"
    ]


def test_a_stop_asked_during_a_rotations_wait_for_the_batch_ends_it() -> None:
    # An idle query with a long trigger interval keeps the rotation waiting
    # (here 10 s, half the old token's remaining life); stop() must not wait
    # that long, nor start a run with the new token only to stop it.
    clock = FakeClock.epoch_ms()
    broker = FakeBroker(clock, expiry_ms=200_000, max_lifetime_ms=240_000)
    spark = FakeSpark()
    sup = TokenSupervisor(
        broker.connect, spark.start, bootstrap_servers="broker:9093", clock_ms=clock
    )
    sup.start(background=False)
    spark.queries[0].status = {"isTriggerActive": False}  # type: ignore[attr-defined]
    clock.now = T0 + 180_000
    rotating = threading.Thread(target=sup.step)
    rotating.start()
    time.sleep(0.3)
    started = time.monotonic()
    sup.stop()
    assert time.monotonic() - started < 3
    rotating.join(5)
    assert not rotating.is_alive()
    assert sup.state is SupervisorState.STOPPED and broker.live_ids() == set()
    assert len(spark.queries) == 1 and not spark.queries[0].isActive
