"""Token-store faults: one ZooKeeper session shared with the credential
store, a vanished parent recreated by both, the staleness key, and a token-store
outage refused like a credential-store one."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram import CredentialRequest
from sasl_scram import ScramConfigError
from sasl_scram.endpoint import EndpointConfig
from sasl_scram.endpoint import EndpointExtension
from sasl_scram.endpoint import ScramEndpoint
from sasl_scram.store import CredentialStoreUnavailable
from sasl_scram.store import InMemoryCredentialStore
from sasl_scram.store import StoreUnavailable
from sasl_scram.store import ZooKeeperCredentialStore
from sasl_scram.store.zookeeper import ZooKeeperOptions
from tests.sasl_scram.store.test_contract import ok
from tests.sasl_scram.store.test_contract import ups
from tests.support.polling import wait_until
from tests.support.zookeeper_server import ZooKeeperServer
from tests.tokenauth.conftest import ALICE
from tokenauth import TokenInformation
from tokenauth import TokenStoreUnavailable
from tokenauth import ZooKeeperTokenStore


def zookeeper_store_options(props: dict[str, str]) -> dict[str, Any]:
    """The options ``serve`` opens its ZooKeeper stores with."""
    return ZooKeeperOptions.from_properties(props).store_options()


def test_an_endpoints_stores_share_one_session(zookeeper_hosts: str) -> None:
    options = zookeeper_store_options({"zookeeper.connect": zookeeper_hosts})
    creds = ZooKeeperCredentialStore(zookeeper_hosts, **options)
    tokens = ZooKeeperTokenStore(zookeeper_hosts, **options)
    try:
        assert creds.client is tokens.client
        creds.close()
        # The token store keeps the session the credential store let go of.
        tokens.put(TokenInformation("t1", ALICE, ALICE, (), 1, 2, 3))
        assert tokens.get("t1") is not None
    finally:
        creds.close()
        tokens.close()
    assert not tokens.client.connected


def test_stores_of_different_processes_do_not_share(zookeeper_hosts: str) -> None:
    creds = ZooKeeperCredentialStore(zookeeper_hosts)
    tokens = ZooKeeperTokenStore(zookeeper_hosts)
    try:
        assert creds.client is not tokens.client
    finally:
        creds.close()
        tokens.close()


def test_both_stores_recreate_a_vanished_parent_and_retry_the_write(zookeeper_hosts: str) -> None:
    creds = ZooKeeperCredentialStore(zookeeper_hosts)
    tokens = ZooKeeperTokenStore(zookeeper_hosts)
    try:
        # Deleted behind the stores' backs: each write's multi-op fails with
        # NoNodeError; the shared commit recreates the paths and the retry succeeds.
        creds.client.delete("/config/users", recursive=True)
        tokens.client.delete("/delegation_token/tokens", recursive=True)
        assert creds.alter([], [ups("alice")]) == [ok("alice")]
        tokens.put(TokenInformation("t1", ALICE, ALICE, (), 1, 2, 3))
        assert creds.client.exists("/config/users/alice") is not None
        assert tokens.client.exists("/delegation_token/tokens/t1") is not None
    finally:
        creds.close()
        tokens.close()


def test_max_staleness_is_a_server_property(caplog: pytest.LogCaptureFixture) -> None:
    assert zookeeper_store_options({})["max_staleness"] == 60.0
    key = "scram.store.max.staleness.ms"
    assert zookeeper_store_options({key: "1500"})["max_staleness"] == 1.5
    assert zookeeper_store_options({key: "-1"})["max_staleness"] == float("inf")
    for bad in ("soon", "-2"):
        with pytest.raises(ScramConfigError, match=key):
            zookeeper_store_options({key: bad})
    with caplog.at_level(logging.WARNING):
        EndpointConfig.from_properties(
            {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "zookeeper.connect": "h:1", key: "5000"}
        )
    assert caplog.records == []


def test_staleness_applies_to_both_stores(dedicated_zookeeper: ZooKeeperServer) -> None:
    hosts = dedicated_zookeeper.hosts
    options = zookeeper_store_options({"scram.store.max.staleness.ms": "0"})
    creds = ZooKeeperCredentialStore(hosts, **options)
    tokens = ZooKeeperTokenStore(hosts, **options)
    try:
        assert creds.alter([], [ups("alice")]) == [ok("alice")]
        dedicated_zookeeper.kill()
        assert wait_until(lambda: creds._cache.disconnected, 10) is not None
        with pytest.raises(CredentialStoreUnavailable):
            creds.lookup("alice", SCRAM_SHA_256)
        with pytest.raises(TokenStoreUnavailable):
            tokens.get("t1")
    finally:
        creds.close()
        tokens.close()


def test_a_token_store_outage_refuses_the_login_like_a_credential_store_outage(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assert issubclass(TokenStoreUnavailable, StoreUnavailable)

    def token_grant(request: CredentialRequest) -> None:
        raise TokenStoreUnavailable("token store unreachable for more than 60 s; failing closed")

    config = EndpointConfig.from_properties(
        {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "scram.credential.store.path": "x.db"}
    )
    endpoint = ScramEndpoint(
        config,
        InMemoryCredentialStore(),
        extensions=[EndpointExtension("tokens", token_grant=token_grant)],
    )
    request = CredentialRequest(SCRAM_SHA_256, "tokenId1", True, {})
    with caplog.at_level(logging.WARNING, logger="sasl_scram.endpoint"):
        for n in range(50):
            assert endpoint.grant(request, f"c{n}") is None
    refusals = [r for r in caplog.records if r.name == "sasl_scram.endpoint"]
    assert [(r.levelname, r.exc_info) for r in refusals] == [("WARNING", None)]
    assert "failing closed" in refusals[0].getMessage()


def test_a_store_joining_a_shared_session_during_an_outage_fails_fast(
    dedicated_zookeeper: ZooKeeperServer,
) -> None:
    # Starting the shared client again (kazoo stops its handler, then waits forever
    # for a connection thread that retries forever) hung the joiner and broke the
    # first store. A joiner waits for the session like any request, then says so.
    hosts = dedicated_zookeeper.hosts
    options = {**zookeeper_store_options({"zookeeper.connect": hosts}), "request_timeout": 1.0}
    creds = ZooKeeperCredentialStore(hosts, **options)
    result: list[BaseException | ZooKeeperTokenStore] = []
    try:
        dedicated_zookeeper.kill()
        assert wait_until(lambda: not creds.client.connected, 10) is not None

        def open_tokens() -> None:
            try:
                result.append(ZooKeeperTokenStore(hosts, **options))
            except BaseException as exc:
                result.append(exc)

        opener = threading.Thread(target=open_tokens, daemon=True)
        opener.start()
        opener.join(10)
        assert not opener.is_alive(), "the second store hung while ZooKeeper was down"
        assert isinstance(result[0], TokenStoreUnavailable), result
        # The first store still follows ZooKeeper once it is back.
        dedicated_zookeeper.start()
        # Generous: on a loaded machine one reconnect attempt can spend a whole
        # handshake timeout (kazoo bounds the Connect request by the session
        # timeout) before the next one succeeds.
        reconnected = wait_until(lambda: creds.client.connected, 40)
        last_problem = getattr(getattr(creds.client, "_scram_log", None), "last_problem", None)
        assert reconnected is not None, (creds.client.state, last_problem)
        assert creds.alter([], [ups("late", SCRAM_SHA_256)]) == [ok("late")]
        assert wait_until(lambda: creds.lookup("late", SCRAM_SHA_256) is not None, 10) is not None
    finally:
        creds.close()
