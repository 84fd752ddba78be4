"""The owner-token issuer over the Kafka protocol: the front door's ``TokenIssuer``.

The ``upstream.`` login asks the cluster for a delegation token owned by an
edge user (CreateDelegationToken v3's owner fields, KIP-373, Kafka 3.3+), then
renews and expires it. Kafka lets only a token's owner and its renewers renew
or expire it, not the login that asked for it (``TokenInformation
.ownerOrRenewer``), so every token names the upstream login as its renewer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from sasl_scram.admin._connection import KafkaConnection
from sasl_scram.admin._connection import KafkaConnectionError
from sasl_scram.config import ClientConfig
from sasl_scram.config import ClientConfigError
from sasl_scram.frontdoor import IssuedToken
from sasl_scram.frontdoor import OwnerTokenError
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode

__all__ = ["ClusterTokenIssuer", "refusal_message"]

#: CreateDelegationToken carries an owner from v3 (KIP-373, Kafka 3.3).
OWNER_VERSION = 3
_USER = "User"
# A period of -1 asks for the cluster's own: max lifetime at create
# (delegation.token.max.lifetime.ms), the expiry period at renew
# (delegation.token.expiry.time.ms); at expire it means now.
_CLUSTER_DEFAULT = -1
#: A connection unused for this long is replaced before the next request: Kafka
#: closes idle connections after ``connections.max.idle.ms`` (10 minutes).
IDLE_RECONNECT_S = 300.0
# A connection whose KIP-368 session is this far through is replaced: this
# client does not re-authenticate, and the broker closes an expired session.
_SESSION_FRACTION = 0.9

_FIXES: dict[ErrorCode, str] = {
    ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED: (
        "the cluster has delegation tokens disabled: set delegation.token.secret.key "
        "on every broker and controller"
    ),
    ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED: (
        "the cluster takes token requests only over SASL and not from a login that is "
        "itself a delegation token: give upstream.sasl.jaas.config a user's login "
        "(not tokenauth=true) over SASL_PLAINTEXT or SASL_SSL"
    ),
    ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED: (
        "the upstream login {login!r} may not create tokens for User:{owner}: grant it "
        "CreateTokens on that user (kafka-acls.sh --add --allow-principal User:{login} "
        "--operation CreateTokens --user-principal User:{owner}) or make it a super user "
        "(super.users)"
    ),
}
_TOO_OLD = (
    "the cluster cannot create tokens owned by other users: CreateDelegationToken "
    "v3 (KIP-373) needs Kafka 3.3 or later"
)


def refusal_message(operation: str, error_code: int, login: str, owner: str = "") -> str:
    """One line for a token RPC the cluster refused: the cause and, when known,
    the fix. ``owner`` is the user the token was for (create only)."""
    try:
        error = ErrorCode(error_code)
    except ValueError:
        return f"owner token {operation} refused by the cluster: error {error_code}"
    fix = _FIXES.get(error)
    if fix is not None:
        return fix.format(login=login, owner=owner)
    return f"owner token {operation} refused by the cluster: {error.name} ({error.default_message})"


class ClusterTokenIssuer:
    """CreateDelegationToken (owner, v3+), Renew and Expire as the ``upstream.`` login.

    One connection, opened on first use and replaced when it fails, has been
    idle for :data:`IDLE_RECONNECT_S` or its session nears its end; calls
    from several threads take turns on it.

    Args:
        config: The ``upstream.`` client configuration (``UpstreamConfig.client``):
            its SCRAM login, ``bootstrap.servers``, ``security.protocol``, ``ssl.*``.
        timeout: Socket timeout per request, in seconds.
        connect: Opens an authenticated connection (tests); default
            ``KafkaConnection.from_config(config)``.
        clock: Monotonic seconds (tests).

    Raises:
        OwnerTokenError: the configuration has no SCRAM login.
    """

    def __init__(
        self,
        config: ClientConfig,
        *,
        timeout: float = 30.0,
        connect: Callable[[], KafkaConnection] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        try:
            _, self._login, _ = config.require_credentials()
        except ClientConfigError as exc:
            raise OwnerTokenError(
                f"upstream.identity=owner-token needs a SCRAM login: {exc}"
            ) from None
        self._connect = connect or (lambda: KafkaConnection.from_config(config, timeout=timeout))
        self._clock = clock
        self._conn: KafkaConnection | None = None
        self._opened = self._used = 0.0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ClusterTokenIssuer(login={self._login!r})"

    @property
    def login(self) -> str:
        """The ``upstream.`` login's user name, every token's renewer."""
        return self._login

    # -- the three RPCs -------------------------------------------------------------
    def create(self, owner: str) -> IssuedToken:
        """A token owned by ``User:<owner>``, renewable by the upstream login."""
        body = {
            "owner_principal_type": _USER,
            "owner_principal_name": owner,
            "renewers": [{"principal_type": _USER, "principal_name": self._login}],
            "max_lifetime_ms": _CLUSTER_DEFAULT,
        }
        r = self._call(ApiKey.CREATE_DELEGATION_TOKEN, body, "create", owner)
        if (r["principal_type"], r["principal_name"]) != (_USER, owner):
            # A broker that dropped the owner would hand out the login's own token.
            raise OwnerTokenError(
                f"the cluster issued a token owned by {r['principal_type']}:"
                f"{r['principal_name']}, not User:{owner}"
            )
        return IssuedToken(
            r["token_id"], r["hmac"], int(r["expiry_timestamp_ms"]), int(r["max_timestamp_ms"])
        )

    def renew(self, hmac: bytes) -> int:
        """Renew by the cluster's expiry period; the new expiry (epoch ms)."""
        body = {"hmac": hmac, "renew_period_ms": _CLUSTER_DEFAULT}
        return int(self._call(ApiKey.RENEW_DELEGATION_TOKEN, body, "renew")["expiry_timestamp_ms"])

    def expire(self, hmac: bytes) -> None:
        """Expire now (a negative period, as Kafka's admin client sends by default)."""
        body = {"hmac": hmac, "expiry_time_period_ms": _CLUSTER_DEFAULT}
        self._call(ApiKey.EXPIRE_DELEGATION_TOKEN, body, "expire")

    def close(self) -> None:
        with self._lock:
            self._drop()

    # -- the connection ---------------------------------------------------------------
    def _call(
        self, api_key: ApiKey, body: dict[str, Any], operation: str, owner: str = ""
    ) -> dict[str, Any]:
        with self._lock:
            reused = self._conn is not None and not self._stale()
            try:
                r = self._request(api_key, body)
            except KafkaConnectionError as exc:
                self._drop()
                if not reused or exc.error_code is not None:
                    raise self._failure(exc, operation, owner) from None
                # The broker may have closed a connection that sat unused; a
                # create it never read is asked again on a new one (at worst a
                # token nobody uses lapses at its expiry).
                try:
                    r = self._request(api_key, body)
                except KafkaConnectionError as again:
                    self._drop()
                    raise self._failure(again, operation, owner) from None
        if r["error_code"] != ErrorCode.NONE:
            raise OwnerTokenError(
                refusal_message(operation, r["error_code"], self._login, owner), r["error_code"]
            )
        return r

    def _request(self, api_key: ApiKey, body: dict[str, Any]) -> dict[str, Any]:
        if self._conn is None or self._stale():
            self._drop()
            try:
                self._conn = self._connect()
            except ClientConfigError as exc:  # e.g. a truststore it cannot read
                raise OwnerTokenError(f"upstream.{exc}") from None
            self._opened = self._used = self._clock()
        conn = self._conn
        version = conn.version_for(api_key)
        if api_key == ApiKey.CREATE_DELEGATION_TOKEN and version < OWNER_VERSION:
            raise KafkaConnectionError("no owner field", ErrorCode.UNSUPPORTED_VERSION)
        response = conn.request(api_key, body, version)
        self._used = self._clock()
        return response

    def _stale(self) -> bool:
        assert self._conn is not None
        now = self._clock()
        lifetime_s = self._conn.session_lifetime_ms / 1000
        if lifetime_s > 0 and now - self._opened >= lifetime_s * _SESSION_FRACTION:
            return True
        return now - self._used >= IDLE_RECONNECT_S

    def _drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _failure(self, exc: KafkaConnectionError, operation: str, owner: str) -> OwnerTokenError:
        if exc.error_code == ErrorCode.UNSUPPORTED_VERSION:
            return OwnerTokenError(_TOO_OLD, exc.error_code)
        if exc.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED:
            return OwnerTokenError(
                f"the cluster refused the upstream login {self._login!r}: {exc}", exc.error_code
            )
        return OwnerTokenError(f"owner token {operation}: the cluster is unreachable: {exc}")
