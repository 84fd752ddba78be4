"""A request's own error response, as Kafka's ``AbstractRequest.getErrorResponse``
builds it for each API.

The endpoint answers with it where Kafka does: a request other than
SaslAuthenticate after SaslHandshake v1 (``SaslServerAuthenticator``: error 34,
then the connection closes), and a request its sender may not make (error 31).
Most APIs carry the error at top level; the KIP-554 ones and
DescribeClientQuotas also shape their lists, as Kafka's request classes do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ApiSpec

__all__ = ["error_response"]

Body = dict[str, Any]


def _alter_scram_results(request: Body, code: int, message: str | None) -> Body:
    # AlterUserScramCredentialsRequest: every distinct user of the deletions and
    # upsertions, sorted, each with the error.
    names = {d["name"] for d in request.get("deletions") or ()}
    names.update(u["name"] for u in request.get("upsertions") or ())
    return {
        "results": [
            {"user": name, "error_code": code, "error_message": message} for name in sorted(names)
        ]
    }


def _describe_scram_results(request: Body, code: int, message: str | None) -> Body:
    # DescribeUserScramCredentialsRequest: one result per requested user, its
    # User left unset ("").
    return {
        "results": [
            {"user": "", "error_code": code, "error_message": message}
            for _ in request.get("users") or ()
        ]
    }


def _no_quota_entries(request: Body, code: int, message: str | None) -> Body:
    # DescribeClientQuotasRequest: Entries null.
    return {"entries": None}


_LISTS: dict[int, Callable[[Body, int, str | None], Body]] = {
    ApiKey.ALTER_USER_SCRAM_CREDENTIALS: _alter_scram_results,
    ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS: _describe_scram_results,
    ApiKey.DESCRIBE_CLIENT_QUOTAS: _no_quota_entries,
}


def error_response(
    spec: ApiSpec, code: int, message: str | None = None, request: Body | None = None
) -> Body:
    """A response body with ``code`` (and ``message``) where Kafka's ``getErrorResponse``
    for ``spec``'s API puts them; ``request`` is the decoded request it answers."""
    body: Body = {}
    names = {f.name for f in spec.response.fields}
    if "error_code" in names:
        body["error_code"] = code
    if "error_message" in names:
        body["error_message"] = message
    for stamp in ("issue_timestamp_ms", "expiry_timestamp_ms", "max_timestamp_ms"):
        if stamp in names:
            body[stamp] = -1
    lists = _LISTS.get(spec.key)
    if lists is not None:
        body.update(lists(request or {}, code, message))
    return body
