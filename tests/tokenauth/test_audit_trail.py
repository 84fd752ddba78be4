"""The token handlers and the expiry sweep write the audit trail: tokens created,
renewed and expired, and refused token requests; never a token's HMAC."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from sasl_scram.audit import AUDIT_LOGGER_NAME
from sasl_scram.endpoint import EndpointExtension
from sasl_scram.endpoint import RequestContext
from sasl_scram.kafka import ApiKey
from tests.support.clock import FakeClock
from tests.support.request_context import request_context
from tokenauth import InMemoryTokenStore
from tokenauth import TokenConfig
from tokenauth import TokenManager
from tokenauth._endpoint import build_extension

T0 = 1_700_000_000_000
HOST = "192.0.2.7"


def _ctx(user: str, *, token: bool = False) -> RequestContext:
    return request_context(user, token=token, host=HOST, protocol="SASL_SSL")


@pytest.fixture
def clock() -> FakeClock[int]:
    return FakeClock.epoch_ms(T0)


@pytest.fixture
def served(clock: FakeClock[int]) -> tuple[EndpointExtension, TokenManager]:
    config = TokenConfig.of("secret-one", max_lifetime_ms=3_600_000, expiry_time_ms=600_000)
    ids = iter(f"token-{n}" for n in range(100))
    manager = TokenManager(
        config, InMemoryTokenStore(), clock_ms=clock, token_id_factory=lambda: next(ids)
    )
    return build_extension(manager, clock_ms=clock), manager


def _call(ext: EndpointExtension, key: ApiKey, ctx: RequestContext, body: dict[str, Any]) -> Any:
    async def call() -> Any:
        return await ext.handlers[key](ctx, 0, body)

    return asyncio.run(call())


def _create(ext: EndpointExtension, ctx: RequestContext, owner: str = "") -> Any:
    body = {"renewers": [], "max_lifetime_ms": -1, "owner_principal_name": owner}
    return _call(ext, ApiKey.CREATE_DELEGATION_TOKEN, ctx, body)


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == AUDIT_LOGGER_NAME]


def test_create_renew_expire_are_allowed_lines(
    served: tuple[EndpointExtension, TokenManager], caplog: pytest.LogCaptureFixture
) -> None:
    ext, _ = served
    alice = _ctx("alice")
    with caplog.at_level(logging.INFO, logger=AUDIT_LOGGER_NAME):
        hmac = _create(ext, alice)["hmac"]
        _call(ext, ApiKey.RENEW_DELEGATION_TOKEN, alice, {"hmac": hmac, "renew_period_ms": 1000})
        expire = {"hmac": hmac, "expiry_time_period_ms": -1}
        _call(ext, ApiKey.EXPIRE_DELEGATION_TOKEN, alice, expire)
    head = "Principal = User:alice is Allowed Operation = "
    assert _lines(caplog) == [
        f"{head}CreateTokens from host = {HOST} on resource = User:LITERAL:User:alice for "
        f"request = CreateDelegationToken with tokenId = token-0, expiryTimestamp = "
        f"{T0 + 600_000}, result = NONE",
        f"{head}Renew from host = {HOST} on resource = DelegationToken:LITERAL:token-0 for "
        f"request = RenewDelegationToken with expiryTimestamp = {T0 + 1000}, result = NONE",
        f"{head}Expire from host = {HOST} on resource = DelegationToken:LITERAL:token-0 for "
        f"request = ExpireDelegationToken with expiryTimestamp = {T0}, result = NONE",
    ]
    assert hmac.hex() not in caplog.text


def test_refusals_are_denied_lines(
    served: tuple[EndpointExtension, TokenManager], caplog: pytest.LogCaptureFixture
) -> None:
    ext, _ = served
    hmac = _create(ext, _ctx("alice"))["hmac"]
    mallory = _ctx("mallory")
    with caplog.at_level(logging.INFO, logger=AUDIT_LOGGER_NAME):
        _create(ext, mallory, owner="alice")
        _call(ext, ApiKey.RENEW_DELEGATION_TOKEN, mallory, {"hmac": hmac, "renew_period_ms": 1})
        _call(
            ext, ApiKey.EXPIRE_DELEGATION_TOKEN, mallory, {"hmac": b"x", "expiry_time_period_ms": 1}
        )
        _call(ext, ApiKey.DESCRIBE_DELEGATION_TOKEN, _ctx("alice", token=True), {"owners": None})
        _call(ext, ApiKey.DESCRIBE_DELEGATION_TOKEN, mallory, {"owners": None})
    head = "Principal = User:mallory is Denied Operation = "
    assert _lines(caplog) == [
        f"{head}CreateTokens from host = {HOST} on resource = User:LITERAL:User:alice for "
        "request = CreateDelegationToken with result = DELEGATION_TOKEN_AUTHORIZATION_FAILED",
        f"{head}Renew from host = {HOST} on resource = DelegationToken:LITERAL:token-0 for "
        "request = RenewDelegationToken with result = DELEGATION_TOKEN_OWNER_MISMATCH",
        f"{head}Expire from host = {HOST} on resource = DelegationToken:LITERAL:unknown for "
        "request = ExpireDelegationToken with result = DELEGATION_TOKEN_NOT_FOUND",
        f"Principal = User:alice is Denied Operation = Describe from host = {HOST} on "
        "resource = DelegationToken:LITERAL:* for request = DescribeDelegationToken with "
        "result = DELEGATION_TOKEN_REQUEST_NOT_ALLOWED",
    ]


def test_the_sweep_logs_each_token_it_expires(
    served: tuple[EndpointExtension, TokenManager],
    clock: FakeClock[int],
    caplog: pytest.LogCaptureFixture,
) -> None:
    ext, manager = served
    _create(ext, _ctx("bob\nPrincipal = User:admin is Allowed "))
    clock.advance(600_001)
    with caplog.at_level(logging.INFO, logger=AUDIT_LOGGER_NAME):
        assert manager.sweep() == ["token-0"]
    assert _lines(caplog) == [
        "Event = TokenExpired on resource = DelegationToken:LITERAL:token-0 with owner = "
        "User:bob\\x0aPrincipal\\x20=\\x20User:admin\\x20is\\x20Allowed\\x20, "
        f"expiryTimestamp = {T0 + 600_000}"
    ]
