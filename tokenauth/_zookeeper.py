"""Tokens in ZooKeeper, in Kafka 3.x ZooKeeper-mode layout, with a watch-driven mirror.

Writes put ``/delegation_token/tokens/<id>`` (JSON version 3) and a sequential
``/delegation_token/token_changes/token_change_`` notification whose data is
the token id, in one multi-op, so no change is ever left without its
notification. Kafka does the same two writes one after the other.

Readers follow notifications as ``ZkNodeChangeNotificationListener`` does
(kafka-internals 6.4): children sorted lexicographically, each sequence above
the last processed one re-reads its token (present: refresh; absent: drop),
then notifications older than 15 minutes (ZooKeeper ``ctime``) are purged.
After a reconnect or session expiry everything is reloaded and the watch
re-armed. Past ``max_staleness`` seconds without ZooKeeper, reads raise
:class:`TokenStoreUnavailable` (fail closed) until a resync succeeds.

kazoo is imported only when a store is created.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ._errors import TokenStoreError, TokenStoreUnavailable
from ._store import ListenerSet, TokenListener
from ._token import TokenInformation
from ._zkformat import (
    CHANGE_PREFIX,
    CHANGES_PATH,
    TOKENS_PATH,
    MalformedToken,
    change_sequence,
    decode_notification,
    decode_token,
    encode_notification,
    encode_token,
    token_path,
)

if TYPE_CHECKING:
    from kazoo.client import KazooClient

__all__ = ["DEFAULT_NOTIFICATION_EXPIRY", "ZooKeeperTokenStore"]

_log = logging.getLogger("tokenauth.store.zookeeper")

# ZkNodeChangeNotificationListener.changeExpirationMs: 15 minutes.
DEFAULT_NOTIFICATION_EXPIRY = 15 * 60.0
# Our bound on one ZooKeeper request; kazoo would wait forever.
DEFAULT_REQUEST_TIMEOUT = 10.0
# Ours, not Kafka's: a broker serves its cache for as long as ZooKeeper is away.
DEFAULT_MAX_STALENESS = 60.0
_MAX_WRITE_ATTEMPTS = 20
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
        raise TokenStoreError("the ZooKeeper token store needs kazoo") from exc
    return kazoo


class ZooKeeperTokenStore:
    """Delegation tokens in ZooKeeper, byte-compatible with Kafka 3.x ZooKeeper mode.

    Args:
        zookeeper: ``host:port[,host:port...][/chroot]`` or a kazoo client
            (started or not); a client passed in is not stopped by :meth:`close`.
        notification_expiry: Seconds after which notifications are purged.
        max_staleness: Seconds the mirror keeps answering after the
            connection is lost; then reads fail closed.
        request_timeout: Upper bound on one ZooKeeper request.
        session_timeout: Session timeout for a client we create.
        clock: Wall-clock seconds, compared with notification ``ctime``.
        monotonic: Monotonic seconds, for staleness.
    """

    def __init__(
        self,
        zookeeper: str | KazooClient,
        *,
        notification_expiry: float = DEFAULT_NOTIFICATION_EXPIRY,
        max_staleness: float = DEFAULT_MAX_STALENESS,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        session_timeout: float = 10.0,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        kz = _kazoo()
        self._kz = kz
        self._ex = kz.exceptions
        self._states = kz.protocol.states
        self._timeout_error: type[Exception] = kz.handlers.threading.KazooTimeoutError
        self._clock = clock
        self._monotonic = monotonic
        self._max_staleness = max_staleness
        self._request_timeout = request_timeout
        self._expiry_ms = int(notification_expiry * 1000)
        self._listeners = ListenerSet()
        self._lock = threading.RLock()
        self._tokens: dict[str, TokenInformation] = {}
        self._last_executed = -1
        self._ctimes: dict[str, int] = {}
        self._queue: queue.Queue[str] = queue.Queue()
        self._closed = False
        self._need_resync = False
        self._disconnected_at: float | None = None
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
            if isinstance(exc, TokenStoreError):
                raise
            raise TokenStoreUnavailable(
                f"cannot load tokens from ZooKeeper: {type(exc).__name__}: {exc}"
            ) from exc
        self._worker = threading.Thread(target=self._run, name="tokenauth-zookeeper", daemon=True)
        self._worker.start()

    def __repr__(self) -> str:
        return f"ZooKeeperTokenStore(tokens={len(self._tokens)}, state={self._client.state})"

    @property
    def client(self) -> KazooClient:
        return self._client

    # -- reads from the mirror -----------------------------------------------------

    def check_usable(self) -> None:
        """Raise unless the mirror may be trusted.

        Raises:
            TokenStoreError: the store is closed.
            TokenStoreUnavailable: disconnected for longer than ``max_staleness``.
        """
        if self._closed:
            raise TokenStoreError("the token store is closed")
        since = self._disconnected_at
        if since is not None and self._monotonic() - since > self._max_staleness:
            raise TokenStoreUnavailable(
                f"ZooKeeper unreachable for more than {self._max_staleness:g} s; failing closed"
            )

    def get(self, token_id: str) -> TokenInformation | None:
        if self._disconnected_at is not None or self._closed:
            self.check_usable()
        return self._tokens.get(token_id)

    def tokens(self) -> list[TokenInformation]:
        if self._disconnected_at is not None or self._closed:
            self.check_usable()
        return list(self._tokens.values())

    # -- writes ----------------------------------------------------------------------

    def put(self, info: TokenInformation) -> None:
        """Set-or-create the token znode and its notification in one multi-op."""
        self._check_open()
        path = token_path(info.token_id)
        data = encode_token(info)
        for _ in range(_MAX_WRITE_ATTEMPTS):
            self._require_connected()
            try:
                stat = self._call(self._client.exists_async(path))
            except self._ex.NoNodeError:
                stat = None
            txn = self._client.transaction()
            if stat is None:
                txn.create(path, data)
            else:
                txn.set_data(path, data)
            txn.create(
                f"{CHANGES_PATH}/{CHANGE_PREFIX}", encode_notification(info.token_id), sequence=True
            )
            if self._commit(txn, retry_on=(self._ex.NodeExistsError, self._ex.NoNodeError)):
                self._after_own_write(info.token_id)
                return
        raise TokenStoreError("too many concurrent writes of this token; it was not stored")

    def remove(self, token_id: str) -> bool:
        """Delete the token znode with a notification (``deleteRecursive`` in Kafka)."""
        self._check_open()
        path = token_path(token_id)
        for _ in range(_MAX_WRITE_ATTEMPTS):
            self._require_connected()
            try:
                stat = self._call(self._client.exists_async(path))
            except self._ex.NoNodeError:
                stat = None
            if stat is None:
                self._after_own_write(token_id)
                return False
            txn = self._client.transaction()
            txn.delete(path)
            txn.create(
                f"{CHANGES_PATH}/{CHANGE_PREFIX}", encode_notification(token_id), sequence=True
            )
            if self._commit(txn, retry_on=(self._ex.NoNodeError,)):
                self._after_own_write(token_id)
                return True
        raise TokenStoreError("too many concurrent writes of this token; it was not removed")

    def add_listener(self, listener: TokenListener) -> Callable[[], None]:
        return self._listeners.add(listener)

    def sync(self, timeout: float | None = None) -> bool:
        """Wait until the notifications present now have been processed."""
        try:
            children = self._children(CHANGES_PATH)
        except TokenStoreUnavailable:
            return False
        target = max((s for s in map(change_sequence, children) if s is not None), default=-1)
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._last_executed < target or self._need_resync:
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(0.002)
        return True

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._queue.put(_STOP)
        self._worker.join(timeout=self._request_timeout + 5)
        self._teardown()

    # -- mirror maintenance ----------------------------------------------------------

    def _refresh(self, token_ids: Sequence[str]) -> None:
        """Re-read tokens (TokenChangedNotificationHandler) and tell the listeners."""
        if not token_ids:
            return
        changed = []
        with self._lock:  # read and apply together: an old read never wins
            found = self._read_tokens(token_ids)
            for token_id in token_ids:
                info = found.get(token_id)
                old = self._tokens.get(token_id)
                if info is None:
                    self._tokens.pop(token_id, None)
                else:
                    self._tokens[token_id] = info
                if old != info:
                    changed.append(token_id)
        self._listeners.notify(changed)

    def _after_own_write(self, token_id: str) -> None:
        # Read-your-writes; if the read fails the notification brings it later.
        try:
            self._refresh([token_id])
        except TokenStoreUnavailable as exc:
            _log.warning("could not refresh the mirror after a write: %s", exc)

    def _on_state(self, state: str) -> None:
        # kazoo's thread: never block here.
        kz_state = self._states.KazooState
        if state in (kz_state.SUSPENDED, kz_state.LOST):
            if self._disconnected_at is None:
                self._disconnected_at = self._monotonic()
            self._need_resync = True
        elif state == kz_state.CONNECTED:
            self._queue.put(_RESYNC)

    def _on_changes(self, event: Any) -> None:
        # A NONE event means the connection dropped; CONNECTED triggers a resync.
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
            while True:
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
            except TokenStoreUnavailable as exc:
                self._need_resync = True
                _log.warning("ZooKeeper unavailable, will resync: %s", exc)
            except Exception:
                self._need_resync = True
                _log.exception("unexpected error following token changes; will resync")

    def _resync(self) -> None:
        """Re-arm the watch and reload every token (start, reconnect, session expiry)."""
        self._need_resync = False
        children = self._children(CHANGES_PATH, watch=True)
        latest = max((s for s in map(change_sequence, children) if s is not None), default=-1)
        with self._lock:
            names = self._children(TOKENS_PATH)
            fresh = {k: v for k, v in self._read_tokens(names).items() if v is not None}
            changed = [
                t for t in set(fresh) | set(self._tokens) if fresh.get(t) != self._tokens.get(t)
            ]
            self._tokens = fresh
        self._last_executed = max(self._last_executed, latest)
        self._disconnected_at = None
        self._listeners.notify(changed)
        self._process_changes(children)

    def _process_changes(self, children: Sequence[str] | None = None) -> None:
        """One ``processNotifications`` pass, then the purge."""
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
            token_id = decode_notification(data)
            if token_id is None:
                _log.warning("skipping notification %s: no token id", name)
            else:
                self._refresh([token_id])
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
                with contextlib.suppress(self._ex.NoNodeError):  # another reader was first
                    self._call(self._client.delete_async(path))
                self._ctimes.pop(name, None)

    # -- ZooKeeper helpers -----------------------------------------------------------

    def _commit(self, txn: Any, retry_on: tuple[type[Exception], ...]) -> bool:
        """Commit a multi-op; ``True`` if applied, ``False`` to retry after a race."""
        try:
            results = self._call(txn.commit_async())
        except TokenStoreUnavailable as exc:
            raise TokenStoreUnavailable(
                f"connection lost during the write; it may or may not have been applied: {exc}"
            ) from None
        failures = [r for r in results if isinstance(r, Exception)]
        if not failures:
            return True
        real = [f for f in failures if not isinstance(f, self._ex.RolledBackError)]
        if any(isinstance(f, retry_on) for f in real):
            # A concurrent writer won, or a parent vanished: recreate and retry.
            self._ensure_paths()
            return False
        raise TokenStoreError(f"ZooKeeper refused the write: {type(real[0]).__name__}")

    def _connected(self) -> bool:
        return bool(self._client.state == self._states.KazooState.CONNECTED)

    def _require_connected(self) -> None:
        if not self._connected():
            raise TokenStoreUnavailable("ZooKeeper is unreachable; nothing was written")

    def _call(self, async_result: Any) -> Any:
        """Wait for one request; connection trouble becomes TokenStoreUnavailable."""
        try:
            return async_result.get(timeout=self._request_timeout)
        except self._timeout_error:
            raise TokenStoreUnavailable(
                f"no answer from ZooKeeper within {self._request_timeout:g} s"
            ) from None
        except (
            self._ex.ConnectionLoss,
            self._ex.SessionExpiredError,
            self._ex.ConnectionDropped,
            self._ex.ZookeeperStoppedError,
            self._ex.OperationTimeoutError,
        ) as exc:
            raise TokenStoreUnavailable(
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

    def _read_tokens(self, token_ids: Sequence[str]) -> dict[str, TokenInformation | None]:
        """Pipelined reads; ``None`` for an absent, empty or malformed znode (logged)."""
        out: dict[str, TokenInformation | None] = {}
        for start in range(0, len(token_ids), _READ_BATCH):
            pending = []
            for token_id in token_ids[start : start + _READ_BATCH]:
                try:
                    path = token_path(token_id)
                except MalformedToken:
                    out[token_id] = None
                    continue
                pending.append((token_id, path, self._client.get_async(path)))
            for token_id, path, result in pending:
                try:
                    data, _stat = self._call(result)
                except self._ex.NoNodeError:
                    out[token_id] = None
                    continue
                out[token_id] = _decode(path, token_id, data)
        return out

    def _ensure_paths(self) -> None:
        """Create the chroot if needed, then both token paths (``createDelegationTokenPaths``)."""
        try:
            try:
                self._call(self._client.ensure_path_async(TOKENS_PATH))
            except self._ex.NoNodeError:
                self._create_chroot()
                self._call(self._client.ensure_path_async(TOKENS_PATH))
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
            raise TokenStoreError("the token store is closed")

    def _teardown(self) -> None:
        with contextlib.suppress(Exception):  # best effort during shutdown
            self._client.remove_listener(self._on_state)
        if self._owns_client:
            try:
                self._client.stop()
                self._client.close()
            except Exception:
                _log.debug("error stopping the ZooKeeper client", exc_info=True)


def _decode(path: str, token_id: str, data: bytes | None) -> TokenInformation | None:
    try:
        info = decode_token(data)
    except MalformedToken as exc:
        _log.warning("skipping malformed token znode %s: %s", path, exc)
        return None
    if info is None:
        # fromBytes gives None for empty or non-JSON data: no token.
        _log.warning("skipping token znode %s: empty or not JSON", path)
        return None
    if info.token_id != token_id:
        _log.warning("skipping token znode %s: it holds token id %r", path, info.token_id)
        return None
    return info
