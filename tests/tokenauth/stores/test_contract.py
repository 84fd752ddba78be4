"""One contract over every backend (ZooKeeper against a real server)."""

from __future__ import annotations

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram import ScramClient
from sasl_scram import ScramServer
from tests.support.clock import T0
from tests.support.clock import FakeClock
from tests.support.polling import wait_until
from tests.tokenauth.conftest import ALICE
from tests.tokenauth.conftest import BOB
from tests.tokenauth.conftest import StoreFactory
from tests.tokenauth.conftest import ctx
from tokenauth import TokenCache
from tokenauth import TokenConfig
from tokenauth import TokenCredentialProvider
from tokenauth import TokenInformation
from tokenauth import TokenManager
from tokenauth import TokenStore
from tokenauth import TokenStoreError


def token(token_id: str = "tok-1", expiry: int = T0 + 10) -> TokenInformation:  # noqa: S107
    return TokenInformation(token_id, ALICE, BOB, (BOB,), T0, expiry, T0 + 100)


def test_put_get_replace_remove(store_factory: StoreFactory) -> None:
    store = store_factory()
    assert isinstance(store, TokenStore)
    assert store.get("tok-1") is None
    seen: list[str] = []
    remove_listener = store.add_listener(seen.append)
    store.put(token())
    assert store.get("tok-1") == token()
    store.put(token(expiry=T0 + 50))
    assert store.get("tok-1") == token(expiry=T0 + 50)
    assert [t.token_id for t in store.tokens()] == ["tok-1"]
    assert store.remove("tok-1") is True
    assert store.get("tok-1") is None
    assert store.remove("tok-1") is False
    assert seen == ["tok-1", "tok-1", "tok-1"]
    remove_listener()
    store.put(token("tok-2"))
    assert seen == ["tok-1", "tok-1", "tok-1"]


def test_many_tokens_and_unicode_principals(store_factory: StoreFactory) -> None:
    store = store_factory()
    odd = TokenInformation(
        "tok-odd",
        ALICE.__class__("User", "é ~*+/:%"),
        ALICE.__class__("Group", "x:y"),
        (),
        1,
        2,
        3,
    )
    store.put(odd)
    for i in range(20):
        store.put(token(f"tok-{i}"))
    assert store.get("tok-odd") == odd
    assert len(store.tokens()) == 21


def test_second_client_sees_changes(store_factory: StoreFactory) -> None:
    """Two clients of one backend (two SQLite connections, two kazoo sessions)."""
    writer = store_factory()
    reader = store_factory()
    cache = TokenCache(reader, TokenConfig.of("k").secrets)
    writer.put(token())
    assert wait_until(lambda: cache.get("tok-1") == token()) is not None
    writer.put(token(expiry=T0 + 70))
    assert wait_until(lambda: cache.get("tok-1") == token(expiry=T0 + 70)) is not None
    writer.remove("tok-1")
    assert wait_until(lambda: cache.get("tok-1") is None) is not None
    cache.close()


def test_token_created_by_one_manager_authenticates_at_another(
    store_factory: StoreFactory, clock: FakeClock[int]
) -> None:
    config = TokenConfig.of("shared-secret")
    first = TokenManager(config, store_factory(), clock_ms=clock)
    second = TokenManager(config, store_factory(), clock_ms=clock)
    created = first.create_token(ctx(ALICE))
    assert wait_until(lambda: second.cache.get(created.token_id) is not None) is not None
    provider = TokenCredentialProvider(second.cache, clock_ms=clock)
    server = ScramServer(SCRAM_SHA_256, lookup=provider)
    client = ScramClient(SCRAM_SHA_256, created.token_id, created.hmac_base64, token_auth=True)
    client.receive_server_final(
        server.step(client.receive_server_first(server.step(client.client_first())))
    )
    assert server.session.authorization_id == "alice"
    # The second manager renews by HMAC and the first sees the new expiry.
    renewed = second.renew_token(ctx(ALICE), created.hmac, 1234)
    assert renewed.expiry_timestamp_ms == clock() + 1234
    assert (
        wait_until(
            lambda: (
                (info := first.cache.get(created.token_id)) is not None
                and info.expiry_timestamp_ms == clock() + 1234
            )
        )
        is not None
    )
    # The sweep in one process removes the token everywhere.
    clock.advance(2000)
    assert first.sweep() == [created.token_id]
    assert wait_until(lambda: second.cache.get(created.token_id) is None) is not None
    first.close()
    second.close()


def test_closed_store_refuses_writes(store_factory: StoreFactory) -> None:
    store = store_factory()
    store.close()
    with pytest.raises(TokenStoreError):
        store.put(token())


LONG_MAX = 2**63 - 1


def test_tokens_of_a_server_maximum_lifetime_survive_a_reload(
    store_factory: StoreFactory, clock: FakeClock[int]
) -> None:
    """``delegation.token.max.lifetime.ms`` (and the expiry time) may be Long.MAX_VALUE:
    Kafka 4.x's ``DelegationTokenControlManager.sum`` then saturates ``now + lifetime``
    at Long.MAX_VALUE. Timestamps past a Java long would be written where no reader
    (ours, or Kafka's ``DelegationTokenManagerZk.fromBytes``) can take them back, and
    the token would vanish."""
    config = TokenConfig.of("secretKey", max_lifetime_ms=LONG_MAX, expiry_time_ms=LONG_MAX)
    writer = TokenManager(config, store_factory(), clock_ms=clock)
    created = writer.create_token(ctx(ALICE))
    assert (created.max_timestamp_ms, created.expiry_timestamp_ms) == (LONG_MAX, LONG_MAX)
    renewed = writer.renew_token(ctx(ALICE), created.hmac, LONG_MAX)
    assert renewed.expiry_timestamp_ms == LONG_MAX
    assert writer.cache.get(created.token_id) is not None
    reader = TokenManager(config, store_factory(), clock_ms=clock)
    wait_until(lambda: reader.cache.get(created.token_id) is not None, timeout=5.0)
    stored = reader.cache.get(created.token_id)
    assert stored is not None
    assert (stored.max_timestamp_ms, stored.expiry_timestamp_ms) == (LONG_MAX, LONG_MAX)
