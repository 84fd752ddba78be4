"""The front door's own threads for the cluster's RPCs (``_cluster_pool.py``):
``upstream.identity=owner-token``'s token RPCs on a small bounded pool of
their own, never on asyncio's default pool, which credential look-ups, the
KIP-554 handlers and the edge's token RPCs use.

The cluster is a fake issuer whose every create for an edge user blocks until
the test ends: a cluster that never answers.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from sasl_scram.endpoint.proxy import _owner_identity
from sasl_scram.endpoint.proxy._cluster_pool import CLUSTER_THREADS
from sasl_scram.endpoint.proxy._cluster_pool import MAX_PENDING_CALLS
from sasl_scram.endpoint.proxy._cluster_pool import ClusterBusy
from sasl_scram.endpoint.proxy._cluster_pool import ClusterPool
from sasl_scram.endpoint.proxy._owner_identity import OwnerIdentity
from sasl_scram.endpoint.proxy._upstream import UpstreamUnavailable
from sasl_scram.frontdoor import CHECK_OWNER
from sasl_scram.frontdoor import IssuedToken
from sasl_scram.frontdoor import UpstreamConfig
from sasl_scram.frontdoor import read_upstream
from tests.support.polling import wait_until

DAY_MS = 86_400_000
# Longer than any answer that comes at once, even on a loaded 2-core machine.
PROMPT = 2.0


class FrozenIssuer:
    """A cluster that issues the start-up check's token, then never answers:
    every other create blocks until :attr:`thaw` is set."""

    def __init__(self) -> None:
        self.thaw = threading.Event()
        self.lock = threading.Lock()
        self.threads: set[str] = set()  # the threads the RPCs ran on
        self.blocked = 0
        self.created = 0

    def create(self, owner: str) -> IssuedToken:
        with self.lock:
            self.threads.add(threading.current_thread().name)
            self.blocked += owner != CHECK_OWNER
        if owner != CHECK_OWNER:
            assert self.thaw.wait(60), "never thawed"
        with self.lock:
            self.created += 1
            n = self.created
        now = _now_ms()
        return IssuedToken(f"token-{n}", b"hmac-%d" % n, now + DAY_MS, now + 7 * DAY_MS)

    def renew(self, hmac: bytes) -> int:
        return _now_ms() + DAY_MS

    def expire(self, hmac: bytes) -> None:
        pass

    def close(self) -> None:
        pass


def _now_ms() -> int:
    return int(time.time() * 1000)


def _upstream() -> UpstreamConfig:
    config = read_upstream(
        {
            "upstream.bootstrap.servers": "127.0.0.1:9",
            "upstream.identity": "owner-token",
            "upstream.security.protocol": "SASL_PLAINTEXT",
            "upstream.sasl.mechanism": "SCRAM-SHA-256",
            "upstream.sasl.jaas.config": (
                "org.apache.kafka.common.security.scram.ScramLoginModule required "
                'username="svc" password="svc-secret";'
            ),
        },
        9092,
    )
    assert config is not None
    return config


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> Iterator[FrozenIssuer]:
    """The owner tokens' issuer is a frozen cluster; thawed at the end, so no
    thread outlives the test."""
    issuer = FrozenIssuer()
    monkeypatch.setattr(_owner_identity, "ClusterTokenIssuer", lambda *a, **k: issuer)
    try:
        yield issuer
    finally:
        issuer.thaw.set()


async def _until(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


def test_a_frozen_cluster_holds_none_of_the_default_pools_threads(frozen: FrozenIssuer) -> None:
    """Eight edge users log in at once, each needing a token from a cluster that
    never answers, on a process whose default pool has two threads: that pool
    still runs a credential look-up's work at once, and no token RPC ran on it."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        default = ThreadPoolExecutor(2, thread_name_prefix="default-pool")
        loop.set_default_executor(default)
        owners = OwnerIdentity(_upstream(), 30.0)
        await owners.start()
        logins = [loop.create_task(owners.login(f"user-{i}")) for i in range(8)]
        try:
            await _until(lambda: frozen.blocked >= 2)
            await asyncio.sleep(0.1)  # every login that will reach a thread has reached one
            # What ConnectionProtocol._grant_in_thread and the KIP-554 handlers do.
            name = await asyncio.wait_for(
                asyncio.to_thread(lambda: threading.current_thread().name), PROMPT
            )
            assert name.startswith("default-pool")
            assert not any(t.startswith("default-pool") for t in frozen.threads), frozen.threads
            assert not any(task.done() for task in logins)
        finally:
            for task in logins:
                task.cancel()
            frozen.thaw.set()
            await asyncio.gather(*logins, return_exceptions=True)
            await owners.close()

    asyncio.run(main())


