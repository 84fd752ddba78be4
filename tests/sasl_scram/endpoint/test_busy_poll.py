"""``scram.busy.poll.us``: the loop spins for the window after network activity, then sleeps."""

from __future__ import annotations

import asyncio
import time

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import KafkaConnectionError
from sasl_scram.admin import SaslCredentials
from sasl_scram.endpoint import EndpointConfig
from sasl_scram.endpoint.login._busy_poll import BusyPoller
from tests.support.endpoint_harness import ALICE
from tests.support.endpoint_harness import RunningEndpoint


def test_config_default_is_off_and_value_is_read() -> None:
    base = {"scram.credential.store.path": "x.db"}
    assert EndpointConfig.from_properties(base).busy_poll_us == 0
    assert EndpointConfig.from_properties({**base, "scram.busy.poll.us": "250"}).busy_poll_us == 250


def test_poller_stops_once_the_window_closes() -> None:
    async def scenario() -> tuple[bool, bool]:
        poller = BusyPoller(asyncio.get_running_loop(), 0.02)
        poller.poke(time.monotonic())
        active_at_start = poller.active
        await asyncio.sleep(0.1)
        return active_at_start, poller.active

    active_at_start, active_later = asyncio.run(scenario())
    assert active_at_start
    assert not active_later  # 20 ms passed without another poke


def cpu_while_sleeping(window: float, sleep: float) -> float:
    """CPU seconds this process burns while its loop has nothing to do but sleep."""

    async def scenario() -> float:
        poller = BusyPoller(asyncio.get_running_loop(), window)
        start = time.process_time()
        poller.poke(time.monotonic())
        await asyncio.sleep(sleep)
        return time.process_time() - start

    return asyncio.run(scenario())


def test_poller_keeps_the_loop_awake_only_during_the_window() -> None:
    # Spinning: the loop polls with a zero timeout instead of sleeping, so the
    # window shows up as CPU time; a 1 ms window then leaves it asleep. The
    # bounds hold with the other xdist worker and other programs sharing the
    # two cores: a spinning process gets well over a tenth of 150 ms of CPU,
    # a sleeping one about a millisecond.
    assert cpu_while_sleeping(0.15, 0.2) > 0.015
    assert cpu_while_sleeping(0.001, 0.2) < 0.01


def test_poller_rejects_a_non_positive_window() -> None:
    with pytest.raises(ValueError, match="must be positive"):
        BusyPoller(asyncio.new_event_loop(), 0)


def test_endpoint_with_busy_polling_authenticates_and_goes_quiet() -> None:
    with RunningEndpoint(properties={"scram.busy.poll.us": "2000"}) as ep:
        poller = ep.endpoint.busy_poller
        assert poller is not None
        for _ in range(3):
            KafkaConnection(
                ep.bootstrap, SaslCredentials(SCRAM_SHA_256, ALICE[0], ALICE[1])
            ).close()
        deadline = time.monotonic() + 5
        while poller.active and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not poller.active  # idle again: no CPU burnt between bursts


def test_endpoint_without_busy_polling_has_no_poller() -> None:
    with RunningEndpoint() as ep:
        KafkaConnection(ep.bootstrap, SaslCredentials(SCRAM_SHA_256, *ALICE)).close()
        assert ep.endpoint.busy_poller is None


def test_busy_polling_endpoint_with_a_lazy_zookeeper_store(zookeeper_hosts: str) -> None:
    """Lookups that read ZooKeeper run in a thread and kazoo has threads of its
    own: they must still get the interpreter while the loop spins."""
    from sasl_scram.store import ScramUpsertion
    from sasl_scram.store import ZooKeeperCredentialStore
    from tests.support.endpoint_harness import seed_users

    writer = ZooKeeperCredentialStore(zookeeper_hosts)
    seed_users(writer)
    store = ZooKeeperCredentialStore(zookeeper_hosts, mode="lazy")
    try:
        with RunningEndpoint(store=store, properties={"scram.busy.poll.us": "5000"}) as ep:
            for _ in range(20):
                KafkaConnection(ep.bootstrap, SaslCredentials(SCRAM_SHA_256, *ALICE)).close()
            # A change made by another process reaches the spinning endpoint.
            writer.alter([], [ScramUpsertion.from_password("alice", SCRAM_SHA_256, "new-pw")])
            deadline = time.monotonic() + 10
            while True:
                try:
                    KafkaConnection(
                        ep.bootstrap, SaslCredentials(SCRAM_SHA_256, "alice", "new-pw")
                    ).close()
                    break
                except KafkaConnectionError:
                    assert time.monotonic() < deadline, "the new password never took effect"
                    time.sleep(0.05)
            with pytest.raises(KafkaConnectionError, match="invalid credentials"):
                KafkaConnection(ep.bootstrap, SaslCredentials(SCRAM_SHA_256, *ALICE))
    finally:
        store.close()
        writer.close()
