"""A failed login's SaslAuthenticate response leaves only when its delayed close fires.

Kafka holds the response to a failed SaslAuthenticate back together with the
close, for ``connection.failed.authentication.delay.ms`` (KIP-306: ``Selector``
keeps the channel in its delayed-close queue, and only when that fires does
``KafkaChannel.completeCloseOnAuthenticationFailure`` send the response, then
close). A sequential guesser therefore waits the whole delay per guess.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram import ScramClient
from tests.sasl_scram.endpoint.serve_process import SASL_AUTHENTICATE
from tests.sasl_scram.endpoint.serve_process import Peer
from tests.support.endpoint_harness import ADMIN
from tests.support.endpoint_harness import ALICE
from tests.support.endpoint_harness import RunningEndpoint

DELAY_MS = 400


@pytest.fixture
def delayed() -> Iterator[RunningEndpoint]:
    with RunningEndpoint(
        properties={"connection.failed.authentication.delay.ms": str(DELAY_MS)}
    ) as ep:
        yield ep


def _wrong_final(peer: Peer, user: str = ALICE[0]) -> bytes:
    client = ScramClient(SCRAM_SHA_256, user, "wrong-password")
    return client.receive_server_first(peer.server_first(client.client_first()))


def test_the_failure_response_arrives_no_earlier_than_the_delay(
    delayed: RunningEndpoint,
) -> None:
    with Peer(delayed.port) as peer:
        final = _wrong_final(peer)
        began = time.monotonic()
        answer = peer.call(SASL_AUTHENTICATE, 2, {"auth_bytes": final})
        waited = time.monotonic() - began
        assert answer["error_code"] == 58
        # Generous only upwards: the response may never come early.
        assert waited >= DELAY_MS / 1000 * 0.95, waited
        assert peer.closed()


def test_an_unknown_users_failure_waits_just_as_long(delayed: RunningEndpoint) -> None:
    with Peer(delayed.port) as peer:
        final = _wrong_final(peer, "nobody-here")
        began = time.monotonic()
        answer = peer.call(SASL_AUTHENTICATE, 2, {"auth_bytes": final})
        assert answer["error_code"] == 58
        assert time.monotonic() - began >= DELAY_MS / 1000 * 0.95


def test_a_held_failure_stalls_no_other_login(delayed: RunningEndpoint) -> None:
    with Peer(delayed.port) as guesser, Peer(delayed.port) as honest:
        guesser.send(SASL_AUTHENTICATE, 2, {"auth_bytes": _wrong_final(guesser)})
        began = time.monotonic()
        assert honest.login(*ALICE)["error_code"] == 0
        # Well inside the delay the guesser is still waiting for.
        assert time.monotonic() - began < DELAY_MS / 1000 / 2
        assert guesser.receive(SASL_AUTHENTICATE, 2)["error_code"] == 58


def test_without_a_delay_the_failure_is_answered_at_once() -> None:
    props = {"connection.failed.authentication.delay.ms": "0"}
    with RunningEndpoint(properties=props) as ep, Peer(ep.port) as peer:
        final = _wrong_final(peer)
        began = time.monotonic()
        assert peer.call(SASL_AUTHENTICATE, 2, {"auth_bytes": final})["error_code"] == 58
        assert time.monotonic() - began < 0.3
        assert peer.closed()


def _slowed(ep: RunningEndpoint) -> float:
    metrics = ep.endpoint.metrics
    assert metrics is not None
    (family,) = [f for f in metrics.collect() if f.name == "kafka_scram_slowed_authentication"]
    return float(sum(s.value for s in family.samples if s.name.endswith("_total")))


def test_past_the_budget_a_right_password_waits_like_a_wrong_one() -> None:
    props = {
        "connection.failed.authentication.delay.ms": "300",
        "scram.login.failure.budget": "2",
        "scram.login.failure.budget.interval.ms": "100",
        "scram.metrics.listener": "127.0.0.1:0",
    }
    with RunningEndpoint(properties=props) as ep:
        for _ in range(2):
            with Peer(ep.port) as peer:
                final = _wrong_final(peer)
                assert peer.call(SASL_AUTHENTICATE, 2, {"auth_bytes": final})["error_code"] == 58
        assert _slowed(ep) == 0
        with Peer(ep.port) as peer:
            client = ScramClient(SCRAM_SHA_256, *ALICE)
            final = client.receive_server_first(peer.server_first(client.client_first()))
            began = time.monotonic()
            answer = peer.call(SASL_AUTHENTICATE, 2, {"auth_bytes": final})
            waited = time.monotonic() - began
        assert answer["error_code"] == 0  # slowed, never refused
        assert waited >= 0.3 * 0.95, waited
        assert _slowed(ep) == 1
        # With the budget off, a right password is answered at once.
        props["scram.login.failure.budget"] = "0"
    with RunningEndpoint(properties=props) as ep, Peer(ep.port) as peer:
        began = time.monotonic()
        assert peer.login(*ALICE)["error_code"] == 0
        assert time.monotonic() - began < 0.3


def test_past_the_budget_a_right_password_at_its_users_cap_waits_like_a_wrong_one() -> None:
    """The per-user cap's refusal is the verdict of a right password: past the
    budget it is held for its turn too, or a guesser would hear a right
    password at once (with its own text) while every wrong one waits."""
    props = {
        "connection.failed.authentication.delay.ms": "300",
        "scram.login.failure.budget": "2",
        "scram.login.failure.budget.interval.ms": "100",
        "scram.max.connections.per.user": "1",
        "scram.metrics.listener": "127.0.0.1:0",
    }
    with RunningEndpoint(properties=props) as ep, Peer(ep.port) as holder:
        assert holder.login(*ALICE)["error_code"] == 0  # alice is at her cap
        for _ in range(2):
            _wrong(ep.port, ALICE[0], "127.0.0.2")
        assert _slowed(ep) == 0
        with Peer(ep.port, source="127.0.0.2") as peer:
            client = ScramClient(SCRAM_SHA_256, *ALICE)
            final = client.receive_server_first(peer.server_first(client.client_first()))
            began = time.monotonic()
            answer = peer.call(SASL_AUTHENTICATE, 2, {"auth_bytes": final})
            waited = time.monotonic() - began
        assert answer["error_code"] == 58
        assert "scram.max.connections.per.user" in answer["error_message"]
        assert waited >= 0.3 * 0.95, waited
        assert _slowed(ep) == 1


def _authenticated_connections(ep: RunningEndpoint) -> float:
    """Read on the endpoint's loop: the verdict's bytes can reach the client
    before the loop's callback that wrote them has counted the connection."""
    metrics = ep.endpoint.metrics
    assert metrics is not None

    async def collect() -> float:
        (family,) = [
            f for f in metrics.collect() if f.name == "kafka_scram_authenticated_connections"
        ]
        return float(sum(s.value for s in family.samples))

    return float(ep.call(collect()))


