"""The user's own SCRAM login, which the supervisor uses for token RPCs.

Kafka refuses token requests over a token login, so the supervisor needs the
user's credentials: from a ``client.properties`` file, a ``sasl.jaas.config``
line, or a secret the caller holds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Mapping

import jaas
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import KafkaConnectionError
from sasl_scram.admin import SaslCredentials
from sasl_scram.config import ClientConfig
from sasl_scram.config import ClientConfigError
from sasl_scram.kafka import ErrorCode
from tokenauth._client import DelegationTokenClient
from tokenauth.spark._options import _DEFAULT_MECHANISM
from tokenauth.spark._options import _DEFAULT_PROTOCOL
from tokenauth.spark._options import TokenLike
from tokenauth.spark._policy import TokenClient

__all__ = ["client_properties_login", "jaas_login", "secret_login"]


def client_properties_login(path: str) -> ClientConfig:
    """The login in a Kafka ``client.properties`` file (``bootstrap.servers``,
    ``security.protocol``, ``sasl.mechanism``, ``sasl.jaas.config``)."""
    return ClientConfig.from_file(path)


def jaas_login(
    bootstrap_servers: str,
    jaas_config: str,
    mechanism: str = _DEFAULT_MECHANISM,
    security_protocol: str = _DEFAULT_PROTOCOL,
    properties: Mapping[str, str] | None = None,
) -> ClientConfig:
    """The login in a ``sasl.jaas.config`` value (a ScramLoginModule line).

    ``properties`` adds client properties such as ``ssl.truststore.location``.
    """
    return ClientConfig.from_properties(
        {
            **(properties or {}),
            "bootstrap.servers": bootstrap_servers,
            "security.protocol": security_protocol,
            "sasl.mechanism": mechanism,
            "sasl.jaas.config": jaas_config,
        }
    )


def secret_login(
    bootstrap_servers: str,
    username: str,
    password: str,
    mechanism: str = _DEFAULT_MECHANISM,
    security_protocol: str = _DEFAULT_PROTOCOL,
    properties: Mapping[str, str] | None = None,
) -> ClientConfig:
    """The login for a user name and a password the caller holds."""
    return jaas_login(
        bootstrap_servers,
        jaas.scram_login_line(username, password),
        mechanism,
        security_protocol,
        properties,
    )


def token_rpc_connector(config: ClientConfig, timeout: float) -> Callable[[], TokenClient]:
    """Open token RPC connections with the user's own login in ``config``."""
    if not config.uses_sasl:
        raise ClientConfigError("security.protocol: the token login needs SASL")
    if config.token_auth:
        # Kafka refuses token requests over token logins
        # (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED): require the user's own.
        raise ClientConfigError(
            "sasl.jaas.config: a token login cannot create tokens; use the user's SCRAM login"
        )
    config.require_credentials()
    return lambda: DelegationTokenClient.connect(config, timeout=timeout)


def token_login_probe(config: ClientConfig, timeout: float) -> Callable[[TokenLike, float], bool]:
    """Whether the brokers of ``config`` take a new token's login yet.

    CreateDelegationToken answers once the token is stored; the brokers learn
    it later: in KRaft from the metadata log (``DelegationTokenPublisher``), in
    ZooKeeper mode, but for the broker asked, from a change notification. A
    query started before then fails, because Kafka's clients do not retry a
    refused login. The probe logs in with the token on every bootstrap broker
    (over the login's transport, with the login's mechanism: a token has
    credentials for every SCRAM mechanism). Unreachable brokers are skipped;
    if none is reachable, the connection error is raised.

    The returned check takes the token and the seconds it may spend: each
    connection's timeout is ``timeout`` or the time left, whichever is less,
    and a check whose time is up before it reached every broker says no.
    """
    mechanism, _, _ = config.require_credentials()
    ssl_context = config.ssl_context()
    servers = config.bootstrap_list()

    def accepted(token: TokenLike, within_s: float) -> bool:
        deadline = time.monotonic() + within_s
        credentials = SaslCredentials(mechanism, token.token_id, token.hmac_base64, True)
        unreachable: KafkaConnectionError | None = None
        reached = asked = 0
        for server in servers:
            left_s = deadline - time.monotonic()
            if left_s <= 0:
                break  # out of time: the brokers not asked are not known to take it
            asked += 1
            try:
                with KafkaConnection(
                    server, credentials, ssl_context=ssl_context, timeout=min(timeout, left_s)
                ):
                    reached += 1
            except KafkaConnectionError as exc:
                if exc.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED:
                    return False
                if left_s < timeout and time.monotonic() >= deadline:
                    # Cut short by the deadline, not refused: not known yet, and
                    # the wait's own "did not take token within" says why.
                    return False
                unreachable = exc
        if not reached and unreachable is not None:
            raise unreachable
        return reached > 0 and asked == len(servers)

    return accepted
