"""``Backoff`` spaces the looks at an unreachable cluster as Kafka's clients
space their reconnections (``ExponentialBackoff``), and ``Reachability`` says
when the cluster's state changes, once per change."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sasl_scram.frontdoor import Backoff
from sasl_scram.frontdoor import Reachability


def test_the_back_off_doubles_from_kafkas_reconnect_backoff_to_its_max() -> None:
    backoff = Backoff()  # reconnect.backoff.ms=50, reconnect.backoff.max.ms=1000
    middle = 0.5  # a draw with no jitter either way
    assert [backoff.delay(n, middle) for n in range(6)] == pytest.approx(
        [0.05, 0.1, 0.2, 0.4, 0.8, 1.0]
    )
    assert backoff.delay(10_000, middle) == 1.0  # no overflow in a long outage


@given(st.integers(0, 200), st.floats(0, 1, exclude_max=True))
def test_the_jitter_is_20_percent_either_side_and_the_max_holds(attempts: int, draw: float) -> None:
    backoff = Backoff()
    term = min(0.05 * 2 ** min(attempts, 64), 1.0)
    delay = backoff.delay(attempts, draw)
    assert delay <= 1.0
    assert term * 0.8 - 1e-12 <= delay <= term * 1.2 + 1e-12


def test_a_change_is_news_once() -> None:
    state = Reachability()
    assert state.reachable and state.failures == 0
    assert state.failed(10.0, "refused") is True
    assert state.failed(11.0, "no answer within 30 s") is False
    assert (state.reachable, state.failures, state.problem) == (False, 2, "no answer within 30 s")
    assert state.down_since == 10.0
    assert state.reached() is True
    assert state.reached() is False
    assert (state.reachable, state.failures, state.problem, state.down_since) == (
        True,
        0,
        None,
        None,
    )


def test_the_next_look_grows_with_the_failures_in_a_row() -> None:
    state = Reachability(Backoff(initial_s=0.1, max_s=0.5, jitter=0.0))
    looks = []
    for _ in range(5):
        state.failed(0.0, "refused")
        looks.append(state.next_look(0.3))
    assert looks == pytest.approx([0.1, 0.2, 0.4, 0.5, 0.5])
    state.reached()
    state.failed(1.0, "refused")
    assert state.next_look(0.3) == pytest.approx(0.1)