def test_a_success_held_past_the_budget_is_no_authenticated_connection_yet() -> None:
    """The client has not heard it, and may time out before it does: the gauge
    counts the connection once its verdict goes out."""
    props = {
        "connection.failed.authentication.delay.ms": "600",
        "scram.login.failure.budget": "1",
        "scram.metrics.listener": "127.0.0.1:0",
    }
    with RunningEndpoint(properties=props) as ep:
        _wrong(ep.port, ALICE[0], "127.0.0.1")
        with Peer(ep.port) as peer:
            client = ScramClient(SCRAM_SHA_256, *ALICE)
            final = client.receive_server_first(peer.server_first(client.client_first()))
            peer.send(SASL_AUTHENTICATE, 2, {"auth_bytes": final})
            time.sleep(0.2)  # the verdict is held for 600 ms
            during = _authenticated_connections(ep)
            assert peer.receive(SASL_AUTHENTICATE, 2)["error_code"] == 0
            after = _authenticated_connections(ep)
    assert (during, after) == (0, 1)


class _SlowFailureLine(logging.Filter):
    """Holds the failed-login line back: a response written before the line is
    logged then reaches the client first, every time, not only under load."""

    def filter(self, record: logging.LogRecord) -> bool:
        if "Failed authentication with" in record.getMessage():
            time.sleep(0.3)
        return True


