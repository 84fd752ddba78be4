"""aiokafka 0.14 with the token-capable SCRAM authenticator, against the endpoint."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import aiokafka.conn
import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import SaslAuthenticationFailed

import jaas
from sasl_scram import ScramClient
from sasl_scram.integrations import IntegrationError
from sasl_scram.integrations import ScramCredentials
from sasl_scram.integrations import aiokafka as scram_aiokafka
from sasl_scram.integrations import as_provider

from .conftest import MECHS
from .conftest import TokenEndpoint
from .conftest import client_properties
from .conftest import own_scram_kwargs
from .conftest import token_credentials
from .conftest import user_line

OWN = aiokafka.conn.AIOKafkaConnection.authenticator_scram


@pytest.fixture
def installed() -> Iterator[None]:
    scram_aiokafka.install()
    yield
    scram_aiokafka.uninstall()
    assert aiokafka.conn.AIOKafkaConnection.authenticator_scram is OWN


async def consumer_and_admin(kwargs: dict[str, Any]) -> tuple[set[str], list[str]]:
    async with AIOKafkaConsumer(**kwargs) as consumer:  # start(), then stop()
        topics = set(await consumer.topics())
    admin = AIOKafkaAdminClient(**kwargs)
    await admin.start()
    try:
        listed = list(await admin.list_topics())
    finally:
        await admin.close()
    return topics, listed


@pytest.mark.parametrize("mechanism", MECHS)
def test_user_login(installed: None, token_endpoint: TokenEndpoint, mechanism: str) -> None:
    kwargs = scram_aiokafka.client_kwargs(
        client_properties(token_endpoint.ep, user_line(), mechanism)
    )
    assert asyncio.run(consumer_and_admin(kwargs)) == (set(), [])


@pytest.mark.parametrize("mechanism", MECHS)
def test_delegation_token_login(
    installed: None, token_endpoint: TokenEndpoint, mechanism: str, endpoint_log: Any
) -> None:
    kwargs = scram_aiokafka.client_kwargs(token_endpoint.token_properties(mechanism))
    assert asyncio.run(consumer_and_admin(kwargs)) == (set(), [])
    assert any("User:alice" in m and "(delegation token)" in m for m in endpoint_log.messages)


def test_async_provider_and_pbkdf2_off_the_loop(
    installed: None, token_endpoint: TokenEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An async provider is awaited; the key derivation runs on an executor thread."""
    token = token_endpoint.create_token()
    threads: list[str] = []
    real = ScramClient.receive_server_first

    def spy(self: ScramClient, data: bytes) -> bytes:
        threads.append(threading.current_thread().name)
        return real(self, data)

    monkeypatch.setattr(ScramClient, "receive_server_first", spy)
    calls = 0

    async def provide() -> ScramCredentials:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0)
        return token_credentials(token)

    async def run() -> tuple[set[str], str]:
        kwargs = scram_aiokafka.client_kwargs(
            client_properties(token_endpoint.ep, None), credentials=provide
        )
        consumer = AIOKafkaConsumer(**kwargs)
        await consumer.start()
        try:
            return set(await consumer.topics()), threading.current_thread().name
        finally:
            await consumer.stop()

    topics, loop_thread = asyncio.run(run())
    assert topics == set() and calls >= 1
    assert threads and loop_thread not in threads


def test_wrong_password_is_refused(installed: None, token_endpoint: TokenEndpoint) -> None:
    line = jaas.scram_login_line("alice", "wrong-secret-123")
    kwargs = scram_aiokafka.client_kwargs(client_properties(token_endpoint.ep, line))

    async def run() -> None:
        consumer = AIOKafkaConsumer(**kwargs, request_timeout_ms=3000)
        try:
            await consumer.start()
        finally:
            await consumer.stop()

    # The refusal itself, not "Unable to bootstrap" (tests/.../test_fail_fast.py).
    with pytest.raises(SaslAuthenticationFailed) as info:
        asyncio.run(run())
    assert "wrong-secret-123" not in str(info.value)


def test_other_connections_keep_aiokafkas_authenticator(
    installed: None, token_endpoint: TokenEndpoint
) -> None:
    """The patch only acts on connections carrying our provider."""

    async def run() -> set[str]:
        consumer = AIOKafkaConsumer(**own_scram_kwargs(token_endpoint.bootstrap))
        await consumer.start()
        try:
            return set(await consumer.topics())
        finally:
            await consumer.stop()

    assert asyncio.run(run()) == set()

    async def pick(provider: Any) -> type:
        conn = aiokafka.conn.AIOKafkaConnection(
            "h",
            1,
            sasl_mechanism="SCRAM-SHA-512",
            sasl_plain_username="u",
            sasl_plain_password="p",
            sasl_oauth_token_provider=provider,
        )
        return type(conn.authenticator_scram())

    assert asyncio.run(pick(None)) is aiokafka.conn.ScramAuthenticator
    ours = as_provider(ScramCredentials("u", "p"))
    assert asyncio.run(pick(ours)) is scram_aiokafka.ScramAuthenticator


def test_uninstall_restores_aiokafka() -> None:
    assert not scram_aiokafka.is_installed()
    with scram_aiokafka.installed():
        assert scram_aiokafka.is_installed()
        scram_aiokafka.install()  # idempotent
        assert aiokafka.conn.AIOKafkaConnection.authenticator_scram is not OWN
    assert aiokafka.conn.AIOKafkaConnection.authenticator_scram is OWN
    scram_aiokafka.uninstall()  # a no-op now
    with pytest.raises(IntegrationError, match=r"install\(\)"):
        scram_aiokafka.client_kwargs(
            {
                "bootstrap.servers": "b:9092",
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "SCRAM-SHA-256",
                "sasl.jaas.config": user_line(),
            }
        )
