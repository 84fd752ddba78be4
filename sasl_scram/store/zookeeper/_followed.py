"""A ZooKeeper-backed store mirrored in memory: written once for the credential store and
``tokenauth``'s token store.

The base owns the :class:`ZkSession`, the :class:`ZkChangeWatcher` that follows
the store's change notifications (``ZkNodeChangeNotificationListener``), the
:class:`~sasl_scram.store.Freshness` bookkeeping that makes reads fail closed
after ``max_staleness`` without ZooKeeper, the listeners, and the request
helpers both stores use (pipelined reads, multi-op commits with their
sequential notification, and the optimistic retry of a write). A subclass
says what a full reload and one notification mean for its data.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import ClassVar
from typing import TypeVar

from sasl_scram.config import install_hint
from sasl_scram.store._freshness import DEFAULT_MAX_STALENESS
from sasl_scram.store._freshness import Freshness
from sasl_scram.store._kind import StoreBase
from sasl_scram.store._kind import StoreKind
from sasl_scram.store.zookeeper._format import parse_sequence
from sasl_scram.store.zookeeper._security import ZooKeeperSecurity
from sasl_scram.store.zookeeper._session import DEFAULT_REQUEST_TIMEOUT
from sasl_scram.store.zookeeper._session import ZkSession
from sasl_scram.store.zookeeper._session import load_kazoo
from sasl_scram.store.zookeeper._watcher import DEFAULT_NOTIFICATION_EXPIRY
from sasl_scram.store.zookeeper._watcher import ChangeFeed
from sasl_scram.store.zookeeper._watcher import WatcherHooks
from sasl_scram.store.zookeeper._watcher import ZkChangeWatcher

if TYPE_CHECKING:
    from kazoo.client import KazooClient

__all__ = [
    "MAX_WRITE_ATTEMPTS",
    "CommitOutcomeUnknown",
    "CommitRefused",
    "ZkFollowedStore",
    "ZkStoreKind",
]

# Outstanding reads at once during a full load (pipelined, bounded).
_READ_BATCH = 1000

# Attempts at one write (optimistic concurrency): each retry follows a
# concurrent writer's win or a vanished parent and starts from a fresh read.
MAX_WRITE_ATTEMPTS = 20

_T = TypeVar("_T")


class CommitOutcomeUnknown(Exception):
    """The connection failed during a commit: the write may or may not have been applied."""


class CommitRefused(Exception):
    """ZooKeeper refused a multi-op for a reason a retry would not cure; nothing was
    written. The message names the first failure's type; ``failures`` holds them all."""

    def __init__(self, failures: list[Exception]) -> None:
        super().__init__(type(failures[0]).__name__)
        self.failures = failures


class ZkStoreKind(StoreKind):
    """What distinguishes one ZooKeeper store from another, for :class:`ZkFollowedStore`.

    Args:
        data_path: The data root (``/config/users``); created with the
            notification parent.
        changes: The notification parent and the sequential notification's
            name prefix (``/config/changes``, ``config_change_``).
        also: More persistent paths the store creates with those two (and a
            store opened only to read requires), such as more notification
            parents (the store's :meth:`ZkFollowedStore._more_feeds`).
        names: ``what``, ``errors``, ``logger``, ``thread_name`` (the
            notification thread's) and ``listeners``, as
            :class:`~sasl_scram.store.StoreKind` takes them.
    """

    def __init__(
        self,
        *,
        data_path: str,
        changes: tuple[str, str],
        also: Sequence[str] = (),
        **names: Any,
    ) -> None:
        super().__init__(**names)
        self.changes_path, self.change_prefix = changes
        self.paths = (data_path, self.changes_path, *also)

    def change_sequence(self, name: str) -> int | None:
        """A notification's sequence number, ``None`` for any other child."""
        return parse_sequence(name, self.change_prefix)


