"""The ZooKeeper store: Kafka 3.x ZooKeeper-mode layout with a watch-driven cache.

Writes go to ``/config/users/<sanitized>`` together with a sequential
``/config/changes/config_change_`` notification, in one ZooKeeper multi-op so
that a crash can never leave a change without its notification. Readers
follow the notifications the way ``ZkNodeChangeNotificationListener`` does:
children sorted lexicographically, every sequence above the last one
processed, then a purge of notifications older than 15 minutes.

The connection discipline lives in :mod:`._zk_session` and the
notification following in :mod:`._zk_watcher` (shared with ``tokenauth``);
kazoo is imported only when a store is created, so ``import sasl_scram``
never needs it.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from sasl_scram._credential import ScramCredential
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.kafka import ErrorCode
from sasl_scram.store import _kip554
from sasl_scram.store._api import (
    AlterResult,
    CredentialStoreError,
    CredentialStoreUnavailable,
    DescribeResult,
    ScramDeletion,
    ScramUpsertion,
)
from sasl_scram.store._cache import DEFAULT_LAZY_MAX_USERS, DEFAULT_MAX_STALENESS, CredentialCache
from sasl_scram.store._listeners import ListenerSet
from sasl_scram.store.zookeeper._format import (
    CHANGE_PREFIX,
    CHANGES_PATH,
    DEFAULT_ENTITY,
    USERS_PATH,
    MalformedZnode,
    change_sequence,
    credentials_from_config,
    decode_config,
    encode_config,
    encode_notification,
    notification_user,
    scram_keys,
)
from sasl_scram.store.zookeeper._multiread import MultiReadUnsupported, read_many
from sasl_scram.store.zookeeper._sanitizer import SanitizerError, desanitize, sanitize
from sasl_scram.store.zookeeper._security import ZooKeeperSecurity
from sasl_scram.store.zookeeper._session import DEFAULT_REQUEST_TIMEOUT, ZkSession, load_kazoo
from sasl_scram.store.zookeeper._watcher import DEFAULT_NOTIFICATION_EXPIRY, ZkChangeWatcher

if TYPE_CHECKING:
    from kazoo.client import KazooClient

__all__ = ["DEFAULT_NOTIFICATION_EXPIRY", "ZooKeeperCredentialStore"]

_log = logging.getLogger("sasl_scram.store.zookeeper")

# Optimistic-concurrency retries for one user's alteration.
_MAX_WRITE_ATTEMPTS = 20
# Under a sensitive root (_security.SENSITIVE_ROOTS): owner-only with secure ACLs.
DECOY_SECRET_PATH = "/kafka-scram/secrets/decoy"  # noqa: S105 - a path, not a secret
# Outstanding reads during a full load (pipelined, bounded).
_READ_BATCH = 1000
# multiRead batches: 500 users' znodes (~0.5 KB each) keep a reply well under
# ZooKeeper's default 1 MB jute.maxbuffer.
_MULTIREAD_BATCH = 500
_MULTIREAD_MIN = 50


class ZooKeeperCredentialStore:
    """Credentials in ZooKeeper, byte-compatible with Kafka 3.x ZooKeeper mode.

    The constructor connects (when given a connect string), creates the
    ``/config`` paths if needed, loads the cache and starts one background
    thread that follows the change notifications.

    Args:
        zookeeper: A connect string ``host:port[,host:port...][/chroot]``, or a
            kazoo ``KazooClient`` (started or not). A client passed in is not
            stopped by :meth:`close`.
        mode: ``"eager"`` loads every user at start (like a broker);
            ``"lazy"`` fills a bounded cache on demand.
        lazy_max_users: Bound of the lazy cache.
        max_staleness: Seconds the cache keeps answering after the ZooKeeper
            connection is lost; afterwards lookups raise
            :class:`CredentialStoreUnavailable` (fail closed).
        notification_expiry: Age (ZooKeeper ``ctime``) after which change
            notifications are purged; Kafka's 15 minutes by default.
        request_timeout: Upper bound on any single ZooKeeper request.
        session_timeout: The ZooKeeper session timeout for a client we create.
        security: The SASL login for a client we create, and Kafka's secure
            ACLs (``zookeeper.set.acl``) on the znodes we create.
        clock: Wall-clock seconds, compared with znode ``ctime`` for purges.
        monotonic: Monotonic seconds, for staleness.
    """

    def __init__(
        self,
        zookeeper: str | KazooClient,
        *,
        mode: Literal["eager", "lazy"] = "eager",
        lazy_max_users: int = DEFAULT_LAZY_MAX_USERS,
        max_staleness: float = DEFAULT_MAX_STALENESS,
        notification_expiry: float = DEFAULT_NOTIFICATION_EXPIRY,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        session_timeout: float = 10.0,
        security: ZooKeeperSecurity | None = None,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if mode not in ("eager", "lazy"):
            raise ValueError(f"mode must be 'eager' or 'lazy', got {mode!r}")
        kz = load_kazoo(
            CredentialStoreError, "the ZooKeeper store needs kazoo: pip install 'kazoo>=2.10'"
        )
        self._mode = mode
        self._cache = CredentialCache(
            lazy=mode == "lazy",
            max_users=lazy_max_users,
            max_staleness=max_staleness,
            monotonic=monotonic,
        )
        self._listeners = ListenerSet()
        self._refresh_lock = threading.RLock()
        self._closed = False
        self._multiread = True
        self._zk = ZkSession(
            zookeeper,
            paths=(USERS_PATH, CHANGES_PATH),
            request_timeout=request_timeout,
            session_timeout=session_timeout,
            unavailable=CredentialStoreUnavailable,
            kazoo=kz,
            logger=_log,
            security=security,
        )
        self._client: KazooClient = self._zk.client
        self._watcher = ZkChangeWatcher(
            self._zk,
            changes_path=CHANGES_PATH,
            change_sequence=change_sequence,
            notification_expiry=notification_expiry,
            clock=clock,
            reload=self._reload,
            on_fresh=self._on_fresh,
            on_notification=self._on_notification,
            on_disconnect=self._cache.mark_disconnected,
            logger=_log,
            what="ZooKeeper changes",
            thread_name="scram-zookeeper-store",
        )
        try:
            self._watcher.start()
        except Exception as exc:
            self._teardown()
            if isinstance(exc, CredentialStoreError):
                raise
            raise CredentialStoreUnavailable(
                f"cannot load credentials from ZooKeeper: {type(exc).__name__}: {exc}"
            ) from exc
        self._watcher.run_in_background()

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
    def client(self) -> KazooClient:
        """The kazoo client (for tests and diagnostics)."""
        return self._client

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

    def alter(
        self, deletions: Sequence[ScramDeletion], upsertions: Sequence[ScramUpsertion]
    ) -> list[AlterResult]:
        """KIP-554 alter: one ZooKeeper multi-op per user, each with its notification.

        A user whose write cannot be made gets ``UNKNOWN_SERVER_ERROR`` with a
        message saying whether the change was certainly not applied or whether
        its outcome is unknown (the connection dropped mid-request); nothing is
        queued for later.
        """
        self._check_open()
        plan = _kip554.plan_alterations(deletions, upsertions)
        collector = _kip554.AlterResultCollector(plan)
        for alteration in plan.alterations:
            result = self._alter_user(alteration)
            collector.add(result)
            if result.error == ErrorCode.NONE:
                self._after_own_write(alteration.user)
        return collector.results()

    def add_listener(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """Call ``listener(user)`` after a user's credentials change anywhere."""
        return self._listeners.add(listener)

    def decoy_secret(self) -> bytes:
        """The decoy secret znode, created once (with the sensitive ACL) by the first asker."""
        self._check_open()
        return _decoy_secret(self._zk, self._client)

    def sync(self, timeout: float | None = None) -> bool:
        """Wait until the notifications present now have been processed.

        Returns whether that happened within ``timeout``.
        """
        return self._watcher.sync(timeout)

    def close(self) -> None:
        """Stop the background thread and, if we created it, the ZooKeeper client."""
        if self._closed:
            return
        self._closed = True
        self._watcher.stop()
        self._teardown()

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

    def _refresh(self, users: Sequence[str]) -> None:
        """Bring the cache up to date for ``users`` and tell the listeners."""
        if not users:
            return
        if self._cache.lazy:
            for user in users:
                self._cache.invalidate(user)
            self._listeners.notify(users)
            return
        changed: list[str] = []
        # Read and apply under one lock so that an older read can never be
        # applied after a newer one.
        with self._refresh_lock:
            configs = self._read_configs(users)
            for user in users:
                config = configs.get(user) or {}
                if self._cache.put(user, credentials_from_config(config, "user")):
                    changed.append(user)
        self._listeners.notify(changed)

    def _after_own_write(self, user: str) -> None:
        # Read-your-writes: the caller's next lookup sees the change. If the
        # read fails the notification brings it later; the write is durable.
        try:
            self._refresh([user])
        except CredentialStoreUnavailable as exc:
            _log.warning("could not refresh the cache after a write: %s", exc)

    # -- following the notifications (see _zk_watcher) ------------------------

    def _reload(self) -> list[str]:
        """The resync's full reload; returns the users whose credentials changed."""
        if self._cache.lazy:
            return self._cache.clear()
        with self._refresh_lock:
            return self._cache.replace_all(self._load_all())

    def _on_fresh(self, changed: list[str]) -> None:
        self._cache.mark_fresh()
        self._listeners.notify(changed)

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

    # -- writes --------------------------------------------------------------------

    def _alter_user(self, alteration: _kip554.UserAlteration) -> AlterResult:
        user = alteration.user
        try:
            path = f"{USERS_PATH}/{sanitize(user)}"
        except SanitizerError as exc:
            return AlterResult(user, ErrorCode.UNACCEPTABLE_CREDENTIAL, str(exc))
        for _ in range(_MAX_WRITE_ATTEMPTS):
            if not self._zk.connected():
                return _not_applied(user, "ZooKeeper is unreachable")
            try:
                try:
                    data, stat = self._zk.call(self._client.get_async(path))
                except self._zk.ex.NoNodeError:
                    data, stat = None, None
            except CredentialStoreUnavailable as exc:
                return _not_applied(user, str(exc))
            try:
                config = decode_config(data)
            except MalformedZnode as exc:
                # Never overwrite data we do not understand (Kafka would fail too).
                _log.warning("not altering %s: %s", path, exc)
                return AlterResult(
                    user, ErrorCode.UNKNOWN_SERVER_ERROR, _kip554.UNKNOWN_SERVER_ERROR_MESSAGE
                )
            outcome = _kip554.resolve_user(alteration, scram_keys(config))
            if isinstance(outcome, AlterResult):
                return outcome
            new_config = {
                k: v
                for k, v in config.items()
                if k not in {m.mechanism_name for m in outcome.deletions}
            }
            for mech, cred in outcome.upsertions.items():
                new_config[mech.mechanism_name] = cred.to_kafka_string()
            txn = self._client.transaction()
            if stat is None:
                self._zk.create_in(txn, path, encode_config(new_config))
            elif not new_config and stat.numChildren == 0:
                # AdminZkClient.tryCleanQuotaNodes: an empty leaf is deleted.
                txn.delete(path, version=stat.version)
            else:
                txn.set_data(path, encode_config(new_config), version=stat.version)
            self._zk.create_in(
                txn, f"{CHANGES_PATH}/{CHANGE_PREFIX}", encode_notification(user), sequence=True
            )
            try:
                results = self._zk.call(txn.commit_async())
            except CredentialStoreUnavailable as exc:
                return _unknown_outcome(user, str(exc))
            failures = [r for r in results if isinstance(r, Exception)]
            if not failures:
                return AlterResult(user)
            real = [f for f in failures if not isinstance(f, self._zk.ex.RolledBackError)]
            if any(isinstance(f, self._zk.ex.NoNodeError) for f in real):
                # A parent path vanished (or the user node did): recreate and retry.
                try:
                    self._zk.ensure_paths()
                except CredentialStoreUnavailable as exc:
                    return _not_applied(user, str(exc))
                continue
            ex = self._zk.ex
            if any(
                isinstance(f, (ex.BadVersionError, ex.NodeExistsError, ex.NotEmptyError))
                for f in real
            ):
                continue  # a concurrent writer won: re-read and re-apply
            _log.warning("ZooKeeper refused the alteration of %s: %r", path, real)
            return _not_applied(user, f"ZooKeeper refused the write: {type(real[0]).__name__}")
        return _not_applied(user, "too many concurrent alterations of this user")

    # -- ZooKeeper helpers ---------------------------------------------------------

    def _require_connected(self) -> None:
        if not self._zk.connected():
            raise CredentialStoreUnavailable("ZooKeeper is unreachable")

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
        out: dict[str, dict[str, object] | None] = {}
        for start in range(0, len(users), _READ_BATCH):
            batch = users[start : start + _READ_BATCH]
            pending = []
            for user in batch:
                try:
                    path = f"{USERS_PATH}/{sanitize(user)}"
                except SanitizerError:
                    out[user] = {}
                    continue
                pending.append((user, path, self._client.get_async(path)))
            for user, path, result in pending:
                try:
                    data, _stat = self._zk.call(result)
                except self._zk.ex.NoNodeError:
                    data = None
                out[user] = _user_config(path, data)
        return out

    def _read_configs_multi(self, users: Sequence[str]) -> dict[str, dict[str, object] | None]:
        out: dict[str, dict[str, object] | None] = {}
        pending = []
        for start in range(0, len(users), _MULTIREAD_BATCH):
            batch = []
            for user in users[start : start + _MULTIREAD_BATCH]:
                try:
                    batch.append((user, f"{USERS_PATH}/{sanitize(user)}"))
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

    def _check_open(self) -> None:
        if self._closed:
            raise CredentialStoreError("the credential store is closed")

    def _teardown(self) -> None:
        self._cache.close()
        self._zk.close()


def _decoy_secret(zk: ZkSession, client: KazooClient) -> bytes:
    for _ in range(_MAX_WRITE_ATTEMPTS):
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


def _not_applied(user: str, reason: str) -> AlterResult:
    return AlterResult(
        user,
        ErrorCode.UNKNOWN_SERVER_ERROR,
        f"Credential store unavailable; the alteration was not applied: {reason}",
    )


def _unknown_outcome(user: str, reason: str) -> AlterResult:
    return AlterResult(
        user,
        ErrorCode.UNKNOWN_SERVER_ERROR,
        "Credential store connection lost during the write; the alteration may or may "
        f"not have been applied, describe the user to check: {reason}",
    )


def _user_config(path: str, data: bytes | None) -> dict[str, object] | None:
    """A user znode's config: ``{}`` when absent, ``None`` (logged, skipped) when malformed."""
    if data is None:
        return {}
    try:
        return decode_config(data)
    except MalformedZnode as exc:
        _log.warning("skipping %s: %s", path, exc)
        return None
