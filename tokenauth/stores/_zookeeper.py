"""Tokens in ZooKeeper, in Kafka 3.x ZooKeeper-mode layout, with a watch-driven mirror.

Writes put ``/delegation_token/tokens/<id>`` (JSON version 3) and a sequential
``/delegation_token/token_changes/token_change_`` notification whose data is
the token id, in one multi-op, so no change is ever left without its
notification. Kafka does the same two writes one after the other.

Readers follow notifications as ``ZkNodeChangeNotificationListener`` does
(docs/kafka-facts.md §5.4): children sorted lexicographically, each sequence above
the last processed one re-reads its token (present: refresh; absent: drop),
then notifications older than 15 minutes (ZooKeeper ``ctime``) are purged.
After a reconnect or session expiry everything is reloaded and the watch
re-armed. Past ``max_staleness`` seconds without ZooKeeper, reads raise
:class:`TokenStoreUnavailable` (fail closed) until a resync succeeds.

The session and notification machinery are the credential store's
(``sasl_scram.store.zookeeper._session`` and ``._zk_watcher``); kazoo is imported
only when a store is created.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from sasl_scram.store import DEFAULT_MAX_STALENESS
from sasl_scram.store.zookeeper import (
    DEFAULT_NOTIFICATION_EXPIRY,
    DEFAULT_REQUEST_TIMEOUT,
    ZkChangeWatcher,
    ZkSession,
    ZooKeeperSecurity,
    load_kazoo,
)
from tokenauth._errors import TokenStoreError, TokenStoreUnavailable
from tokenauth._token import TokenInformation
from tokenauth.stores._api import ListenerSet, TokenListener
from tokenauth.stores._layout import (
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
from tokenauth.stores._mirror import TokenMirror

if TYPE_CHECKING:
    from kazoo.client import KazooClient

__all__ = ["DEFAULT_NOTIFICATION_EXPIRY", "ZooKeeperTokenStore"]

_log = logging.getLogger("tokenauth.store.zookeeper")

# Defaults shared with the credential store: notifications expire after
# Kafka's 15 minutes (DEFAULT_NOTIFICATION_EXPIRY), one request waits at most
# DEFAULT_REQUEST_TIMEOUT, and the mirror fails closed after
# DEFAULT_MAX_STALENESS (ours, not Kafka's: a broker serves its cache for as
# long as ZooKeeper is away).

_MAX_WRITE_ATTEMPTS = 20
_READ_BATCH = 1000


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
        security: The SASL login for a client we create, and Kafka's secure
            ACLs (``zookeeper.set.acl``) on the znodes we create.
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
        security: ZooKeeperSecurity | None = None,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        kz = load_kazoo(TokenStoreError, "the ZooKeeper token store needs kazoo")
        self._monotonic = monotonic
        self._max_staleness = max_staleness
        self._listeners = ListenerSet()
        self._lock = threading.RLock()
        self._tokens = TokenMirror()
        self._closed = False
        self._disconnected_at: float | None = None
        self._zk = ZkSession(
            zookeeper,
            paths=(TOKENS_PATH, CHANGES_PATH),  # createDelegationTokenPaths
            request_timeout=request_timeout,
            session_timeout=session_timeout,
            unavailable=TokenStoreUnavailable,
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
            on_disconnect=self._on_disconnect,
            logger=_log,
            what="token changes",
            thread_name="tokenauth-zookeeper",
        )
        try:
            self._watcher.start()
        except Exception as exc:
            self._teardown()
            if isinstance(exc, TokenStoreError):
                raise
            raise TokenStoreUnavailable(
                f"cannot load tokens from ZooKeeper: {type(exc).__name__}: {exc}"
            ) from exc
        self._watcher.run_in_background()

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
        return self._tokens.tokens()

    # -- writes ----------------------------------------------------------------------

    def put(self, info: TokenInformation) -> None:
        """Set-or-create the token znode and its notification in one multi-op."""
        self._check_open()
        path = token_path(info.token_id)
        data = encode_token(info)
        for _ in range(_MAX_WRITE_ATTEMPTS):
            self._require_connected()
            try:
                stat = self._zk.call(self._client.exists_async(path))
            except self._zk.ex.NoNodeError:
                stat = None
            txn = self._client.transaction()
            if stat is None:
                self._zk.create_in(txn, path, data)
            else:
                txn.set_data(path, data)
            notification = encode_notification(info.token_id)
            self._zk.create_in(txn, f"{CHANGES_PATH}/{CHANGE_PREFIX}", notification, sequence=True)
            if self._commit(txn, retry_on=(self._zk.ex.NodeExistsError, self._zk.ex.NoNodeError)):
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
                stat = self._zk.call(self._client.exists_async(path))
            except self._zk.ex.NoNodeError:
                stat = None
            if stat is None:
                self._after_own_write(token_id)
                return False
            txn = self._client.transaction()
            txn.delete(path)
            self._zk.create_in(
                txn, f"{CHANGES_PATH}/{CHANGE_PREFIX}", encode_notification(token_id), sequence=True
            )
            if self._commit(txn, retry_on=(self._zk.ex.NoNodeError,)):
                self._after_own_write(token_id)
                return True
        raise TokenStoreError("too many concurrent writes of this token; it was not removed")

    def add_listener(self, listener: TokenListener) -> Callable[[], None]:
        return self._listeners.add(listener)

    def sync(self, timeout: float | None = None) -> bool:
        """Wait until the notifications present now have been processed."""
        return self._watcher.sync(timeout)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._watcher.stop()
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
                if self._tokens.apply(token_id, found.get(token_id)):
                    changed.append(token_id)
        self._listeners.notify(changed)

    def _after_own_write(self, token_id: str) -> None:
        # Read-your-writes; if the read fails the notification brings it later.
        try:
            self._refresh([token_id])
        except TokenStoreUnavailable as exc:
            _log.warning("could not refresh the mirror after a write: %s", exc)

    # -- following the notifications (see sasl_scram.store.zookeeper._watcher) -----------

    def _on_state(self, state: str) -> None:
        # kazoo's connection-state listener (registered by the watcher).
        self._watcher.on_state(state)

    def _on_disconnect(self) -> None:
        # kazoo's thread: never block here.
        if self._disconnected_at is None:
            self._disconnected_at = self._monotonic()

    def _reload(self) -> list[str]:
        """The resync's full reload (every token); returns the ids that changed."""
        with self._lock:
            names = self._zk.children(TOKENS_PATH)
            fresh = {k: v for k, v in self._read_tokens(names).items() if v is not None}
            return self._tokens.replace_all(fresh)

    def _on_fresh(self, changed: list[str]) -> None:
        self._disconnected_at = None
        self._listeners.notify(changed)

    def _on_notification(self, name: str, data: bytes) -> None:
        """One ``token_change_`` notification: re-read the token it names."""
        token_id = decode_notification(data)
        if token_id is None:
            _log.warning("skipping notification %s: no token id", name)
        else:
            self._refresh([token_id])

    # -- ZooKeeper helpers -----------------------------------------------------------

    def _commit(self, txn: Any, retry_on: tuple[type[Exception], ...]) -> bool:
        """Commit a multi-op; ``True`` if applied, ``False`` to retry after a race."""
        try:
            results = self._zk.call(txn.commit_async())
        except TokenStoreUnavailable as exc:
            raise TokenStoreUnavailable(
                f"connection lost during the write; it may or may not have been applied: {exc}"
            ) from None
        failures = [r for r in results if isinstance(r, Exception)]
        if not failures:
            return True
        real = [f for f in failures if not isinstance(f, self._zk.ex.RolledBackError)]
        if any(isinstance(f, retry_on) for f in real):
            # A concurrent writer won, or a parent vanished: recreate and retry.
            self._zk.ensure_paths()
            return False
        raise TokenStoreError(f"ZooKeeper refused the write: {type(real[0]).__name__}")

    def _require_connected(self) -> None:
        if not self._zk.connected():
            raise TokenStoreUnavailable("ZooKeeper is unreachable; nothing was written")

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
                    data, _stat = self._zk.call(result)
                except self._zk.ex.NoNodeError:
                    out[token_id] = None
                    continue
                out[token_id] = _decode(path, token_id, data)
        return out

    def _check_open(self) -> None:
        if self._closed:
            raise TokenStoreError("the token store is closed")

    def _teardown(self) -> None:
        self._zk.close()


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