def test_logins_past_the_bound_fail_at_once_and_the_bound_frees_as_they_give_up(
    frozen: FrozenIssuer, caplog: pytest.LogCaptureFixture
) -> None:
    """:data:`MAX_PENDING_CALLS` logins wait for the frozen cluster (its
    :data:`CLUSTER_THREADS` threads, the rest queued): the next fails at once as
    the cluster being unavailable, said once at WARNING. The waiting logins give
    up (their deadline cancels them): their queued calls are dropped, which is
    said once, and new logins are taken again."""
    caplog.set_level(logging.INFO, "sasl_scram.endpoint")

    async def main() -> OwnerIdentity:
        loop = asyncio.get_running_loop()
        owners = OwnerIdentity(_upstream(), 30.0)
        await owners.start()
        waiting = [loop.create_task(owners.login(f"user-{i}")) for i in range(MAX_PENDING_CALLS)]
        try:
            await _until(lambda: frozen.blocked == CLUSTER_THREADS)
            assert owners.pool.pending == MAX_PENDING_CALLS
            for user in ("late-1", "late-2"):
                with pytest.raises(ClusterBusy):
                    await asyncio.wait_for(owners.login(user), PROMPT)
            full = [r for r in caplog.records if "wait for the cluster" in r.getMessage()]
            assert [r.levelno for r in full] == [logging.WARNING], full
            assert all(name.startswith("kafka-scram-cluster") for name in frozen.threads)
            for task in waiting:
                task.cancel()
            await asyncio.gather(*waiting, return_exceptions=True)
            # The running calls hold their threads until the cluster answers.
            await _until(lambda: owners.pool.pending == CLUSTER_THREADS)
            drained = [r for r in caplog.records if "drained" in r.getMessage()]
            assert len(drained) == 1 and "2 logins were refused" in drained[0].getMessage()
            again = loop.create_task(owners.login("after"))
            await asyncio.sleep(0.1)
            assert not again.done() and owners.pool.pending == CLUSTER_THREADS + 1
            frozen.thaw.set()
            secret, token = await asyncio.wait_for(again, PROMPT)
            assert token.user == "after" and secret.token_auth
        finally:
            frozen.thaw.set()
            for task in waiting:
                task.cancel()
            await owners.close()
        return owners

    owners = asyncio.run(main())
    # Shut down with the front door: its threads end once their calls have.
    assert wait_until(lambda: not _cluster_threads()) is not None, _cluster_threads()
    assert owners.pool.pending == 0


def _cluster_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("kafka-scram-cluster")]


def test_a_user_with_a_token_at_hand_logs_in_without_a_thread(
    frozen: FrozenIssuer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """alice's token was issued before the cluster froze; then the cluster's
    calls fill the pool: her next login still has her token at once."""
    monkeypatch.setattr(_owner_identity, "ClusterPool", lambda: ClusterPool(1, 2))

    async def main() -> None:
        loop = asyncio.get_running_loop()
        owners = OwnerIdentity(_upstream(), 30.0)
        await owners.start()
        frozen.thaw.set()
        _, first = await owners.login("alice")
        frozen.thaw.clear()
        waiting = [loop.create_task(owners.login(f"user-{i}")) for i in range(2)]
        try:
            await _until(lambda: frozen.blocked == 2)  # alice's create, then user-0's
            with pytest.raises(ClusterBusy):
                await owners.login("bob")
            _, again = await asyncio.wait_for(owners.login("alice"), PROMPT)
            assert again == first
        finally:
            frozen.thaw.set()
            await asyncio.gather(*waiting, return_exceptions=True)
            await owners.close()

    asyncio.run(main())


def test_the_front_doors_own_calls_are_never_refused_and_a_stop_drops_queued_ones() -> None:
    """A full pool still takes the front door's own calls (the tokens' upkeep,
    the stop); after :meth:`ClusterPool.shutdown` a call not started is dropped
    and a new one fails as the cluster being unavailable."""
    gate = threading.Event()

    async def main() -> None:
        pool = ClusterPool(threads=1, max_pending=2)
        loop = asyncio.get_running_loop()
        stuck = loop.create_task(pool.call(lambda: gate.wait(10)))
        queued = loop.create_task(pool.call(lambda: "never run"))
        await asyncio.sleep(0.05)
        with pytest.raises(ClusterBusy):
            await pool.call(lambda: "refused")
        own = loop.create_task(pool.run(lambda: "upkeep"))
        await asyncio.sleep(0.05)
        assert pool.pending == 3 and not own.done()
        pool.shutdown()
        with pytest.raises(UpstreamUnavailable):
            await pool.call(lambda: "after the stop")
        gate.set()
        assert await asyncio.wait_for(stuck, PROMPT) is True
        for task in (queued, own):
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, PROMPT)
        assert pool.pending == 0

    try:
        asyncio.run(main())
    finally:
        gate.set()


@pytest.mark.parametrize(("threads", "max_pending"), [(0, 4), (4, 3)])
def test_a_pool_needs_a_thread_and_room_for_each(threads: int, max_pending: int) -> None:
    with pytest.raises(ValueError, match="a cluster pool needs"):
        ClusterPool(threads, max_pending)
