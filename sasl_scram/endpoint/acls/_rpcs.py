"""CreateAcls, DescribeAcls and DeleteAcls answered at the edge, on the edge's
own ACLs, as Kafka's ``AclApis`` answers them (API keys 30, 29, 31).

DescribeAcls needs DESCRIBE on the cluster, CreateAcls and DeleteAcls ALTER,
decided by the edge's ACLs themselves (so ``kafka-acls --bootstrap-server
<edge>`` run as an edge super user manages them). What each creation or
filter may hold is :mod:`sasl_scram.authz`'s Kafka rules; a request Kafka
cannot parse closes the connection. A change the store reports done is
durable, and the next request is decided with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from sasl_scram.authz import AclBinding
from sasl_scram.authz import AclCreation
from sasl_scram.authz import AclFilterFields
from sasl_scram.authz import AclOperation
from sasl_scram.authz import Action
from sasl_scram.authz import MalformedAclRequest
from sasl_scram.authz import ResourceType
from sasl_scram.authz import check_create_acls
from sasl_scram.authz import check_delete_filters
from sasl_scram.authz import check_describe_filter
from sasl_scram.authz import java_host_address
from sasl_scram.endpoint._config import EndpointConfig
from sasl_scram.endpoint._extension import CloseRequest
from sasl_scram.endpoint._extension import Handler
from sasl_scram.endpoint._extension import RequestContext
from sasl_scram.endpoint.acls._edge_acls import EdgeAcls
from sasl_scram.endpoint.acls._edge_acls import edge_acls
from sasl_scram.endpoint.acls._edge_acls import log_decision
from sasl_scram.frontdoor import EdgeSession
from sasl_scram.frontdoor.authorization import Decided
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode
from sasl_scram.store import ACL_STORE_ERRORS
from sasl_scram.store import AclStore

__all__ = ["AclRpcs", "acl_handlers"]

Body = dict[str, Any]
_CAF = ErrorCode.CLUSTER_AUTHORIZATION_FAILED


def _fields(entry: Body) -> AclFilterFields:
    return AclFilterFields(
        entry["resource_type_filter"],
        entry["resource_name_filter"],
        entry["pattern_type_filter"],
        entry["principal_filter"],
        entry["host_filter"],
        entry["operation"],
        entry["permission_type"],
    )


def _binding_fields(binding: AclBinding) -> Body:
    entry = binding.entry
    return {
        "resource_type": binding.pattern.resource_type.code,
        "resource_name": binding.pattern.name,
        "pattern_type": binding.pattern.pattern_type.code,
        "principal": entry.principal,
        "host": entry.host,
        "operation": entry.operation.code,
        "permission_type": entry.permission_type.code,
    }


def _resources(bindings: tuple[AclBinding, ...]) -> list[Body]:
    """DescribeAcls's answer: the ACLs grouped by resource pattern, in order."""
    grouped: dict[Any, list[Body]] = {}
    for binding in bindings:
        fields = _binding_fields(binding)
        grouped.setdefault(binding.pattern, []).append(
            {k: fields[k] for k in ("principal", "host", "operation", "permission_type")}
        )
    return [
        {"resource_type": p.resource_type.code, "resource_name": p.name,
         "pattern_type": p.pattern_type.code, "acls": acls}
        for p, acls in grouped.items()
    ]  # fmt: skip