def test_the_failure_is_logged_before_its_response_leaves(
    delayed: RunningEndpoint, caplog: pytest.LogCaptureFixture
) -> None:
    """An operator, or a test, that hears the refusal finds its line in the log."""
    caplog.set_level(logging.INFO, logger="sasl_scram.endpoint")
    endpoint_log = logging.getLogger("sasl_scram.endpoint")
    slow = _SlowFailureLine()
    endpoint_log.addFilter(slow)
    try:
        with Peer(delayed.port) as peer:
            answer = peer.call(SASL_AUTHENTICATE, 2, {"auth_bytes": _wrong_final(peer)})
            lines = [m for m in caplog.messages if "Failed authentication with" in m]
    finally:
        endpoint_log.removeFilter(slow)
    assert answer["error_code"] == 58
    assert len(lines) == 1, caplog.messages


# A name and an address past their own, higher thresholds (docs/security.md):
# the pair's budget is 2 here, the name's and the address's 4, so that four
# failures of one failure each reach them while every pair stays within its own.
WIDE = {
    "connection.failed.authentication.delay.ms": "300",
    "scram.login.failure.budget": "2",
    "scram.login.failure.budget.per.user": "4",
    "scram.login.failure.budget.per.address": "4",
    "scram.login.failure.budget.interval.ms": "100",
    "scram.metrics.listener": "127.0.0.1:0",
}


def _timed_login(port: int, user: tuple[str, str], source: str) -> float:
    """A right password's login from ``source``: the seconds its verdict took."""
    with Peer(port, source=source) as peer:
        client = ScramClient(SCRAM_SHA_256, *user)
        final = client.receive_server_first(peer.server_first(client.client_first()))
        began = time.monotonic()
        answer = peer.call(SASL_AUTHENTICATE, 2, {"auth_bytes": final})
        waited = time.monotonic() - began
    assert answer["error_code"] == 0  # slowed, never refused
    return waited


def _wrong(port: int, user: str, source: str) -> None:
    with Peer(port, source=source) as peer:
        final = _wrong_final(peer, user)
        assert peer.call(SASL_AUTHENTICATE, 2, {"auth_bytes": final})["error_code"] == 58


def test_an_address_spraying_names_is_paced_for_every_name_from_it() -> None:
    with RunningEndpoint(properties=WIDE) as ep:
        for i in range(4):
            _wrong(ep.port, f"sprayed-{i}", "127.0.0.1")
        assert _slowed(ep) == 0
        # Alice never failed, but the address sprayed: her verdict waits there...
        assert _timed_login(ep.port, ALICE, "127.0.0.1") >= 0.3 * 0.95
        assert _slowed(ep) == 1
        # ... and not from another address.
        assert _timed_login(ep.port, ALICE, "127.0.0.2") < 0.3
        assert _slowed(ep) == 1


def test_a_name_guessed_from_many_addresses_is_paced_at_every_address() -> None:
    with RunningEndpoint(properties=WIDE) as ep:
        for i in range(4):
            _wrong(ep.port, ALICE[0], f"127.0.0.{i + 1}")
        assert _slowed(ep) == 0
        # Alice's name waits at an address that never failed...
        assert _timed_login(ep.port, ALICE, "127.0.0.9") >= 0.3 * 0.95
        assert _slowed(ep) == 1
        # ... another name at the addresses that guessed does not.
        assert _timed_login(ep.port, ADMIN, "127.0.0.1") < 0.3
        assert _slowed(ep) == 1


def test_a_threshold_one_guesser_reaches_alone_is_warned(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="sasl_scram.endpoint")
    with RunningEndpoint(properties=WIDE):
        pass
    lines = [m for m in caplog.messages if "would slow that" in m]
    assert len(lines) == 2, caplog.messages
    assert "scram.login.failure.budget.per.user=4" in lines[0] and "set it above" in lines[0]
    caplog.clear()
    with RunningEndpoint():  # the defaults: far above what one pair reaches
        pass
    assert not [m for m in caplog.messages if "would slow that" in m]
