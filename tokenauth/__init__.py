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

from ._cache import TokenCache, TokenCredentials
from ._client import DelegationTokenClient, TokenRequestError
from ._config import (
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
from ._errors import (
    TokenConfigError,
    TokenError,
    TokenStoreError,
    TokenStoreUnavailable,
    TokenUsageError,
)
from ._manager import (
    AclOperation,
    Authorizer,
    RequestContext,
    ResourceType,
    TokenManager,
    wall_clock_ms,
)
from ._open import open_token_store
from ._provider import TokenCredentialProvider, UserLookup
from ._results import (
    CreateTokenResult,
    DescribeTokensResult,
    ExpireTokenResult,
    RenewTokenResult,
    TokenErrorCode,
)
from ._sqlite import SQLiteTokenStore
from ._store import InMemoryTokenStore, TokenListener, TokenStore
from ._sweeper import ExpirySweeper
from ._token import (
    DelegationToken,
    TokenInformation,
    compute_hmac,
    hmac_base64,
    new_token_id,
)
from ._zkformat import MalformedToken, decode_token, encode_token
from ._zookeeper import ZooKeeperTokenStore

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
    "TokenErrorCode",
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
