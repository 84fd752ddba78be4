"""The ZooKeeper store: Kafka 3.x ZooKeeper-mode layout with a watch-driven cache.

Writes go to ``/config/users/<sanitized>`` together with a sequential
``/config/changes/config_change_`` notification, in one ZooKeeper multi-op so
that a crash can never leave a change without its notification. Readers
follow the notifications the way ``ZkNodeChangeNotificationListener`` does:
children sorted lexicographically, every sequence above the last one
processed, then a purge of notifications older than 15 minutes.

The session, the notification following and the staleness clock live in
:class:`~sasl_scram.store.zookeeper.ZkFollowedStore` (shared with
``tokenauth``'s token store) and the KIP-554 writes in
:mod:`._writes`; this module holds the cache and the reads. kazoo is
imported only when a store is created, so ``import sasl_scram`` never needs it.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal

from sasl_scram._credential import ScramCredential
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.kafka import ErrorCode
from sasl_scram.store import _kip554
from sasl_scram.store._api import CREDENTIAL_STORE_ERRORS
from sasl_scram.store._api import CredentialStoreUnavailable
from sasl_scram.store._api import DescribeResult
from sasl_scram.store._cache import DEFAULT_LAZY_MAX_USERS
from sasl_scram.store._cache import CredentialCache
from sasl_scram.store.zookeeper._followed import ZkStoreKind
from sasl_scram.store.zookeeper._format import CHANGE_PREFIX
from sasl_scram.store.zookeeper._format import CHANGES_PATH
from sasl_scram.store.zookeeper._format import DEFAULT_ENTITY
from sasl_scram.store.zookeeper._format import USERS_PATH
from sasl_scram.store.zookeeper._format import MalformedZnode
from sasl_scram.store.zookeeper._format import credentials_from_config
from sasl_scram.store.zookeeper._format import decode_config
from sasl_scram.store.zookeeper._format import notification_user
from sasl_scram.store.zookeeper._format import scram_keys
from sasl_scram.store.zookeeper._format import user_path
from sasl_scram.store.zookeeper._multiread import MultiReadUnsupported
from sasl_scram.store.zookeeper._multiread import read_many
from sasl_scram.store.zookeeper._sanitizer import SanitizerError
from sasl_scram.store.zookeeper._sanitizer import desanitize
from sasl_scram.store.zookeeper._session import ZkSession
from sasl_scram.store.zookeeper._watcher import DEFAULT_NOTIFICATION_EXPIRY
from sasl_scram.store.zookeeper._writes import ZkCredentialWrites

if TYPE_CHECKING:
    from kazoo.client import KazooClient

__all__ = ["DEFAULT_NOTIFICATION_EXPIRY", "ZooKeeperCredentialStore"]

_log = logging.getLogger("sasl_scram.store.zookeeper")

# Attempts to read or create the decoy secret while other endpoints race to create it.
_DECOY_ATTEMPTS = 20
# Under a sensitive root (_security.SENSITIVE_ROOTS): owner-only with secure ACLs.
DECOY_SECRET_PATH = "/kafka-scram/secrets/decoy"  # noqa: S105 - a path, not a secret
# multiRead batches: 500 users' znodes (~0.5 KB each) keep a reply well under
# ZooKeeper's default 1 MB jute.maxbuffer.
_MULTIREAD_BATCH = 500
_MULTIREAD_MIN = 50


_KIND = ZkStoreKind(
    what="credential store",
    data_path=USERS_PATH,
    changes=(CHANGES_PATH, CHANGE_PREFIX),
    errors=CREDENTIAL_STORE_ERRORS,
    logger=_log,
    thread_name="scram-zookeeper-store",
)


class ZooKeeperCredentialStore(ZkCredentialWrites, _kip554.AlterByUser):
    """Credentials in ZooKeeper, byte-compatible with Kafka 3.x ZooKeeper mode.

    The constructor connects (when given a connect string), creates the
    ``/config`` paths if needed, loads the cache and starts one background
    thread that follows the change notifications.

    A KIP-554 alter makes one ZooKeeper multi-op per user, each with its
    notification. A user whose write cannot be made gets
    ``UNKNOWN_SERVER_ERROR`` with a message saying whether the change was
    certainly not applied or whether its outcome is unknown (the connection
    dropped mid-request); nothing is queued for later.

    Args:
        zookeeper: A connect string ``host:port[,host:port...][/chroot]``, or a
            kazoo ``KazooClient`` (started or not). A client passed in is not
            stopped by :meth:`close`.
        mode: ``"eager"`` loads every user at start (like a broker);
            ``"lazy"`` fills a bounded cache on demand.
        lazy_max_users: Bound of the lazy cache.
        options: Those of :class:`~sasl_scram.store.zookeeper.ZkFollowedStore`:
            ``max_staleness`` (then lookups raise
            :class:`CredentialStoreUnavailable`), ``notification_expiry``,
            ``request_timeout``, ``session_timeout``, ``security``, ``clock``,
            ``monotonic``.
    """

    kind = _KIND

    def __init__(
        self,
        zookeeper: str | KazooClient,
        *,
        mode: Literal["eager", "lazy"] = "eager",
        lazy_max_users: int = DEFAULT_LAZY_MAX_USERS,
        **options: Any,
    ) -> None:
        if mode not in ("eager", "lazy"):
            raise ValueError(f"mode must be 'eager' or 'lazy', got {mode!r}")
        self._mode = mode
        self._lazy_max_users = lazy_max_users
        self._multiread = True
        super().__init__(zookeeper, **options)

    def _prepare(self, max_staleness: float, monotonic: Callable[[], float]) -> CredentialCache:
        self._cache = CredentialCache(
            lazy=self._mode == "lazy",
            max_users=self._lazy_max_users,
            max_staleness=max_staleness,
            monotonic=monotonic,
        )
        return self._cache

    def __repr__(self) -> str:
        return (
            f"ZooKeeperCredentialStore(mode={self._mode!r}, cached_users={len(self._cache)}, "
            f"state={self._client.state})"
        )

    # -- public API --------------------------------------------------------------

    @property
    def mode(self) -> str:
        return self._mode

    @property
    def lookup_may_block(self) -> bool:
        """Lazy mode reads ZooKeeper on a miss: callers on an event loop use a thread."""
        return self._mode == "lazy"

    def lookup(self, user: str, mechanism: ScramMechanism) -> ScramCredential | None:
        """The cached credential; lazy mode reads ZooKeeper on a miss.

        Raises:
            CredentialStoreUnavailable: ZooKeeper has been unreachable for more
                than ``max_staleness`` (or, in lazy mode, a miss cannot be read).
        """
        cache = self._cache
        if cache.unhealthy:
            cache.check_usable()
        creds = cache.get(user)
        if creds is None:
            creds = self._fill(user)
        return creds.get(mechanism)

    def common_iterations(self, mechanism: ScramMechanism) -> int | None:
        """The most common count among the cached credentials: every user's when
        eager, the cached users' (those that logged in lately) when lazy."""
        return self._cache.iterations.common(mechanism)

    def describe(self, users: Sequence[str] | None = None) -> DescribeResult:
        """KIP-554 describe, read from ZooKeeper itself (not from the cache)."""
        self._check_open()
        try:
            self._require_connected()
            if users:
                configs = self._read_configs([u for u in users if u])
                all_names: Iterable[str] = ()
            else:
                names = self._zk.children(USERS_PATH)
                decoded = {}
                for name in names:
                    user = _desanitize_or_none(name)
                    if user is not None:
                        decoded[user] = name
                configs = self._read_configs(list(decoded))
                all_names = [u for u, cfg in configs.items() if cfg is None or scram_keys(cfg)]
        except CredentialStoreUnavailable as exc:
            return DescribeResult((), ErrorCode.UNKNOWN_SERVER_ERROR, str(exc))

        def read(user: str) -> dict[ScramMechanism, int] | None:
            if user not in configs:
                return None
            config = configs[user]
            if config is None:
                raise _kip554.UnreadableUser(user)
            present = scram_keys(config)
            creds = credentials_from_config(config, "describe")
            if set(creds) != present:
                raise _kip554.UnreadableUser(user)
            return {m: c.iterations for m, c in creds.items()}

        return _kip554.describe_users(users, read, lambda: all_names)

    def _altered(self, users: list[str]) -> None:
        for user in users:
            self._after_own_write(user)

    def decoy_secret(self) -> bytes:
        """The decoy secret znode, created once (with the sensitive ACL) by the first asker."""
        self._check_open()
        return _decoy_secret(self._zk, self._client)

    # -- cache filling -------------------------------------------------------------

    def _fill(self, user: str) -> Mapping[ScramMechanism, ScramCredential]:
        """Lazy miss: read one user and cache it unless invalidated meanwhile."""
        epoch = self._cache.epoch
        if self._cache.disconnected:
            raise CredentialStoreUnavailable("ZooKeeper is unreachable; cannot load credentials")
        try:
            configs = self._read_configs([user])
        except CredentialStoreUnavailable:
            raise
        config = configs.get(user) or {}
        creds = credentials_from_config(config, "user")
        self._cache.fill(user, creds, epoch)
        return creds

    def _reread(self, users: Sequence[str]) -> list[str]:
        """Bring the cache up to date for ``users``; returns those that changed."""
        if self._cache.lazy:
            for user in users:
                self._cache.invalidate(user)
            return list(users)
        configs = self._read_configs(users)
        return [
            user
            for user in users
            if self._cache.put(user, credentials_from_config(configs.get(user) or {}, "user"))
        ]

    # -- following the notifications (see _zk_watcher) ------------------------

    def _reload(self) -> list[str]:
        """The resync's full reload; returns the users whose credentials changed."""
        if self._cache.lazy:
            return self._cache.clear()
        with self._lock:
            return self._cache.replace_all(self._load_all())

    def _on_notification(self, name: str, data: bytes) -> None:
        """One ``config_change_`` notification: re-read the user it names."""
        try:
            sanitized = notification_user(data)
        except MalformedZnode as exc:
            _log.warning("skipping notification %s: %s", name, exc)
            sanitized = None
        user = None if sanitized is None else _desanitize_or_none(sanitized)
        if user is not None and sanitized != DEFAULT_ENTITY:
            self._refresh([user])

    def _load_all(self) -> dict[str, dict[ScramMechanism, ScramCredential]]:
        names = self._zk.children(USERS_PATH)
        users: dict[str, str] = {}
        for name in names:
            if name == DEFAULT_ENTITY:
                continue  # UserConfigHandler never loads credentials for <default>
            user = _desanitize_or_none(name)
            if user is not None:
                users[user] = name
        configs = self._read_configs(list(users))
        return {
            user: credentials_from_config(config, f"znode {users[user]!r}")
            for user, config in configs.items()
            if config is not None
        }

    # -- ZooKeeper helpers ---------------------------------------------------------

    def _read_configs(self, users: Sequence[str]) -> dict[str, dict[str, object] | None]:
        """Reads of user znodes; ``None`` for a malformed znode, ``{}`` if absent.

        Large reads use multiRead batches (ZooKeeper 3.6+), which makes an
        eager start several times faster; otherwise one pipelined getData each.
        """
        if len(users) > _MULTIREAD_MIN and self._multiread:
            try:
                return self._read_configs_multi(users)
            except MultiReadUnsupported as exc:
                _log.info("multiRead unavailable (%s); reading znodes one by one", exc)
                self._multiread = False
        # A name Sanitizer cannot encode names no znode: no credentials.
        return self._read_each(users, user_path, lambda _, path, data: _user_config(path, data), {})

    def _read_configs_multi(self, users: Sequence[str]) -> dict[str, dict[str, object] | None]:
        out: dict[str, dict[str, object] | None] = {}
        pending = []
        for start in range(0, len(users), _MULTIREAD_BATCH):
            batch = []
            for user in users[start : start + _MULTIREAD_BATCH]:
                try:
                    batch.append((user, user_path(user)))
                except SanitizerError:
                    out[user] = {}
            pending.append((batch, read_many(self._client, [p for _, p in batch])))
        for batch, result in pending:
            try:
                datas = self._zk.call(result)
            except self._zk.ex.ZookeeperError as exc:
                raise MultiReadUnsupported(type(exc).__name__) from None
            for (user, path), data in zip(batch, datas, strict=True):
                out[user] = _user_config(path, data)
        return out


