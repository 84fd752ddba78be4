"""The ZooKeeper backend, in the layout a Kafka 3.x broker in ZooKeeper mode uses.

Besides :class:`ZooKeeperCredentialStore` and :class:`ZooKeeperAclStore`
(``AclAuthorizer``'s nodes) it exports the pieces a token store
reuses: the base of a followed store (:class:`ZkFollowedStore`: session, change
watcher, staleness and fail-closed bookkeeping, pipelined reads, multi-op
commits with their notification and their optimistic retry,
:data:`MAX_WRITE_ATTEMPTS`), the session (:class:`ZkSession`: bounded
requests, fail-closed errors, every create with its path's ACL), the change-notification watcher
(:class:`ZkChangeWatcher`), the SASL and ACL choices (:class:`ZooKeeperSecurity`),
TLS (:class:`ZooKeeperTls`), the server-properties keys and their typed
options (:data:`ZOOKEEPER_KEYS`, :class:`ZooKeeperOptions`) and Kafka's
``Sanitizer`` for znode names.
kazoo is imported only when a session is opened.
"""

from __future__ import annotations

from sasl_scram.store.zookeeper._acls import ZooKeeperAclStore
from sasl_scram.store.zookeeper._followed import MAX_WRITE_ATTEMPTS
from sasl_scram.store.zookeeper._followed import CommitOutcomeUnknown
from sasl_scram.store.zookeeper._followed import CommitRefused
from sasl_scram.store.zookeeper._followed import ZkFollowedStore
from sasl_scram.store.zookeeper._followed import ZkStoreKind
from sasl_scram.store.zookeeper._format import MalformedZnode
from sasl_scram.store.zookeeper._format import credentials_from_config
from sasl_scram.store.zookeeper._format import decode_config
from sasl_scram.store.zookeeper._format import notification_user
from sasl_scram.store.zookeeper._format import parse_sequence
from sasl_scram.store.zookeeper._options import DEFAULT_SESSION_TIMEOUT_MS
from sasl_scram.store.zookeeper._options import ZOOKEEPER_KEYS
from sasl_scram.store.zookeeper._options import ZooKeeperOptions
from sasl_scram.store.zookeeper._sanitizer import SanitizerError
from sasl_scram.store.zookeeper._sanitizer import desanitize
from sasl_scram.store.zookeeper._sanitizer import sanitize
from sasl_scram.store.zookeeper._security import CONTEXT_KEY
from sasl_scram.store.zookeeper._security import JAAS_FILE_KEY
from sasl_scram.store.zookeeper._security import SET_ACL_KEY
from sasl_scram.store.zookeeper._security import ZooKeeperSecurity
from sasl_scram.store.zookeeper._session import DEFAULT_REQUEST_TIMEOUT
from sasl_scram.store.zookeeper._session import ZkSession
from sasl_scram.store.zookeeper._session import load_kazoo
from sasl_scram.store.zookeeper._store import ZooKeeperCredentialStore
from sasl_scram.store.zookeeper._tls import TLS_KEYS
from sasl_scram.store.zookeeper._tls import ZooKeeperTls
from sasl_scram.store.zookeeper._watcher import DEFAULT_NOTIFICATION_EXPIRY
from sasl_scram.store.zookeeper._watcher import ChangeFeed
from sasl_scram.store.zookeeper._watcher import ZkChangeWatcher

__all__ = [
    "CONTEXT_KEY",
    "DEFAULT_NOTIFICATION_EXPIRY",
    "DEFAULT_REQUEST_TIMEOUT",
    "DEFAULT_SESSION_TIMEOUT_MS",
    "JAAS_FILE_KEY",
    "MAX_WRITE_ATTEMPTS",
    "SET_ACL_KEY",
    "TLS_KEYS",
    "ZOOKEEPER_KEYS",
    "ChangeFeed",
    "CommitOutcomeUnknown",
    "CommitRefused",
    "MalformedZnode",
    "SanitizerError",
    "ZkChangeWatcher",
    "ZkFollowedStore",
    "ZkSession",
    "ZkStoreKind",
    "ZooKeeperAclStore",
    "ZooKeeperCredentialStore",
    "ZooKeeperOptions",
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
