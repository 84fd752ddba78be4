"""Run a real :class:`ScramEndpoint` on a loopback port in a background thread.

Tests drive it with real clients (kafka-python, confluent-kafka, aiokafka,
kcat, Kafka's Java clients) exactly as they would a broker.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any
from typing import TypeVar

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SCRAM_SHA_512
from sasl_scram.endpoint import EndpointConfig
from sasl_scram.endpoint import EndpointExtension
from sasl_scram.endpoint import ScramEndpoint
from sasl_scram.store import CredentialStore
from sasl_scram.store import InMemoryCredentialStore
from sasl_scram.store import ScramUpsertion

__all__ = ["ADMIN", "ALICE", "RunningEndpoint", "seed_users"]

T = TypeVar("T")

ADMIN = ("admin", "admin-secret")
ALICE = ("alice", "alice-secret")


def seed_users(store: CredentialStore, users: Sequence[tuple[str, str]] = (ADMIN, ALICE)) -> None:
    upsertions = [
        ScramUpsertion.from_password(name, mech, password)
        for name, password in users
        for mech in (SCRAM_SHA_256, SCRAM_SHA_512)
    ]
    results = store.alter([], upsertions)
    assert all(r.error == 0 for r in results), results


class RunningEndpoint:
    """An endpoint on 127.0.0.1:<free port>, its loop in a daemon thread."""

    def __init__(
        self,
        store: CredentialStore | None = None,
        properties: Mapping[str, str] | None = None,
        extensions: Sequence[EndpointExtension] = (),
        clock_ms: Callable[[], int] | None = None,
    ) -> None:
        if store is None:
            store = InMemoryCredentialStore()
            seed_users(store)
        self.store = store
        props = {
            "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
            "scram.credential.store.path": "unused-by-tests.db",
            "super.users": "User:admin",
            **(properties or {}),
        }
        self.config = EndpointConfig.from_properties(props)
        kwargs: dict[str, Any] = {"extensions": extensions}
        if clock_ms is not None:
            kwargs["clock_ms"] = clock_ms
        self.endpoint = ScramEndpoint(self.config, store, **kwargs)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self.call(self.endpoint.start())
        self.host, self.port = self.endpoint.bound_address()

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def call(self, coro: Any, timeout: float = 30) -> Any:
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return future.result(timeout)

    def connection_count(self) -> int:
        async def count() -> int:
            return self.endpoint.connection_count

        return int(self.call(count()))

    def close(self) -> None:
        try:
            self.call(self.endpoint.close(grace_seconds=1))
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(5)
            self.loop.close()

    def __enter__(self) -> RunningEndpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def token_extension(
    secrets: Sequence[str] = ("token-secret",),
    clock_ms: Callable[[], int] | None = None,
    **config_ms: int,
) -> tuple[EndpointExtension, Any]:
    """A delegation-token extension over an in-memory store: ``(extension, manager)``.

    ``config_ms`` takes ``max_lifetime_ms``, ``expiry_time_ms`` and
    ``expiry_check_interval_ms`` for short-lived tokens in tests.
    """
    from tokenauth import InMemoryTokenStore
    from tokenauth import TokenCache
    from tokenauth import TokenConfig
    from tokenauth import TokenManager
    from tokenauth._endpoint import build_extension

    config = TokenConfig.of(*secrets, **config_ms)
    store = InMemoryTokenStore()
    cache = TokenCache(store, config.secrets)
    if clock_ms is None:
        manager = TokenManager(config, store, cache=cache)
        return build_extension(manager), manager
    manager = TokenManager(config, store, cache=cache, clock_ms=clock_ms)
    return build_extension(manager, clock_ms=clock_ms), manager
