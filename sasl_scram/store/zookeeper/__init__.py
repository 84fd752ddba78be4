"""The ZooKeeper backend, in the layout a Kafka 3.x broker in ZooKeeper mode uses.

Besides :class:`ZooKeeperCredentialStore` it exports the pieces a token store
reuses: the base of a followed store (:class:`ZkFollowedStore`: session, change
watcher, staleness and fail-closed bookkeeping, pipelined reads, multi-op
commits with their notification and their optimistic retry,
:data:`MAX_WRITE_ATTEMPTS`), the session (:class:`ZkSession`: bounded
requests, fail-closed errors, every create with its path's ACL), the change-notification watcher
(:class:`ZkChangeWatcher`), the SASL and ACL choices (:class:`ZooKeeperSecurity`),
TLS (:class:`ZooKeeperTls`) and Kafka's ``Sanitizer`` for znode names.
kazoo is imported only when a session is opened.
"""

from __future__ import annotations

from sasl_scram.store.zookeeper._followed import (
    MAX_WRITE_ATTEMPTS,
    CommitOutcomeUnknown,
    CommitRefused,
    ZkFollowedStore,
    ZkStoreKind,
)
from sasl_scram.store.zookeeper._format import (
    MalformedZnode,
    credentials_from_config,
    decode_config,
    notification_user,
    parse_sequence,
)
from sasl_scram.store.zookeeper._sanitizer import (
    SanitizerError,
    desanitize,
    sanitize,
)
from sasl_scram.store.zookeeper._security import (
    CONTEXT_KEY,
    JAAS_FILE_KEY,
    SET_ACL_KEY,
    ZooKeeperSecurity,
)
from sasl_scram.store.zookeeper._session import (
    DEFAULT_REQUEST_TIMEOUT,
    ZkSession,
    load_kazoo,
)
from sasl_scram.store.zookeeper._store import (
    ZooKeeperCredentialStore,
)
from sasl_scram.store.zookeeper._tls import (
    TLS_KEYS,
    ZooKeeperTls,
)
from sasl_scram.store.zookeeper._watcher import (
    DEFAULT_NOTIFICATION_EXPIRY,
    ZkChangeWatcher,
)

__all__ = [
    "CONTEXT_KEY",
    "DEFAULT_NOTIFICATION_EXPIRY",
    "DEFAULT_REQUEST_TIMEOUT",
    "JAAS_FILE_KEY",
    "MAX_WRITE_ATTEMPTS",
    "SET_ACL_KEY",
    "TLS_KEYS",
    "CommitOutcomeUnknown",
    "CommitRefused",
    "MalformedZnode",
    "SanitizerError",
    "ZkChangeWatcher",
    "ZkFollowedStore",
    "ZkSession",
    "ZkStoreKind",
    "ZooKeeperCredentialStore",
    "ZooKeeperSecurity",
    "ZooKeeperTls",
    "credentials_from_config",
    "decode_config",
    "desanitize",
    "load_kazoo",
    "notification_user",
    "parse_sequence",
    "sanitize",
]