def _decoy_secret(zk: ZkSession, client: KazooClient) -> bytes:
    for _ in range(_DECOY_ATTEMPTS):
        try:
            data, _stat = zk.call(client.get_async(DECOY_SECRET_PATH))
            return bytes(data)
        except zk.ex.NoNodeError:
            pass
        try:
            zk.ensure_path(DECOY_SECRET_PATH.rsplit("/", 1)[0])
            secret = secrets.token_bytes(32)
            zk.call(client.create_async(DECOY_SECRET_PATH, secret, acl=zk.acl(DECOY_SECRET_PATH)))
        except zk.ex.NodeExistsError:
            continue  # another endpoint made it first: read theirs
    raise CredentialStoreUnavailable("cannot create the decoy secret in ZooKeeper")


def _desanitize_or_none(name: str) -> str | None:
    try:
        return desanitize(name)
    except SanitizerError as exc:
        _log.warning("skipping znode name %r: %s", name, exc)
        return None


def _user_config(path: str, data: bytes | None) -> dict[str, object] | None:
    """A user znode's config: ``{}`` when absent, ``None`` (logged, skipped) when malformed."""
    if data is None:
        return {}
    try:
        return decode_config(data)
    except MalformedZnode as exc:
        _log.warning("skipping %s: %s", path, exc)
        return None
