"""``DelegationTokenClient``: KIP-48's client over the Kafka protocol.

Speaks API keys 38-41 to any Kafka 3.x/4.x broker (or our endpoint) at the
highest common version, logging in with our SCRAM client. Kafka 4.x removed v0
of these RPCs; version negotiation picks v1+ there automatically.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sasl_scram import KafkaPrincipal
from sasl_scram.admin import KafkaConnection
from sasl_scram.config import ClientConfig
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode
from tokenauth._errors import TokenError
from tokenauth._token import DelegationToken
from tokenauth._token import TokenInformation

__all__ = ["DelegationTokenClient", "TokenRequestError"]


def kafka_exception_text(error: ErrorCode, message: str) -> str:
    """``toString()`` of Kafka's exception for ``error``: every one lives in
    ``org.apache.kafka.common.errors`` (``Errors.java``)."""
    return f"org.apache.kafka.common.errors.{error.exception_name}: {message}"


class TokenRequestError(TokenError):
    """The broker refused a token request.

    Attributes:
        error_code: Kafka's error code (61-67, ...).
        kafka_message: What Kafka's admin client reports for it,
            ``org.apache.kafka.common.errors.<Exception>: <message>``
            (the exception's ``toString``, which Kafka's tools print).
    """

    def __init__(self, operation: str, error_code: int, message: str | None = None) -> None:
        try:
            error = ErrorCode(error_code)
        except ValueError:
            # Kafka's Errors.forCode maps a code it does not know to UNKNOWN_SERVER_ERROR.
            text = message or f"error code {error_code}"
            self.kafka_message = kafka_exception_text(ErrorCode.UNKNOWN_SERVER_ERROR, text)
        else:
            # Token responses carry no message: Kafka's exception has the code's default.
            text = message or error.default_message
            self.kafka_message = kafka_exception_text(error, text)
        super().__init__(f"{operation} failed: {text} (error {error_code})")
        self.error_code = error_code


def _wire(p: KafkaPrincipal) -> dict[str, str]:
    return {"principal_type": p.principal_type, "principal_name": p.name}


class DelegationTokenClient:
    """Create, renew, expire and describe delegation tokens.

    Args:
        connection: An authenticated connection (see :meth:`connect`).
    """

    def __init__(self, connection: KafkaConnection) -> None:
        self._conn = connection

    @classmethod
    def connect(
        cls, config: ClientConfig, bootstrap_servers: str | None = None, timeout: float = 30.0
    ) -> DelegationTokenClient:
        """Log in with the SCRAM credentials of a client configuration."""
        return cls(KafkaConnection.from_config(config, bootstrap_servers, timeout))

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> DelegationTokenClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _call(self, api_key: ApiKey, body: dict[str, Any]) -> dict[str, Any]:
        """One request; connection problems raise :class:`KafkaConnectionError`."""
        return self._conn.request(api_key, body)

    def create_token(
        self,
        renewers: Sequence[KafkaPrincipal] = (),
        max_lifetime_ms: int = -1,
        owner: KafkaPrincipal | None = None,
    ) -> DelegationToken:
        """CreateDelegationToken; ``max_lifetime_ms=-1`` means the server maximum."""
        body = {
            "owner_principal_type": owner.principal_type if owner else None,
            "owner_principal_name": owner.name if owner else None,
            "renewers": [_wire(r) for r in renewers],
            "max_lifetime_ms": max_lifetime_ms,
        }
        version = self._conn.version_for(ApiKey.CREATE_DELEGATION_TOKEN) if owner is not None else 3
        if version < 3:
            # The message Kafka's generated CreateDelegationTokenRequestData raises:
            # its write() checks ownerPrincipalType first, and the admin client
            # sets both owner fields.
            raise TokenRequestError(
                "create",
                ErrorCode.UNSUPPORTED_VERSION,
                f"Attempted to write a non-default ownerPrincipalType at version {version}",
            )
        r = self._call(ApiKey.CREATE_DELEGATION_TOKEN, body)
        if r["error_code"] != 0:
            raise TokenRequestError("create", r["error_code"])
        owner_p = KafkaPrincipal(r["principal_type"], r["principal_name"])
        requester = (
            KafkaPrincipal(r["token_requester_principal_type"], r["token_requester_principal_name"])
            if r.get("token_requester_principal_name")
            else owner_p
        )
        info = TokenInformation(
            r["token_id"],
            owner_p,
            requester,
            tuple(renewers),
            r["issue_timestamp_ms"],
            r["expiry_timestamp_ms"],
            r["max_timestamp_ms"],
        )
        return DelegationToken(info, r["hmac"])

    def renew_token(self, hmac: bytes, renew_period_ms: int = -1) -> int:
        """RenewDelegationToken; returns the new expiry timestamp (ms)."""
        r = self._call(
            ApiKey.RENEW_DELEGATION_TOKEN, {"hmac": hmac, "renew_period_ms": renew_period_ms}
        )
        if r["error_code"] != 0:
            raise TokenRequestError("renew", r["error_code"])
        return int(r["expiry_timestamp_ms"])

    def expire_token(self, hmac: bytes, expiry_period_ms: int = -1) -> int:
        """ExpireDelegationToken; ``-1`` (the default, as in Kafka's admin client)
        expires it now. Returns the new expiry timestamp (ms)."""
        r = self._call(
            ApiKey.EXPIRE_DELEGATION_TOKEN,
            {"hmac": hmac, "expiry_time_period_ms": expiry_period_ms},
        )
        if r["error_code"] != 0:
            raise TokenRequestError("expire", r["error_code"])
        return int(r["expiry_timestamp_ms"])

    def describe_tokens(
        self, owners: Sequence[KafkaPrincipal] | None = None
    ) -> list[DelegationToken]:
        """DescribeDelegationToken; ``None`` lists every token the caller may see."""
        body = {"owners": None if owners is None else [_wire(o) for o in owners]}
        r = self._call(ApiKey.DESCRIBE_DELEGATION_TOKEN, body)
        if r["error_code"] != 0:
            raise TokenRequestError("describe", r["error_code"])
        tokens = []
        for t in r["tokens"]:
            owner = KafkaPrincipal(t["principal_type"], t["principal_name"])
            requester = (
                KafkaPrincipal(
                    t["token_requester_principal_type"], t["token_requester_principal_name"]
                )
                if t.get("token_requester_principal_name")
                else owner
            )
            info = TokenInformation(
                t["token_id"],
                owner,
                requester,
                tuple(
                    KafkaPrincipal(p["principal_type"], p["principal_name"]) for p in t["renewers"]
                ),
                t["issue_timestamp"],
                t["expiry_timestamp"],
                t["max_timestamp"],
            )
            tokens.append(DelegationToken(info, t["hmac"]))
        return tokens
