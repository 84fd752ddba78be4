"""The ZooKeeper store: Kafka 3.x ZooKeeper-mode layout with a watch-driven cache.

Writes go to ``/config/users/<sanitized>`` together with a sequential
``/config/changes/config_change_`` notification, in one ZooKeeper multi-op so
that a crash can never leave a change without its notification. Readers
follow the notifications the way ``ZkNodeChangeNotificationListener`` does:
children sorted lexicographically, every sequence above the last one
processed, then a purge of notifications older than 15 minutes.

kazoo is imported here only, so ``import sasl_scram`` never needs it.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from .._credential import ScramCredential
from .._mechanism import ScramMechanism
from . import _kip554
from ._api import (
    AlterResult,
    CredentialStoreError,
    CredentialStoreUnavailable,
    DescribeResult,
    KafkaError,
    ScramDeletion,
    ScramUpsertion,
)
from ._cache import DEFAULT_LAZY_MAX_USERS, DEFAULT_MAX_STALENESS, CredentialCache
from ._listeners import ListenerSet
from ._sanitizer import SanitizerError, desanitize, sanitize
from ._zkformat import (
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

if TYPE_CHECKING:
    from kazoo.client import KazooClient

__all__ = ["DEFAULT_NOTIFICATION_EXPIRY", "ZooKeeperCredentialStore"]

_log = logging.getLogger("sasl_scram.store.zookeeper")

# ZkNodeChangeNotificationListener.changeExpirationMs: 15 minutes.
DEFAULT_NOTIFICATION_EXPIRY = 15 * 60.0
# Our bound on one ZooKeeper request; kazoo itself would wait forever.
DEFAULT_REQUEST_TIMEOUT = 10.0
# Optimistic-concurrency retries for one user's alteration.
_MAX_WRITE_ATTEMPTS = 20
# Outstanding reads during a full load (pipelined, bounded).
_READ_BATCH = 1000

_RESYNC = "resync"
_CHANGES = "changes"
_STOP = "stop"


def _kazoo() -> Any:
    try:
        import kazoo.client
        import kazoo.exceptions
        import kazoo.handlers.threading
        import kazoo.protocol.states
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise CredentialStoreError(
            "the ZooKeeper store needs kazoo: pip install 'kazoo>=2.10'"
        ) from exc
    return kazoo


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
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if mode not in ("eager", "lazy"):
            raise ValueError(f"mode must be 'eager' or 'lazy', got {mode!r}")
        kz = _kazoo()
        self._kz = kz
        self._ex = kz.exceptions
        self._states = kz.protocol.states
        self._timeout_error: type[Exception] = kz.handlers.threading.KazooTimeoutError
        self._mode = mode
        self._clock = clock
        self._request_timeout = request_timeout
        self._expiry_ms = int(notification_expiry * 1000)
        self._cache = CredentialCache(
            lazy=mode == "lazy",
            max_users=lazy_max_users,
            max_staleness=max_staleness,
            monotonic=monotonic,
        )
        self._listeners = ListenerSet()
        self._refresh_lock = threading.RLock()
        self._last_executed = -1
        self._ctimes: dict[str, int] = {}
        self._queue: queue.Queue[str] = queue.Queue()
        self._closed = False
        self._need_resync = False
        if isinstance(zookeeper, str):
            self._client: KazooClient = kz.client.KazooClient(
                hosts=zookeeper, timeout=session_timeout
            )
            self._owns_client = True
        else:
            self._client = zookeeper
            self._owns_client = False
        try:
            if self._client.state != self._states.KazooState.CONNECTED:
                self._client.start(timeout=request_timeout)
            self._ensure_paths()
            self._client.add_listener(self._on_state)
            self._resync()
        except Exception as exc:
            self._teardown()
            if isinstance(exc, CredentialStoreError):
                raise
            raise CredentialStoreUnavailable(
                f"cannot load credentials from ZooKeeper: {type(exc).__name__}: {exc}"
            ) from exc
        self._worker = threading.Thread(target=self._run, name="scram-zookeeper-store", daemon=True)
        self._worker.start()

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
                names = self._children(USERS_PATH)
                decoded = {}
                for name in names:
                    user = _desanitize_or_none(name)
                    if user is not None:
                        decoded[user] = name
                configs = self._read_configs(list(decoded))
                all_names = [u for u, cfg in configs.items() if cfg is None or scram_keys(cfg)]
        except CredentialStoreUnavailable as exc:
            return DescribeResult((), KafkaError.UNKNOWN_SERVER_ERROR, str(exc))

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
            if result.error == KafkaError.NONE:
                self._after_own_write(alteration.user)
        return collector.results()

    def add_listener(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """Call ``listener(user)`` after a user's credentials change anywhere."""
        return self._listeners.add(listener)

    def sync(self, timeout: float | None = None) -> bool:
        """Wait until the notifications present now have been processed.

        Returns whether that happened within ``timeout``.
        """
        try:
            children = self._children(CHANGES_PATH)
        except CredentialStoreUnavailable:
            return False
        target = max((s for s in map(change_sequence, children) if s is not None), default=-1)
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._last_executed < target or self._need_resync:
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(0.002)
        return True

    def close(self) -> None:
        """Stop the background thread and, if we created it, the ZooKeeper client."""
        if self._closed:
            return
        self._closed = True
        self._queue.put(_STOP)
        self._worker.join(timeout=self._request_timeout + 5)
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

    # -- background processing -------------------------------------------------

    def _on_state(self, state: str) -> None:
        # Called on kazoo's thread: never block here.
        kz_state = self._states.KazooState
        if state in (kz_state.SUSPENDED, kz_state.LOST):
            self._cache.mark_disconnected()
            self._need_resync = True
        elif state == kz_state.CONNECTED:
            self._queue.put(_RESYNC)

    def _on_changes(self, event: Any) -> None:
        # kazoo fires every watch once with a NONE event when the connection
        # drops; the CONNECTED listener handles that case with a full resync.
        if event is not None and event.type == self._states.EventType.NONE:
            return
        self._queue.put(_CHANGES)

    def _run(self) -> None:
        while True:
            try:
                item = self._queue.get(timeout=1.0 if self._need_resync else None)
            except queue.Empty:
                item = _RESYNC if self._connected() else ""
            if not item:
                continue
            items = {item}
            while True:  # coalesce whatever else is waiting
                try:
                    items.add(self._queue.get_nowait())
                except queue.Empty:
                    break
            if _STOP in items or self._closed:
                return
            try:
                if _RESYNC in items or self._need_resync:
                    if self._connected():
                        self._resync()
                else:
                    self._process_changes()
            except CredentialStoreUnavailable as exc:
                self._need_resync = True
                _log.warning("ZooKeeper unavailable, will resync: %s", exc)
            except Exception:
                self._need_resync = True
                _log.exception("unexpected error following ZooKeeper changes; will resync")

    def _resync(self) -> None:
        """Re-arm the watch and reload everything (after start, reconnect, expiry)."""
        self._need_resync = False
        children = self._children(CHANGES_PATH, watch=True)
        latest = max((s for s in map(change_sequence, children) if s is not None), default=-1)
        if self._cache.lazy:
            changed = self._cache.clear()
        else:
            with self._refresh_lock:
                changed = self._cache.replace_all(self._load_all())
        self._last_executed = max(self._last_executed, latest)
        self._cache.mark_fresh()
        self._listeners.notify(changed)
        # Notifications that arrived during the load are handled next.
        self._process_changes(children)

    def _load_all(self) -> dict[str, dict[ScramMechanism, ScramCredential]]:
        names = self._children(USERS_PATH)
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

    def _process_changes(self, children: Sequence[str] | None = None) -> None:
        """One ``ZkNodeChangeNotificationListener.processNotifications`` pass."""
        if children is None:
            children = self._children(CHANGES_PATH, watch=True)
        names = sorted(children)
        for name in names:
            seq = change_sequence(name)
            if seq is None or seq <= self._last_executed:
                continue
            try:
                data, stat = self._call(self._client.get_async(f"{CHANGES_PATH}/{name}"))
            except self._ex.NoNodeError:
                self._last_executed = seq
                continue
            self._ctimes[name] = stat.ctime
            try:
                sanitized = notification_user(data)
            except MalformedZnode as exc:
                _log.warning("skipping notification %s: %s", name, exc)
                sanitized = None
            user = None if sanitized is None else _desanitize_or_none(sanitized)
            if user is not None and sanitized != DEFAULT_ENTITY:
                self._refresh([user])
            self._last_executed = seq
        self._purge(names)

    def _purge(self, names: Sequence[str]) -> None:
        """Delete notifications whose ctime is older than the expiry, like every broker."""
        now_ms = int(self._clock() * 1000)
        for name in names:
            if change_sequence(name) is None:
                continue
            path = f"{CHANGES_PATH}/{name}"
            ctime = self._ctimes.get(name)
            if ctime is None:
                try:
                    stat = self._call(self._client.exists_async(path))
                except self._ex.NoNodeError:
                    stat = None
                if stat is None:
                    continue
                ctime = self._ctimes[name] = stat.ctime
            if now_ms - ctime > self._expiry_ms:
                # Another reader may have purged it first.
                with contextlib.suppress(self._ex.NoNodeError):
                    self._call(self._client.delete_async(path))
                self._ctimes.pop(name, None)

    # -- writes --------------------------------------------------------------------

    def _alter_user(self, alteration: _kip554.UserAlteration) -> AlterResult:
        user = alteration.user
        try:
            path = f"{USERS_PATH}/{sanitize(user)}"
        except SanitizerError as exc:
            return AlterResult(user, KafkaError.UNACCEPTABLE_CREDENTIAL, str(exc))
        for _ in range(_MAX_WRITE_ATTEMPTS):
            if not self._connected():
                return _not_applied(user, "ZooKeeper is unreachable")
            try:
                try:
                    data, stat = self._call(self._client.get_async(path))
                except self._ex.NoNodeError:
                    data, stat = None, None
            except CredentialStoreUnavailable as exc:
                return _not_applied(user, str(exc))
            try:
                config = decode_config(data)
            except MalformedZnode as exc:
                # Never overwrite data we do not understand (Kafka would fail too).
                _log.warning("not altering %s: %s", path, exc)
                return AlterResult(
                    user, KafkaError.UNKNOWN_SERVER_ERROR, _kip554.UNKNOWN_SERVER_ERROR_MESSAGE
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
                txn.create(path, encode_config(new_config))
            elif not new_config and stat.numChildren == 0:
                # AdminZkClient.tryCleanQuotaNodes: an empty leaf is deleted.
                txn.delete(path, version=stat.version)
            else:
                txn.set_data(path, encode_config(new_config), version=stat.version)
            txn.create(f"{CHANGES_PATH}/{CHANGE_PREFIX}", encode_notification(user), sequence=True)
            try:
                results = self._call(txn.commit_async(), writing=True)
            except CredentialStoreUnavailable as exc:
                return _unknown_outcome(user, str(exc))
            failures = [r for r in results if isinstance(r, Exception)]
            if not failures:
                return AlterResult(user)
            real = [f for f in failures if not isinstance(f, self._ex.RolledBackError)]
            if any(isinstance(f, self._ex.NoNodeError) for f in real):
                # A parent path vanished (or the user node did): recreate and retry.
                try:
                    self._ensure_paths()
                except CredentialStoreUnavailable as exc:
                    return _not_applied(user, str(exc))
                continue
            if any(
                isinstance(
                    f, (self._ex.BadVersionError, self._ex.NodeExistsError, self._ex.NotEmptyError)
                )
                for f in real
            ):
                continue  # a concurrent writer won: re-read and re-apply
            _log.warning("ZooKeeper refused the alteration of %s: %r", path, real)
            return _not_applied(user, f"ZooKeeper refused the write: {type(real[0]).__name__}")
        return _not_applied(user, "too many concurrent alterations of this user")

    # -- ZooKeeper helpers ---------------------------------------------------------

    def _connected(self) -> bool:
        return bool(self._client.state == self._states.KazooState.CONNECTED)

    def _require_connected(self) -> None:
        if not self._connected():
            raise CredentialStoreUnavailable("ZooKeeper is unreachable")

    def _call(self, async_result: Any, *, writing: bool = False) -> Any:
        """Wait for one request, turning connection trouble into CredentialStoreUnavailable.

        ZooKeeper answers (NoNode, BadVersion, ...) are raised unchanged.
        """
        try:
            return async_result.get(timeout=self._request_timeout)
        except self._timeout_error:
            raise CredentialStoreUnavailable(
                f"no answer from ZooKeeper within {self._request_timeout:g} s"
            ) from None
        except (
            self._ex.ConnectionLoss,
            self._ex.SessionExpiredError,
            self._ex.ConnectionDropped,
            self._ex.ZookeeperStoppedError,
            self._ex.OperationTimeoutError,
        ) as exc:
            raise CredentialStoreUnavailable(
                f"ZooKeeper connection failed: {type(exc).__name__}"
            ) from None

    def _children(self, path: str, watch: bool = False) -> list[str]:
        try:
            if watch:
                return list(
                    self._call(self._client.get_children_async(path, watch=self._on_changes))
                )
            return list(self._call(self._client.get_children_async(path)))
        except self._ex.NoNodeError:
            if watch:
                self._ensure_paths()
                return self._children(path, watch=True)
            return []

    def _read_configs(self, users: Sequence[str]) -> dict[str, dict[str, object] | None]:
        """Pipelined reads of user znodes; ``None`` for a malformed znode, ``{}`` if absent."""
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
                    data, _stat = self._call(result)
                except self._ex.NoNodeError:
                    out[user] = {}
                    continue
                try:
                    out[user] = decode_config(data)
                except MalformedZnode as exc:
                    _log.warning("skipping %s: %s", path, exc)
                    out[user] = None
        return out

    def _ensure_paths(self) -> None:
        """Create the chroot (like ``KafkaZkClient.createChrootIfNecessary``) and
        ``/config/users`` and ``/config/changes``."""
        try:
            try:
                self._call(self._client.ensure_path_async(USERS_PATH))
            except self._ex.NoNodeError:
                self._create_chroot()
                self._call(self._client.ensure_path_async(USERS_PATH))
            self._call(self._client.ensure_path_async(CHANGES_PATH))
        except self._ex.NodeExistsError:
            pass

    def _create_chroot(self) -> None:
        chroot = self._client.chroot
        if not chroot:
            return
        hosts = ",".join(f"{h}:{p}" for h, p in self._client.hosts)
        helper = self._kz.client.KazooClient(hosts=hosts)
        try:
            helper.start(timeout=self._request_timeout)
            helper.ensure_path(chroot)
        finally:
            helper.stop()
            helper.close()

    def _check_open(self) -> None:
        if self._closed:
            raise CredentialStoreError("the credential store is closed")

    def _teardown(self) -> None:
        self._cache.close()
        with contextlib.suppress(Exception):  # best effort during shutdown
            self._client.remove_listener(self._on_state)
        if self._owns_client:
            try:
                self._client.stop()
                self._client.close()
            except Exception:
                _log.debug("error stopping the ZooKeeper client", exc_info=True)


def _desanitize_or_none(name: str) -> str | None:
    try:
        return desanitize(name)
    except SanitizerError as exc:
        _log.warning("skipping znode name %r: %s", name, exc)
        return None


def _not_applied(user: str, reason: str) -> AlterResult:
    return AlterResult(
        user,
        KafkaError.UNKNOWN_SERVER_ERROR,
        f"Credential store unavailable; the alteration was not applied: {reason}",
    )


def _unknown_outcome(user: str, reason: str) -> AlterResult:
    return AlterResult(
        user,
        KafkaError.UNKNOWN_SERVER_ERROR,
        "Credential store connection lost during the write; the alteration may or may "
        f"not have been applied, describe the user to check: {reason}",
    )
