"""ListenerSet: per-key and batched notification, failure isolation."""

from __future__ import annotations

import pytest

from sasl_scram.store._listeners import ListenerSet


class Batched:
    def __init__(self) -> None:
        self.single: list[str] = []
        self.batches: list[list[str]] = []

    def __call__(self, key: str) -> None:
        self.single.append(key)

    def many(self, keys: list[str]) -> None:
        self.batches.append(keys)


def test_batch_listener_gets_one_call_per_batch() -> None:
    listeners = ListenerSet()
    batched, plain = Batched(), list[str]()
    listeners.add(batched)
    listeners.add(plain.append)
    listeners.notify(["a", "b", "c"])
    listeners.notify(["d"])
    assert batched.batches == [["a", "b", "c"]] and batched.single == ["d"]
    assert plain == ["a", "b", "c", "d"]


def test_a_failing_listener_never_stops_the_others(caplog: pytest.LogCaptureFixture) -> None:
    listeners = ListenerSet()
    seen: list[str] = []

    def boom(key: str) -> None:
        raise RuntimeError("listener bug")

    remove = listeners.add(boom)
    listeners.add(seen.append)
    listeners.notify(["x", "y"])
    assert seen == ["x", "y"]
    assert caplog.text.count("credential change listener failed") == 2
    remove()
    remove()  # idempotent
    listeners.notify(["z"])
    assert seen == ["x", "y", "z"]
