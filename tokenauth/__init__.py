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

# One distribution holds both packages: one version.
from sasl_scram import __version__ as __version__
from tokenauth._cache import TokenCache
from tokenauth._cache import TokenCredentials
from tokenauth._client import DelegationTokenClient
from tokenauth._client import TokenRequestError
from tokenauth._config import DEFAULT_EXPIRY_CHECK_INTERVAL_MS
from tokenauth._config import DEFAULT_EXPIRY_TIME_MS
from tokenauth._config import DEFAULT_MAX_LIFETIME_MS
from tokenauth._config import EXPIRY_CHECK_INTERVAL_KEY
from tokenauth._config import EXPIRY_TIME_KEY
from tokenauth._config import MASTER_KEY
from tokenauth._config import MAX_LIFETIME_KEY
from tokenauth._config import SECRET_KEY
from tokenauth._config import TokenConfig
from tokenauth._config import TokenSecrets
from tokenauth._config import parse_secret_list
from tokenauth._errors import TokenConfigError
from tokenauth._errors import TokenError
from tokenauth._errors import TokenStoreError
from tokenauth._errors import TokenStoreUnavailable
from tokenauth._errors import TokenUsageError
from tokenauth._manager import AclOperation
from tokenauth._manager import Authorizer
from tokenauth._manager import ResourceType
from tokenauth._manager import TokenManager
from tokenauth._manager import TokenRequester
from tokenauth._manager import wall_clock_ms
from tokenauth._provider import TokenCredentialProvider
from tokenauth._provider import UserLookup
from tokenauth._results import CreateTokenResult
from tokenauth._results import DescribeTokensResult
from tokenauth._results import ExpireTokenResult
from tokenauth._results import RenewTokenResult
from tokenauth._sweeper import ExpirySweeper
from tokenauth._token import DelegationToken
from tokenauth._token import TokenInformation
from tokenauth._token import compute_hmac
from tokenauth._token import hmac_base64
from tokenauth._token import new_token_id
from tokenauth.stores import InMemoryTokenStore
from tokenauth.stores import MalformedToken
from tokenauth.stores import SQLiteTokenStore
from tokenauth.stores import TokenListener
from tokenauth.stores import TokenStore
from tokenauth.stores import ZooKeeperTokenStore
from tokenauth.stores import decode_token
from tokenauth.stores import encode_token
from tokenauth.stores import open_token_store

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
    "TokenRequester",
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
