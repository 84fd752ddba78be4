"""Delegation tokens on the endpoint: the RPCs 38-41 and ``tokenauth=true`` logins.

Registered under the ``kafka_scram.endpoint`` entry point, so ``kafka-scram
serve`` serves tokens without ``sasl_scram`` importing this package. The
handlers translate wire dicts to :class:`TokenManager` calls and back; the
rules and error codes are the manager's. Each token created, renewed or expired,
and each refused token request, is a line of the audit trail
(:mod:`sasl_scram.audit`); never a token's HMAC.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from sasl_scram import KafkaPrincipal
from sasl_scram.audit import audit
from sasl_scram.audit import request_name
from sasl_scram.config import read_keys
from sasl_scram.endpoint import STORE_KEYS
from sasl_scram.endpoint import EndpointExtension
from sasl_scram.endpoint import Handler
from sasl_scram.endpoint import RequestContext
from sasl_scram.endpoint import store_location
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode
from tokenauth._cache import TokenCache
from tokenauth._config import CONFIG_KEYS
from tokenauth._config import TokenConfig
from tokenauth._manager import TokenManager
from tokenauth._manager import TokenRequester
from tokenauth._manager import wall_clock_ms
from tokenauth._provider import TokenCredentialProvider
from tokenauth._results import ExpireTokenResult
from tokenauth._results import RenewTokenResult
from tokenauth._sweeper import ExpirySweeper
from tokenauth._token import DelegationToken
from tokenauth.stores import InMemoryTokenStore
from tokenauth.stores import TokenStore
from tokenauth.stores import open_token_store

__all__ = ["build_extension", "endpoint_extension"]

log = logging.getLogger("tokenauth.endpoint")

Body = dict[str, Any]


def _principal(item: Mapping[str, Any]) -> KafkaPrincipal:
    return KafkaPrincipal(item["principal_type"], item["principal_name"])


def _requester(ctx: RequestContext) -> TokenRequester:
    return TokenRequester(
        principal=ctx.principal,
        token_authenticated=ctx.token_authenticated,
        security_protocol=ctx.security_protocol,
        super_user=ctx.super_user,
    )


def _audit(
    ctx: RequestContext,
    key: ApiKey,
    operation: str,
    resource: tuple[str, str],
    error: ErrorCode,
    details: list[tuple[str, object]],
) -> None:
    """``Allowed`` when the request did what it asked (NONE), else ``Denied``; the
    result is Kafka's error name either way."""
    details.append(("result", error.name))
    audit(
        ctx.principal,
        error == ErrorCode.NONE,
        operation,
        ctx.client_host,
        resource,
        request_name(key),
        details,
    )


def _token(token_id: str) -> tuple[str, str]:
    # Before the HMAC found a token there is no id to name.
    return ("DelegationToken", token_id or "unknown")


def _expiry_change(
    api: ApiKey,
    operation: str,
    change: Callable[[TokenRequester, bytes, int], RenewTokenResult | ExpireTokenResult],
    period_field: str,
) -> Handler:
    """Renew and expire: the HMAC finds the token, the period moves its expiry."""

    async def handle(ctx: RequestContext, version: int, body: Body) -> Body:
        r = await asyncio.to_thread(change, _requester(ctx), body["hmac"], body[period_field])
        done = r.error == ErrorCode.NONE
        details: list[tuple[str, object]] = (
            [("expiryTimestamp", r.expiry_timestamp_ms)] if done else []
        )
        _audit(ctx, api, operation, _token(r.token_id), r.error, details)
        return {"error_code": int(r.error), "expiry_timestamp_ms": r.expiry_timestamp_ms}

    return handle


