"""Responses for Metadata, DescribeClientQuotas and the KIP-554 RPCs (API keys
3, 48, 50, 51).

Metadata describes a one-broker cluster: this node on the listener the client
used, as controller (librdkafka sends admin requests to the controller), with
no topics. The SCRAM RPCs are answered from the credential store with its
exact semantics; ALTER and DESCRIBE on CLUSTER belong to super users only.
DescribeClientQuotas answers that there are no quotas (the endpoint enforces
none), to the same super users: Kafka asks DESCRIBE_CONFIGS on CLUSTER for it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from sasl_scram.endpoint._config import EndpointConfig
from sasl_scram.endpoint._error_responses import error_response
from sasl_scram.endpoint._extension import RequestContext
from sasl_scram.kafka import API_SPECS
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode
from sasl_scram.store import ScramAdmin
from sasl_scram.store import ScramDeletion
from sasl_scram.store import ScramUpsertion

__all__ = ["alter_scram", "describe_client_quotas", "describe_scram", "metadata"]

Body = dict[str, Any]


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
        # Every distinct user, sorted, with a null message (ZkAdminManager / KafkaApis).
        return _refused(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, body)
    results = await asyncio.to_thread(store.alter, deletions, upsertions)
    return {
        "throttle_time_ms": 0,
        "results": [
            {"user": r.user, "error_code": int(r.error), "error_message": r.message}
            for r in results
        ],
    }
