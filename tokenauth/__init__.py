"""KIP-48 delegation tokens for Kafka-compatible SCRAM servers.

The core is pure: :class:`TokenManager` applies Kafka's rules for create,
renew, expire and describe over an injected :class:`TokenStore`, clock and
randomness, and returns results carrying Kafka's error codes.
:class:`TokenCache` keeps, in every process, the HMACs and the SCRAM
credentials derived from them, following the store's changes.
:class:`TokenCredentialProvider` answers a :class:`sasl_scram.ScramServer`'s
credential request for ``tokenauth=true`` logins.

Stores: :class:`InMemoryTokenStore`, :class:`SQLiteTokenStore` and
:class:`ZooKeeperTokenStore` (Kafka's ZooKeeper layout; needs kazoo).
See docs/tokens.md.
"""

from __future__ import annotations

from tokenauth._cache import TokenCache, TokenCredentials
from tokenauth._client import DelegationTokenClient, TokenRequestError
from tokenauth._config import (
    DEFAULT_EXPIRY_CHECK_INTERVAL_MS,
    DEFAULT_EXPIRY_TIME_MS,
    DEFAULT_MAX_LIFETIME_MS,
    EXPIRY_CHECK_INTERVAL_KEY,
    EXPIRY_TIME_KEY,
    MASTER_KEY,
    MAX_LIFETIME_KEY,
    SECRET_KEY,
    TokenConfig,
    TokenSecrets,
    parse_secret_list,
)
from tokenauth._errors import (
    TokenConfigError,
    TokenError,
    TokenStoreError,
    TokenStoreUnavailable,
    TokenUsageError,
)
from tokenauth._manager import (
    AclOperation,
    Authorizer,
    RequestContext,
    ResourceType,
    TokenManager,
    wall_clock_ms,
)
from tokenauth._provider import TokenCredentialProvider, UserLookup
from tokenauth._results import (
    CreateTokenResult,
    DescribeTokensResult,
    ExpireTokenResult,
    RenewTokenResult,
)
from tokenauth._sweeper import ExpirySweeper
from tokenauth._token import (
    DelegationToken,
    TokenInformation,
    compute_hmac,
    hmac_base64,
    new_token_id,
)
from tokenauth.stores import (
    InMemoryTokenStore,
    MalformedToken,
    SQLiteTokenStore,
    TokenListener,
    TokenStore,
    ZooKeeperTokenStore,
    decode_token,
    encode_token,
    open_token_store,
)

__all__ = [
    "DEFAULT_EXPIRY_CHECK_INTERVAL_MS",
    "DEFAULT_EXPIRY_TIME_MS",
    "DEFAULT_MAX_LIFETIME_MS",
    "EXPIRY_CHECK_INTERVAL_KEY",
    "EXPIRY_TIME_KEY",
    "MASTER_KEY",
    "MAX_LIFETIME_KEY",
    "SECRET_KEY",
    "AclOperation",
    "Authorizer",
    "CreateTokenResult",
    "DelegationToken",
    "DelegationTokenClient",
    "DescribeTokensResult",
    "ExpireTokenResult",
    "ExpirySweeper",
    "InMemoryTokenStore",
    "MalformedToken",
    "RenewTokenResult",
    "RequestContext",
    "ResourceType",
    "SQLiteTokenStore",
    "TokenCache",
    "TokenConfig",
    "TokenConfigError",
    "TokenCredentialProvider",
    "TokenCredentials",
    "TokenError",
    "TokenInformation",
    "TokenListener",
    "TokenManager",
    "TokenRequestError",
    "TokenSecrets",
    "TokenStore",
    "TokenStoreError",
    "TokenStoreUnavailable",
    "TokenUsageError",
    "UserLookup",
    "ZooKeeperTokenStore",
    "compute_hmac",
    "decode_token",
    "encode_token",
    "hmac_base64",
    "new_token_id",
    "open_token_store",
    "parse_secret_list",
    "wall_clock_ms",
]