def _handlers(manager: TokenManager) -> dict[int, Handler]:
    """The RPCs 38-41 over ``manager``; its calls may touch a store, so in threads."""

    async def create(ctx: RequestContext, version: int, body: Body) -> Body:
        owner = None
        if body.get("owner_principal_name"):
            owner = KafkaPrincipal(
                body.get("owner_principal_type") or "User", body["owner_principal_name"]
            )
        renewers = [_principal(r) for r in body["renewers"]]
        r = await asyncio.to_thread(
            manager.create_token, _requester(ctx), renewers, body["max_lifetime_ms"], owner
        )
        # KIP-373: CREATE_TOKENS is authorized on the owner, USER:<owner>.
        made = [("tokenId", r.token_id), ("expiryTimestamp", r.expiry_timestamp_ms)]
        _audit(
            ctx,
            ApiKey.CREATE_DELEGATION_TOKEN,
            "CreateTokens",
            ("User", str(r.owner)),
            r.error,
            made if r.error == ErrorCode.NONE else [],
        )
        return {
            "error_code": int(r.error),
            "principal_type": r.owner.principal_type,
            "principal_name": r.owner.name,
            "token_requester_principal_type": r.token_requester.principal_type,
            "token_requester_principal_name": r.token_requester.name,
            "issue_timestamp_ms": r.issue_timestamp_ms,
            "expiry_timestamp_ms": r.expiry_timestamp_ms,
            "max_timestamp_ms": r.max_timestamp_ms,
            "token_id": r.token_id,
            "hmac": r.hmac,
            "throttle_time_ms": 0,
        }

    renew = _expiry_change(
        ApiKey.RENEW_DELEGATION_TOKEN, "Renew", manager.renew_token, "renew_period_ms"
    )
    expire = _expiry_change(
        ApiKey.EXPIRE_DELEGATION_TOKEN, "Expire", manager.expire_token, "expiry_time_period_ms"
    )

    async def describe(ctx: RequestContext, version: int, body: Body) -> Body:
        owners = body.get("owners")
        owner_list = None if owners is None else [_principal(o) for o in owners]
        r = await asyncio.to_thread(manager.describe_tokens, _requester(ctx), owner_list)
        if r.error != ErrorCode.NONE:
            # Only refusals: what a describe shows depends on who asks, and changes nothing.
            _audit(ctx, ApiKey.DESCRIBE_DELEGATION_TOKEN, "Describe", _token("*"), r.error, [])
        return {"error_code": int(r.error), "tokens": [_described(t) for t in r.tokens]}

    return {
        ApiKey.CREATE_DELEGATION_TOKEN: create,
        ApiKey.RENEW_DELEGATION_TOKEN: renew,
        ApiKey.EXPIRE_DELEGATION_TOKEN: expire,
        ApiKey.DESCRIBE_DELEGATION_TOKEN: describe,
    }


def _described(t: DelegationToken) -> Body:
    return {
        "principal_type": t.info.owner.principal_type,
        "principal_name": t.info.owner.name,
        "token_requester_principal_type": t.info.token_requester.principal_type,
        "token_requester_principal_name": t.info.token_requester.name,
        "issue_timestamp": t.info.issue_timestamp_ms,
        "expiry_timestamp": t.info.expiry_timestamp_ms,
        "max_timestamp": t.info.max_timestamp_ms,
        "token_id": t.info.token_id,
        "hmac": t.hmac,
        "renewers": [
            {"principal_type": p.principal_type, "principal_name": p.name} for p in t.info.renewers
        ],
    }


def build_extension(
    manager: TokenManager,
    *,
    clock_ms: Callable[[], int] = wall_clock_ms,
    sweeper: ExpirySweeper | None = None,
    on_close: Callable[[], None] | None = None,
) -> EndpointExtension:
    """An endpoint extension serving ``manager``'s tokens."""
    provider = TokenCredentialProvider(manager.cache, clock_ms=clock_ms)

    def close() -> None:
        if sweeper is not None:
            sweeper.stop()
        manager.close()
        manager.cache.close()
        if on_close is not None:
            on_close()

    return EndpointExtension(
        name="delegation tokens (KIP-48)",
        handlers=_handlers(manager),
        token_grant=provider.grant_for,
        close=close,
        # A token's first login derives its keys (PBKDF2): not on the event loop.
        token_grant_may_block=provider.may_block,
    )


def endpoint_extension(
    properties: Mapping[str, str], settings: Mapping[str, Any] | None = None
) -> EndpointExtension:
    """The ``kafka_scram.endpoint`` entry point: tokens stored beside the credentials.

    ``settings`` are the values the endpoint's table parsed (:data:`CONFIG_KEYS`
    among them), so no token key is parsed twice; without them the keys are
    read from ``properties``. With no ``delegation.token.secret.key`` the RPCs
    still answer, with DELEGATION_TOKEN_AUTH_DISABLED (61), as a Kafka broker does.
    """
    config = (
        TokenConfig.from_properties(properties)
        if settings is None
        else TokenConfig.from_values(settings)
    )
    store: TokenStore = InMemoryTokenStore()
    if config.enabled:
        if settings is None:
            settings = read_keys(STORE_KEYS, properties, getattr(properties, "origins", {}))
        location = store_location(settings)
        if location is not None:
            store = open_token_store(location)
    cache = TokenCache(store, config.secrets)
    manager = TokenManager(config, store, cache=cache)
    sweeper = ExpirySweeper(manager) if config.enabled else None
    if sweeper is not None:
        sweeper.start()
    if config.enabled:
        log.info("Delegation tokens enabled")
    else:
        log.info(
            "Delegation tokens disabled: no delegation.token.secret.key (the token requests "
            "are refused with DELEGATION_TOKEN_AUTH_DISABLED, as by a Kafka broker)"
        )
    return build_extension(manager, sweeper=sweeper, on_close=store.close)


# The keys serve validates for this extension (file, line, "did you mean") before
# calling it; read by sasl_scram.endpoint's factory_keys without an import of ours.
endpoint_extension.config_keys = CONFIG_KEYS  # type: ignore[attr-defined]
