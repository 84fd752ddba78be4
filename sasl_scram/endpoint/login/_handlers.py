"""Responses for Metadata, DescribeClientQuotas and the KIP-554 RPCs (API keys
3, 48, 50, 51).

Metadata describes a one-broker cluster: this node on the listener the client
used, as controller (librdkafka sends admin requests to the controller), with
no topics. The SCRAM RPCs are answered from the credential store with its
exact semantics; ALTER and DESCRIBE on CLUSTER belong to super users only.
DescribeClientQuotas answers that there are no quotas (the endpoint enforces
none), to the same super users: Kafka asks DESCRIBE_CONFIGS on CLUSTER for it.

Each refusal, and each credential an alteration changes or fails to change, is
one line of the audit trail (:mod:`sasl_scram.audit`): who, from where, whose
credential, which mechanism; never the salt or the salted password.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from sasl_scram._mechanism import ScramMechanism
from sasl_scram.audit import audit
from sasl_scram.audit import request_name
from sasl_scram.endpoint._config import EndpointConfig
from sasl_scram.endpoint._extension import RequestContext
from sasl_scram.endpoint.login._error_responses import error_response
from sasl_scram.kafka import API_SPECS
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode
from sasl_scram.store import AlterResult
from sasl_scram.store import ScramAdmin
from sasl_scram.store import ScramDeletion
from sasl_scram.store import ScramUpsertion

__all__ = ["alter_scram", "describe_client_quotas", "describe_scram", "metadata"]

Body = dict[str, Any]

#: The resource Kafka authorizes the KIP-554 RPCs and DescribeClientQuotas on
#: (``ResourcePattern.CLUSTER``'s name, ``kafka-cluster``).
_CLUSTER = ("Cluster", "kafka-cluster")


def metadata(config: EndpointConfig, advertised: tuple[str, int], version: int, body: Body) -> Body:
    """This node at ``advertised`` (the listener the client used), as controller."""
    host, port = advertised
    topics: list[Body] = []
    for topic in body.get("topics") or []:
        name = topic.get("name")
        if name is None:
            # A lookup by topic id (v12+): Java answers UNKNOWN_TOPIC_ID with a null name.
            topics.append(
                {
                    "error_code": ErrorCode.UNKNOWN_TOPIC_ID,
                    "name": None,
                    "topic_id": topic["topic_id"],
                }
            )
        else:
            topics.append({"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "name": name})
    return {
        "throttle_time_ms": 0,
        "brokers": [
            {
                "node_id": config.node_id,
                "host": host,
                "port": port,
                "rack": None,
            }
        ],
        "cluster_id": config.cluster_id,
        "controller_id": config.node_id,
        "topics": topics,
        "error_code": ErrorCode.NONE,
    }


def _refused(key: ApiKey, body: Body, message: str | None = None) -> Body:
    """Error 31 shaped as Kafka's request class shapes its error response."""
    spec = API_SPECS[key]
    return {
        "throttle_time_ms": 0,
        **error_response(spec, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, message, body),
    }


async def describe_client_quotas(ctx: RequestContext, version: int, body: Body) -> Body:
    """No quotas, whatever the filter: what a broker without quotas answers."""
    if not ctx.super_user:
        _audit_refused(ctx, ApiKey.DESCRIBE_CLIENT_QUOTAS, "DescribeConfigs")
        # KafkaApis: the request's error response, with the exception's message.
        return _refused(
            ApiKey.DESCRIBE_CLIENT_QUOTAS,
            body,
            ErrorCode.CLUSTER_AUTHORIZATION_FAILED.default_message,
        )
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "entries": []}


async def describe_scram(store: ScramAdmin, ctx: RequestContext, version: int, body: Body) -> Body:
    users = body.get("users")
    names = None if users is None else [u["name"] for u in users]
    if not ctx.super_user:
        _audit_refused(ctx, ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, "Describe")
        # Kafka: top-level 31 and one result per requested user, with User unset ("").
        return _refused(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, body)
    result = await asyncio.to_thread(store.describe, names or None)
    return {
        "throttle_time_ms": 0,
        "error_code": int(result.error),
        "error_message": result.message,
        "results": [
            {
                "user": d.user,
                "error_code": int(d.error),
                "error_message": d.message,
                "credential_infos": [
                    {"mechanism": c.mechanism.type_byte, "iterations": c.iterations}
                    for c in d.credentials
                ],
            }
            for d in result.results
        ],
    }


async def alter_scram(store: ScramAdmin, ctx: RequestContext, version: int, body: Body) -> Body:
    deletions = [ScramDeletion(d["name"], d["mechanism"]) for d in body["deletions"]]
    upsertions = [
        ScramUpsertion(u["name"], u["mechanism"], u["iterations"], u["salt"], u["salted_password"])
        for u in body["upsertions"]
    ]
    if not ctx.super_user:
        _audit_alterations(ctx, deletions, upsertions, None)
        # Every distinct user, sorted, with a null message (ZkAdminManager / KafkaApis).
        return _refused(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, body)
    results = await asyncio.to_thread(store.alter, deletions, upsertions)
    _audit_alterations(ctx, deletions, upsertions, results)
    return {
        "throttle_time_ms": 0,
        "results": [
            {"user": r.user, "error_code": int(r.error), "error_message": r.message}
            for r in results
        ],
    }


def _audit_refused(ctx: RequestContext, key: ApiKey, operation: str) -> None:
    """The refusal, as Kafka's authorizer logs it: ``operation`` on the cluster."""
    audit(ctx.principal, False, operation, ctx.client_host, _CLUSTER, request_name(key))


def _mechanism_name(type_byte: int) -> str:
    try:
        return ScramMechanism.from_type(type_byte).mechanism_name
    except ValueError:
        # An unknown type byte is refused by the store; the line says what came.
        return f"unknown ({type_byte})"


def _audit_alterations(
    ctx: RequestContext,
    deletions: Sequence[ScramDeletion],
    upsertions: Sequence[ScramUpsertion],
    results: Sequence[AlterResult] | None,
) -> None:
    """One line per credential an alteration named: ``Denied`` when the request was
    refused (``results`` is ``None``), else ``Allowed`` with the store's outcome for
    that user (``result = NONE`` when the change was made)."""
    outcome = {r.user: r.error.name for r in results or ()}
    changes: list[tuple[str, int, list[tuple[str, object]]]] = [
        (d.user, d.mechanism, [("change", "delete")]) for d in deletions
    ]
    changes += [
        (u.user, u.mechanism, [("change", "upsert"), ("iterations", u.iterations)])
        for u in upsertions
    ]
    request = request_name(ApiKey.ALTER_USER_SCRAM_CREDENTIALS)
    for user, mechanism, details in changes:
        details.insert(0, ("mechanism", _mechanism_name(mechanism)))
        if results is not None:
            details.append(("result", outcome.get(user, "unknown")))
        audit(
            ctx.principal,
            results is not None,
            "Alter",
            ctx.client_host,
            ("User", user),
            request,
            details,
        )
