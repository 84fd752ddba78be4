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

The session, the notification following and the staleness clock are the
credential store's (:class:`sasl_scram.store.zookeeper.ZkFollowedStore`);
kazoo is imported only when a store is created.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any

from sasl_scram.store import Freshness
from sasl_scram.store.zookeeper import DEFAULT_NOTIFICATION_EXPIRY
from sasl_scram.store.zookeeper import MAX_WRITE_ATTEMPTS
from sasl_scram.store.zookeeper import CommitOutcomeUnknown
from sasl_scram.store.zookeeper import CommitRefused
from sasl_scram.store.zookeeper import ZkFollowedStore
from sasl_scram.store.zookeeper import ZkStoreKind
from tokenauth._errors import TokenStoreError
from tokenauth._errors import TokenStoreUnavailable
from tokenauth._token import TokenInformation
from tokenauth.stores._api import ListenerSet
from tokenauth.stores._layout import CHANGE_PREFIX
from tokenauth.stores._layout import CHANGES_PATH
from tokenauth.stores._layout import TOKENS_PATH
from tokenauth.stores._layout import decode_notification
from tokenauth.stores._layout import decode_stored
from tokenauth.stores._layout import encode_notification
from tokenauth.stores._layout import encode_token
from tokenauth.stores._layout import token_path
from tokenauth.stores._mirror import TokenMirror

if TYPE_CHECKING:
    pass

__all__ = ["DEFAULT_NOTIFICATION_EXPIRY", "ZooKeeperTokenStore"]

_log = logging.getLogger("tokenauth.store.zookeeper")

_NOTHING_WRITTEN = "; nothing was written"


_KIND = ZkStoreKind(
    what="token store",
    data_path=TOKENS_PATH,  # createDelegationTokenPaths
    changes=(CHANGES_PATH, CHANGE_PREFIX),
    errors=(TokenStoreError, TokenStoreUnavailable),
    listeners=ListenerSet,
    logger=_log,
    thread_name="tokenauth-zookeeper",
)


class ZooKeeperTokenStore(ZkFollowedStore):
    """Delegation tokens in ZooKeeper, byte-compatible with Kafka 3.x ZooKeeper mode.

    Constructed like :class:`sasl_scram.store.zookeeper.ZkFollowedStore`.
    """

    kind = _KIND

    def _prepare(self, max_staleness: float, monotonic: Callable[[], float]) -> Freshness:
        self._tokens = TokenMirror()
        return super()._prepare(max_staleness, monotonic)

    def __repr__(self) -> str:
        return f"ZooKeeperTokenStore(tokens={len(self._tokens)}, state={self._client.state})"

    # -- reads from the mirror -----------------------------------------------------

    def check_usable(self) -> None:
        """Raise unless the mirror may be trusted.

        Raises:
            TokenStoreError: the store is closed.
            TokenStoreUnavailable: disconnected for longer than ``max_staleness``.
        """
        self._fresh.check_usable()

    def get(self, token_id: str) -> TokenInformation | None:
        if self._fresh.unhealthy:
            self._fresh.check_usable()
        return self._tokens.get(token_id)

    def tokens(self) -> list[TokenInformation]:
        if self._fresh.unhealthy:
            self._fresh.check_usable()
        return self._tokens.tokens()

    # -- writes ----------------------------------------------------------------------

    def put(self, info: TokenInformation) -> None:
        """Set-or-create the token znode and its notification in one multi-op."""
        self._check_open()
        path = token_path(info.token_id)
        data = encode_token(info)
        for _ in range(MAX_WRITE_ATTEMPTS):
            self._require_connected(_NOTHING_WRITTEN)
            txn = self._client.transaction()
            if self._exists(path) is None:
                self._zk.create_in(txn, path, data)
            else:
                txn.set_data(path, data)
            self._notify_in(txn, encode_notification(info.token_id))
            if self._try_commit(txn, races=(self._zk.ex.NodeExistsError,)):
                self._after_own_write(info.token_id)
                return
        raise TokenStoreError("too many concurrent writes of this token; it was not stored")

    def remove(self, token_id: str) -> bool:
        """Delete the token znode with a notification (``deleteRecursive`` in Kafka)."""
        self._check_open()
        path = token_path(token_id)
        for _ in range(MAX_WRITE_ATTEMPTS):
            self._require_connected(_NOTHING_WRITTEN)
            if self._exists(path) is None:
                self._after_own_write(token_id)
                return False
            txn = self._client.transaction()
            txn.delete(path)
            self._notify_in(txn, encode_notification(token_id))
            if self._try_commit(txn):
                self._after_own_write(token_id)
                return True
        raise TokenStoreError("too many concurrent writes of this token; it was not removed")

    # -- mirror maintenance ----------------------------------------------------------

    def _reread(self, token_ids: Sequence[str]) -> list[str]:
        """Re-read tokens (``TokenChangedNotificationHandler``); returns those that changed."""
        found = self._read_tokens(token_ids)
        return [t for t in token_ids if self._tokens.apply(t, found.get(t))]

    def _reload(self) -> list[str]:
        """The resync's full reload (every token); returns the ids that changed."""
        with self._lock:
            names = self._zk.children(TOKENS_PATH)
            fresh = {k: v for k, v in self._read_tokens(names).items() if v is not None}
            return self._tokens.replace_all(fresh)

    def _on_notification(self, name: str, data: bytes) -> None:
        """One ``token_change_`` notification: re-read the token it names."""
        token_id = decode_notification(data)
        if token_id is None:
            _log.warning("skipping notification %s: no token id", name)
        else:
            self._refresh([token_id])

    # -- ZooKeeper helpers -----------------------------------------------------------

    def _try_commit(self, txn: Any, races: tuple[type[Exception], ...] = ()) -> bool:
        """Commit a multi-op; ``True`` if applied, ``False`` to retry after a race
        (``ZkFollowedStore._commit_or_retry``), its errors as the token store's."""
        try:
            return self._commit_or_retry(txn, races)
        except CommitOutcomeUnknown as exc:
            raise TokenStoreUnavailable(
                f"connection lost during the write; it may or may not have been applied: {exc}"
            ) from None
        except CommitRefused as exc:
            raise TokenStoreError(f"ZooKeeper refused the write: {exc}") from None

    def _read_tokens(self, token_ids: Sequence[str]) -> dict[str, TokenInformation | None]:
        """Pipelined reads; ``None`` for an absent, empty or malformed znode (logged),
        or an id that names no znode (``MalformedToken``)."""
        return self._read_each(token_ids, token_path, _decode, None)


def _decode(token_id: str, path: str, data: bytes | None) -> TokenInformation | None:
    return None if data is None else decode_stored(data, token_id, f"token znode {path}", _log)