class ZkFollowedStore(StoreBase):
    """The session, watcher and freshness half of a ZooKeeper store.

    The constructor connects (when given a connect string), creates the
    paths, calls :meth:`_reload` once and starts the notification thread. A
    subclass sets :attr:`kind` and implements :meth:`_prepare` (the empty
    mirror, before the first load), :meth:`_reload` and :meth:`_on_notification`.

    Args:
        zookeeper: ``host:port[,host:port...][/chroot]`` or a kazoo client
            (started or not); a client passed in is not stopped by :meth:`close`.
        notification_expiry: Seconds (ZooKeeper ``ctime``) after which change
            notifications are purged; Kafka's 15 minutes by default.
        max_staleness: Seconds the mirror keeps answering after the
            connection is lost; then reads fail closed (``inf``: never, as Kafka).
        request_timeout: Upper bound on one ZooKeeper request.
        session_timeout: Session timeout for a client we create.
        security: The SASL login for a client we create, and Kafka's secure
            ACLs (``zookeeper.set.acl``) on the znodes we create.
        clock: Wall-clock seconds, compared with notification ``ctime``.
        monotonic: Monotonic seconds, for staleness.
        share_session: Share one ZooKeeper client (one session) with the
            other stores of this process that name the same ZooKeeper, as an
            endpoint's credential and token stores do.
        create: ``False``: opened only to read, the store creates no znode and
            requires its paths (see :class:`ZkSession`).

    Each state change is logged once, on the store's logger, naming the
    hosts: a WARNING when the connection is lost, an ERROR when the store
    starts failing closed, an INFO when it has resynced (with how long it
    was out).
    """

    kind: ClassVar[ZkStoreKind]

    def __init__(
        self,
        zookeeper: str | KazooClient,
        *,
        notification_expiry: float = DEFAULT_NOTIFICATION_EXPIRY,
        max_staleness: float = DEFAULT_MAX_STALENESS,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        session_timeout: float = 10.0,
        security: ZooKeeperSecurity | None = None,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        share_session: bool = False,
        create: bool = True,
    ) -> None:
        kind = self.kind
        kz = load_kazoo(
            kind.error,
            f"the ZooKeeper {kind.what} needs kazoo: {install_hint('zookeeper')}",
        )
        super().__init__()
        self._lock = threading.RLock()
        self._fresh = self._prepare(max_staleness, monotonic)
        self._failing_closed_logged = False
        self._zk = ZkSession(
            zookeeper,
            paths=kind.paths,
            request_timeout=request_timeout,
            session_timeout=session_timeout,
            unavailable=kind.unavailable,
            kazoo=kz,
            logger=kind.log,
            security=security,
            share=share_session,
            create=create,
        )
        self._client: KazooClient = self._zk.client
        self._watcher = ZkChangeWatcher(
            self._zk,
            changes_path=kind.changes_path,
            change_sequence=kind.change_sequence,
            notification_expiry=notification_expiry,
            clock=clock,
            hooks=WatcherHooks(
                reload=self._reload,
                on_fresh=self._on_fresh,
                on_notification=self._on_notification,
                on_disconnect=self._on_disconnect,
                on_idle=self._check_failing_closed,
            ),
            logger=kind.log,
            what=f"{kind.what} changes",
            thread_name=kind.thread_name,
            more_feeds=self._more_feeds(),
        )
        try:
            self._watcher.start()
        except Exception as exc:
            self._teardown()
            if isinstance(exc, kind.error):
                raise
            raise kind.unavailable(
                f"cannot load the {kind.what} from ZooKeeper: {type(exc).__name__}: {exc}"
            ) from exc
        self._watcher.run_in_background()

    # -- what a subclass provides ----------------------------------------------------

    def _prepare(self, max_staleness: float, monotonic: Callable[[], float]) -> Freshness:
        """Create the empty mirror; returns its staleness clock."""
        kind = self.kind
        return Freshness(
            max_staleness=max_staleness,
            monotonic=monotonic,
            closed_error=kind.error,
            unavailable=kind.unavailable,
            what=kind.what,
        )

    def _reload(self) -> list[str]:
        """The resync's full reload; returns the keys whose value changed."""
        raise NotImplementedError

    def _on_notification(self, name: str, data: bytes) -> None:
        """One change notification: re-read what it names (:meth:`_refresh`)."""
        raise NotImplementedError

    def _more_feeds(self) -> Sequence[ChangeFeed]:
        """Notification parents followed beside ``kind.changes_path`` (none by default)."""
        return ()

    def _reread(self, keys: Sequence[str]) -> list[str]:
        """Re-read ``keys`` into the mirror (under the lock); returns those that changed."""
        raise NotImplementedError

    def _refresh(self, keys: Sequence[str]) -> None:
        """Bring the mirror up to date for ``keys`` and tell the listeners."""
        if not keys:
            return
        # Read and apply under one lock so that an older read can never be
        # applied after a newer one.
        with self._lock:
            changed = self._reread(keys)
        self._listeners.notify(changed)

    def _after_own_write(self, key: str) -> None:
        # Read-your-writes: the caller's next read sees the change. If the
        # read fails the notification brings it later; the write is durable.
        try:
            self._refresh([key])
        except self.kind.unavailable as exc:
            self.kind.log.warning("could not refresh the %s after a write: %s", self.kind.what, exc)

    # -- shared ------------------------------------------------------------------------

    @property
    def client(self) -> KazooClient:
        """The kazoo client (for tests and diagnostics)."""
        return self._client

    def sync(self, timeout: float | None = None) -> bool:
        """Wait until the notifications present now have been processed.

        Returns whether that happened within ``timeout``.
        """
        return self._watcher.sync(timeout)

    def _shutdown(self) -> None:
        # Stop the background thread and, if we created it, the ZooKeeper client.
        self._watcher.stop()
        self._teardown()

    def _on_state(self, state: str) -> None:
        # kazoo's connection-state listener (registered by the watcher).
        self._watcher.on_state(state)

    def _on_disconnect(self) -> None:
        # kazoo's thread: never block here (logging is quick).
        if self._closed or self._fresh.mark_disconnected():
            return
        limit = self._fresh.max_staleness
        self.kind.log.warning(
            "lost the connection to ZooKeeper at %s; the %s serves its cached copy for %s",
            self._zk.hosts,
            self.kind.what,
            "as long as it is away" if limit == float("inf") else f"up to {limit:g} s",
        )

    def _check_failing_closed(self) -> None:
        if self._failing_closed_logged or self._closed or not self._fresh.expired():
            return
        self._failing_closed_logged = True
        self.kind.log.error(
            "ZooKeeper at %s unreachable for more than %g s: the %s fails closed until it is back",
            self._zk.hosts,
            self._fresh.max_staleness,
            self.kind.what,
        )

    def _on_fresh(self, changed: list[str]) -> None:
        out = self._fresh.mark_fresh()
        if out is not None:
            self._failing_closed_logged = False
            self.kind.log.info(
                "resynced the %s with ZooKeeper at %s after %.1f s without it",
                self.kind.what,
                self._zk.hosts,
                out,
            )
        self._listeners.notify(changed)

    # -- requests ----------------------------------------------------------------------

    def _require_connected(self, consequence: str = "") -> None:
        if not self._zk.connected():
            raise self.kind.unavailable(f"ZooKeeper is unreachable{consequence}")

    def _get(self, path: str) -> tuple[bytes | None, Any]:
        """One znode's data and stat, ``(None, None)`` if it is absent."""
        try:
            data, stat = self._zk.call(self._client.get_async(path))
        except self._zk.ex.NoNodeError:
            return None, None
        return data, stat

    def _exists(self, path: str) -> Any:
        """The znode's stat, ``None`` if it is absent."""
        try:
            return self._zk.call(self._client.exists_async(path))
        except self._zk.ex.NoNodeError:
            return None

    def _read_many(self, paths: Sequence[str]) -> list[bytes | None]:
        """The data of each path (``None`` if absent): pipelined reads, bounded in flight."""
        out: list[bytes | None] = []
        for start in range(0, len(paths), _READ_BATCH):
            pending = [self._client.get_async(p) for p in paths[start : start + _READ_BATCH]]
            for result in pending:
                try:
                    data, _stat = self._zk.call(result)
                except self._zk.ex.NoNodeError:
                    data = None
                out.append(data)
        return out

    def _read_each(
        self,
        keys: Sequence[str],
        path_of: Callable[[str], str],
        decode: Callable[[str, str, bytes | None], _T],
        invalid: _T,
    ) -> dict[str, _T]:
        """Read each key's znode (:meth:`_read_many`): ``decode(key, path, data)``, with
        ``data`` ``None`` for an absent znode; a key that names no znode
        (``path_of`` raises ``ValueError``) gets ``invalid`` (one object for all such
        keys: callers only read it) without a read."""
        out: dict[str, _T] = {}
        paths: dict[str, str] = {}
        for key in keys:
            try:
                paths[key] = path_of(key)
            except ValueError:
                out[key] = invalid
        datas = self._read_many(list(paths.values()))
        for (key, path), data in zip(paths.items(), datas, strict=True):
            out[key] = decode(key, path, data)
        return out

    def _notify_in(self, txn: Any, data: bytes) -> None:
        """Add the sequential change notification to a multi-op (one commit, never one
        without the other)."""
        kind = self.kind
        self._zk.create_in(txn, f"{kind.changes_path}/{kind.change_prefix}", data, sequence=True)

    def _commit_or_retry(self, txn: Any, races: tuple[type[Exception], ...] = ()) -> bool:
        """Commit one write attempt's multi-op: ``True`` once applied, ``False`` when the
        write must start again from a fresh read (at most :data:`MAX_WRITE_ATTEMPTS`
        times): a concurrent writer won (a failure in ``races``, e.g. kazoo's
        ``BadVersionError``) or a parent vanished (``NoNodeError``: the paths are
        recreated first).

        Raises:
            CommitOutcomeUnknown: the connection failed mid-commit.
            CommitRefused: ZooKeeper refused it otherwise; nothing was written.
            unavailable: the paths could not be recreated; nothing was written.
        """
        ex = self._zk.ex
        try:
            results = self._zk.call(txn.commit_async())
        except self.kind.unavailable as exc:
            raise CommitOutcomeUnknown(str(exc)) from None
        # Every operation after the failed one reports RolledBackError: not a cause.
        failures = [
            r for r in results if isinstance(r, Exception) and not isinstance(r, ex.RolledBackError)
        ]
        if not failures:
            return True
        if any(isinstance(f, ex.NoNodeError) for f in failures):
            self._zk.ensure_paths()
            return False
        if races and any(isinstance(f, races) for f in failures):
            return False
        raise CommitRefused(failures)

    def _teardown(self) -> None:
        self._fresh.close()
        self._zk.close()