class AclRpcs:
    """The three ACL RPCs of one endpoint process.

    Args:
        store: where the edge's ACLs are kept.
        acls: the snapshot requests are decided on (refreshed after a change).
        zookeeper: the store keeps Kafka 3.x's ZooKeeper layout, whose
            ``AclAuthorizer`` rules apply to creations and filters.
        audit: told each decision Kafka's authorizer would log.
    """

    def __init__(
        self,
        store: AclStore,
        acls: EdgeAcls,
        *,
        zookeeper: bool = False,
        audit: Callable[[Decided], None] = log_decision,
    ) -> None:
        self._store = store
        self._acls = acls
        self._zookeeper = zookeeper
        self._audit = audit

    def _allowed(self, ctx: RequestContext, operation: AclOperation, request: str) -> bool:
        authorizer = self._acls.snapshot()
        action = Action.on(operation, ResourceType.CLUSTER, "kafka-cluster")
        host = java_host_address(ctx.client_host) if ctx.client_host else ctx.client_host
        decision = authorizer.authorize(ctx.principal, host, action)
        session = EdgeSession(ctx.principal, ctx.client_host, ctx.connection_id)
        self._audit(Decided(session, host, action, decision, request))
        return decision.allowed

    async def describe(self, ctx: RequestContext, version: int, body: Body) -> Body:
        if not self._allowed(ctx, AclOperation.DESCRIBE, "DescribeAcls"):
            return {"error_code": _CAF, "error_message": _CAF.default_message, "resources": []}
        try:
            found = check_describe_filter(_fields(body), version)
        except MalformedAclRequest as exc:
            raise CloseRequest(str(exc)) from None
        try:
            bindings = self._store.describe_acls(found)
        except ACL_STORE_ERRORS as exc:
            return {"error_code": ErrorCode.UNKNOWN_SERVER_ERROR, "error_message": str(exc)}
        return {"error_code": 0, "error_message": None, "resources": _resources(bindings)}

    async def create(self, ctx: RequestContext, version: int, body: Body) -> Body:
        creations = body["creations"]
        if not self._allowed(ctx, AclOperation.ALTER, "CreateAcls"):
            return {"results": [{"error_code": _CAF, "error_message": _CAF.default_message}
                                for _ in creations]}  # fmt: skip
        try:
            checked = check_create_acls(
                [AclCreation(c["resource_type"], c["resource_name"], c["resource_pattern_type"],
                             c["principal"], c["host"], c["operation"], c["permission_type"])
                 for c in creations],
                version,
                zookeeper=self._zookeeper,
            )  # fmt: skip
        except MalformedAclRequest as exc:
            raise CloseRequest(str(exc)) from None
        valid = [result.binding for result in checked if result.binding is not None]
        stored = await self._stored(lambda: self._store.create_acls(valid), len(valid))
        answers: list[Body] = []
        done = iter(stored)
        for result in checked:
            if result.binding is None:
                answers.append({"error_code": result.error, "error_message": result.message})
            else:
                outcome = next(done)
                answers.append({"error_code": outcome[0], "error_message": outcome[1]})
        return {"results": answers}

    async def _stored(self, write: Callable[[], list[Any]], count: int) -> list[tuple[int, Any]]:
        """Each written item's ``(error, message)``: the store's, or its failure's."""
        if not count:
            return []
        try:
            results = await asyncio.get_running_loop().run_in_executor(None, write)
        except ACL_STORE_ERRORS as exc:
            return [(ErrorCode.UNKNOWN_SERVER_ERROR, str(exc))] * count
        self._acls.refresh()
        return [(result.error, result.message) for result in results]

    async def delete(self, ctx: RequestContext, version: int, body: Body) -> Body:
        filters = body["filters"]
        if not self._allowed(ctx, AclOperation.ALTER, "DeleteAcls"):
            return {"filter_results": [{"error_code": _CAF, "error_message": _CAF.default_message}
                                       for _ in filters]}  # fmt: skip
        try:
            checked = check_delete_filters(
                [_fields(f) for f in filters], version, zookeeper=self._zookeeper
            )
        except MalformedAclRequest as exc:
            raise CloseRequest(str(exc)) from None
        valid = [result.filter for result in checked if result.error == ErrorCode.NONE]
        try:
            deleted = (
                await asyncio.get_running_loop().run_in_executor(
                    None, lambda: self._store.delete_acls(valid)
                )
                if valid
                else []
            )
        except ACL_STORE_ERRORS as exc:
            failed: Body = {"error_code": ErrorCode.UNKNOWN_SERVER_ERROR, "error_message": str(exc)}
            return {"filter_results": [failed for _ in filters]}
        self._acls.refresh()
        done = iter(deleted)
        results: list[Body] = []
        for result in checked:
            if result.error != ErrorCode.NONE:
                results.append({"error_code": result.error, "error_message": result.message})
                continue
            outcome = next(done)
            matching = [
                {"error_code": m.error, "error_message": m.message, **_binding_fields(m.binding)}
                for m in outcome.matches
            ]
            results.append({"error_code": outcome.error, "error_message": outcome.message,
                            "matching_acls": matching})  # fmt: skip
        return {"filter_results": results}


def acl_handlers(
    config: EndpointConfig, store: AclStore | None
) -> tuple[EdgeAcls | None, dict[int, Handler]]:
    """The edge's ACLs (``authorizer.class.name``), and the ACL RPCs answered on
    them when they are kept in ``store``."""
    acls = edge_acls(config, store)
    if acls is None or store is None:
        return acls, {}
    rpcs = AclRpcs(store, acls, zookeeper=config.store.scheme == "zookeeper")
    return acls, {
        ApiKey.DESCRIBE_ACLS: rpcs.describe,
        ApiKey.CREATE_ACLS: rpcs.create,
        ApiKey.DELETE_ACLS: rpcs.delete,
    }
