"""ACLs in ZooKeeper, in Kafka 3.x ``AclAuthorizer``'s layout, with a watch-driven snapshot.

The layout is ``sasl_scram.authz``'s (``AclAuthorizer``, ``kafka.zk.ZkData``): one
node per resource pattern holding its entries as JSON, ``/kafka-acl/<Type>/<name>``
for LITERAL and ``/kafka-acl-extended/prefixed/<Type>/<name>`` for PREFIXED; each
change announced by a sequential ``acl_changes_`` node under
``/kafka-acl-changes`` (LITERAL) or ``/kafka-acl-extended-changes`` (PREFIXED).
At start the paths are created as ``KafkaZkClient.createAclPaths`` creates them
(both roots, a folder per resource type, both change parents).

Reading follows ``AclAuthorizer``: every node loaded at start
(``loadAllAcls``), then one ``ZkNodeChangeNotificationListener`` per change
parent, each notification re-reading the pattern it names. Writing follows
``updateResourceAcls``: read the node and its version, write the new entries
with that version (create, set, or delete when none are left), and on
``BadVersion`` (or a node created or removed meanwhile) read again and retry,
after 100 to 150 ms, at most 10 times more. Beyond Kafka, as the credential
store does: the versioned write and its notification are one multi-op, so a
change is never left unannounced.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import Final

from sasl_scram.authz import ACL_CHANGES_PATH
from sasl_scram.authz import ACL_PATH
from sasl_scram.authz import CHANGE_PREFIX
from sasl_scram.authz import EXTENDED_ACL_CHANGES_PATH
from sasl_scram.authz import AclBinding
from sasl_scram.authz import Authorizer
from sasl_scram.authz import AuthzError
from sasl_scram.authz import PatternType
from sasl_scram.authz import ResourcePattern
from sasl_scram.authz import ResourceType
from sasl_scram.authz import acl_node_path
from sasl_scram.authz import change_node
from sasl_scram.authz import decode_acl_node
from sasl_scram.authz import decode_change
from sasl_scram.authz import encode_acl_node
from sasl_scram.authz import parse_acl_node_path
from sasl_scram.kafka import ErrorCode
from sasl_scram.store._acls import AclSnapshot
from sasl_scram.store._acls import AclUpdateFailed
from sasl_scram.store._acls import AclWrites
from sasl_scram.store._acls import Change
from sasl_scram.store._acls import Entries
from sasl_scram.store._acls import acl_listeners
from sasl_scram.store._acls import kafka_ordered
from sasl_scram.store._acls import parse_pattern_key
from sasl_scram.store._acls import pattern_key
from sasl_scram.store._api import ACL_STORE_ERRORS
from sasl_scram.store._api import AclStoreUnavailable
from sasl_scram.store._freshness import Freshness
from sasl_scram.store.zookeeper._followed import CommitOutcomeUnknown
from sasl_scram.store.zookeeper._followed import CommitRefused
from sasl_scram.store.zookeeper._followed import ZkFollowedStore
from sasl_scram.store.zookeeper._followed import ZkStoreKind
from sasl_scram.store.zookeeper._format import parse_sequence
from sasl_scram.store.zookeeper._watcher import ChangeFeed

if TYPE_CHECKING:
    from kazoo.client import KazooClient

__all__ = ["MAX_UPDATE_RETRIES", "ZooKeeperAclStore"]

_log = logging.getLogger("sasl_scram.store.zookeeper")

#: ``AclAuthorizer.maxUpdateRetries``: attempts after the first.
MAX_UPDATE_RETRIES: Final = 10
# AclAuthorizer.backoffTime: retryBackoffMs + Random.nextInt(retryBackoffJitterMs).
_BACKOFF_MS: Final = 100
_BACKOFF_JITTER_MS: Final = 50

_TYPES: Final = tuple(t for t in ResourceType if t not in (ResourceType.UNKNOWN, ResourceType.ANY))


def _type_folder(resource_type: ResourceType, pattern_type: PatternType) -> str:
    """``ZkAclStore.path(resourceType)``: where a type's nodes live (from the node path
    the layout gives a pattern, so the layout is written once, in ``sasl_scram.authz``)."""
    return acl_node_path(ResourcePattern(resource_type, "-", pattern_type)).rsplit("/", 1)[0]


#: ``ZkAclStore.stores``' roots: ``/kafka-acl`` and ``/kafka-acl-extended/prefixed``.
_ROOTS: Final = tuple(
    _type_folder(ResourceType.TOPIC, p).rsplit("/", 1)[0]
    for p in (PatternType.LITERAL, PatternType.PREFIXED)
)
#: ``KafkaZkClient.createAclPaths``, after the data root and the first change parent.
_ALSO: Final = (
    *(_type_folder(t, PatternType.LITERAL) for t in _TYPES),
    _ROOTS[1],
    *(_type_folder(t, PatternType.PREFIXED) for t in _TYPES),
    EXTENDED_ACL_CHANGES_PATH,
)

_KIND = ZkStoreKind(
    what="ACL store",
    data_path=ACL_PATH,
    changes=(ACL_CHANGES_PATH, CHANGE_PREFIX),
    also=_ALSO,
    errors=ACL_STORE_ERRORS,
    logger=_log,
    thread_name="scram-zookeeper-acls",
    listeners=acl_listeners,
)


def _backoff() -> float:
    return (_BACKOFF_MS + secrets.randbelow(_BACKOFF_JITTER_MS)) / 1000


class ZooKeeperAclStore(ZkFollowedStore, AclWrites):
    """ACLs in ZooKeeper, byte-compatible with Kafka 3.x's ``AclAuthorizer``.

    The constructor connects (when given a connect string), creates the ACL
    paths if needed, loads every ACL and starts one background thread that
    follows both change parents. Reads come from an immutable snapshot; past
    ``max_staleness`` without ZooKeeper, :meth:`acls` raises
    :class:`~sasl_scram.store.AclStoreUnavailable` until a resync.

    Args:
        zookeeper: A connect string ``host:port[,host:port...][/chroot]``, or a
            kazoo ``KazooClient``; a client passed in is not stopped by :meth:`close`.
        sleep: Waits between update attempts (``time.sleep``).
        options: Those of :class:`~sasl_scram.store.zookeeper.ZkFollowedStore`.
    """

    kind = _KIND

    def __init__(
        self,
        zookeeper: str | KazooClient,
        *,
        sleep: Callable[[float], None] = time.sleep,
        **options: Any,
    ) -> None:
        self._sleep = sleep
        super().__init__(zookeeper, **options)

    def _prepare(self, max_staleness: float, monotonic: Callable[[], float]) -> Freshness:
        self._snapshot = AclSnapshot()
        return super()._prepare(max_staleness, monotonic)

    def __repr__(self) -> str:
        return f"ZooKeeperAclStore(acls={len(self._snapshot)}, state={self._client.state})"

    def acls(self) -> Authorizer:
        """The snapshot (no lock, no I/O).

        Raises:
            AclStoreUnavailable: ZooKeeper unreachable for more than ``max_staleness``.
        """
        if self._fresh.unhealthy:
            self._fresh.check_usable()
        return self._snapshot.authorizer

    # -- following (ZkFollowedStore) ------------------------------------------------------

    def _more_feeds(self) -> Sequence[ChangeFeed]:
        return (
            ChangeFeed(
                EXTENDED_ACL_CHANGES_PATH,
                lambda name: parse_sequence(name, CHANGE_PREFIX),
                self._on_extended_notification,
            ),
        )

    def _on_notification(self, name: str, data: bytes) -> None:
        self._follow(f"{ACL_CHANGES_PATH}/{name}", data)

    def _on_extended_notification(self, name: str, data: bytes) -> None:
        self._follow(f"{EXTENDED_ACL_CHANGES_PATH}/{name}", data)

    def _follow(self, path: str, data: bytes) -> None:
        """``AclChangedNotificationHandler``: re-read the pattern the notification names."""
        try:
            pattern = decode_change(path, data)
        except AuthzError as exc:
            _log.warning("skipping ACL change notification %s: %s", path, exc)
            return
        self._refresh([pattern_key(pattern)])

    def _reread(self, keys: Sequence[str]) -> list[str]:
        patterns = []
        for key in keys:
            try:
                patterns.append(parse_pattern_key(key))
            except ValueError as exc:
                _log.warning("skipping an ACL change: %s", exc)
        found = self._read_patterns(patterns)
        return [pattern_key(p) for p in self._snapshot.apply(found)]

    def _reload(self) -> list[str]:
        """``AclAuthorizer.loadAllAcls``: every node of both roots."""
        with self._lock:
            return [pattern_key(p) for p in self._snapshot.replace_all(self._load_all())]

    def _load_all(self) -> dict[ResourcePattern, Entries]:
        folders = [f"{root}/{name}" for root in _ROOTS for name in self._zk.children(root)]
        patterns = []
        for folder, names in zip(folders, self._children_many(folders), strict=True):
            for name in names:
                try:
                    patterns.append(parse_acl_node_path(f"{folder}/{name}"))
                except AuthzError as exc:
                    # loadAllAcls: "Ignoring unknown ResourceType".
                    _log.warning("ignoring %s/%s: %s", folder, name, exc)
                    break
        return self._read_patterns(patterns)

    def _children_many(self, paths: Sequence[str]) -> list[list[str]]:
        """The children of each path (pipelined; a missing path has none)."""
        pending = [self._client.get_children_async(path) for path in paths]
        out = []
        for result in pending:
            try:
                out.append(list(self._zk.call(result)))
            except self._zk.ex.NoNodeError:
                out.append([])
        return out

    def _read_patterns(self, patterns: Sequence[ResourcePattern]) -> dict[ResourcePattern, Entries]:
        """Each pattern's entries (pipelined reads): none for an absent node, and for
        a node that is not Kafka's JSON (logged), which ``AclAuthorizer`` reads as none."""
        by_key = {pattern_key(p): p for p in patterns}
        none: Entries = frozenset()
        read = self._read_each(list(by_key), lambda key: acl_node_path(by_key[key]), _decode, none)
        return {by_key[key]: entries for key, entries in read.items()}

    # -- writes (AclWrites) ---------------------------------------------------------------

    def _known_patterns(self) -> Iterable[ResourcePattern]:
        return self._snapshot.patterns()

    def _update(self, pattern: ResourcePattern, change: Change) -> bool:
        """``AclAuthorizer.updateResourceAcls``."""
        try:
            path = acl_node_path(pattern)
        except AuthzError as exc:
            # A name with '/', or '.', '..', names no node of its own: nothing is stored there.
            if change(frozenset()):
                raise AclUpdateFailed(str(exc), ErrorCode.INVALID_REQUEST) from None
            return False
        for attempt in range(1 + MAX_UPDATE_RETRIES):
            if attempt:
                self._sleep(_backoff())
            outcome = self._try_update(pattern, path, change)
            if outcome is not None:
                return outcome
        raise AclUpdateFailed(
            f"Failed to update ACLs for {pattern} after trying a maximum of "
            f"{MAX_UPDATE_RETRIES} times"
        )

    def _try_update(self, pattern: ResourcePattern, path: str, change: Change) -> bool | None:
        """One attempt: whether the entries changed, ``None`` to read again and retry."""
        if not self._zk.connected():
            raise AclUpdateFailed(_not_applied("ZooKeeper is unreachable"))
        try:
            data, stat = self._get(path)
        except AclStoreUnavailable as exc:
            raise AclUpdateFailed(_not_applied(str(exc))) from None
        try:
            current = frozenset(decode_acl_node(data or b""))
        except AuthzError as exc:
            # Never overwrite what we do not understand (Kafka would read it as none).
            _log.warning("not changing %s: %s", path, exc)
            raise AclUpdateFailed(f"ACL node {path} is not Kafka's ACL JSON: {exc}") from None
        new = change(current)
        if new == current and stat is None:
            return False
        txn = self._client.transaction()
        if new == current:
            # Nothing to write, but only if the node is still what was read: the
            # versioned write AclAuthorizer makes even then, without a change.
            txn.check(path, stat.version)
        else:
            self._versioned_write(txn, pattern, path, stat, new)
        return self._commit(txn, pattern, new != current)

    def _versioned_write(
        self, txn: Any, pattern: ResourcePattern, path: str, stat: Any, new: Entries
    ) -> None:
        """The node's write and the pattern's change notification, in one multi-op."""
        if stat is None:
            self._zk.create_in(txn, path, _encode(pattern, new))
        elif not new:
            # updateResourceAcls: "Deleting path for $resource because it had no ACLs remaining".
            txn.delete(path, version=stat.version)
        else:
            txn.set_data(path, _encode(pattern, new), version=stat.version)
        notification, data = change_node(pattern)
        self._zk.create_in(txn, notification, data, sequence=True)

    def _commit(self, txn: Any, pattern: ResourcePattern, changed: bool) -> bool | None:
        ex = self._zk.ex
        try:
            applied = self._commit_or_retry(txn, races=(ex.BadVersionError, ex.NodeExistsError))
        except CommitOutcomeUnknown as exc:
            raise AclUpdateFailed(
                "ACL store connection lost during the write; the change may or may not "
                f"have been applied, list the ACLs to check: {exc}"
            ) from None
        except AclStoreUnavailable as exc:  # the vanished paths were not recreated
            raise AclUpdateFailed(_not_applied(str(exc))) from None
        except CommitRefused as exc:
            _log.warning("ZooKeeper refused the ACL update of %s: %r", pattern, exc.failures)
            raise AclUpdateFailed(_not_applied(f"ZooKeeper refused the write: {exc}")) from None
        if not applied:
            return None
        if changed:
            _log.info("Updated ACLs for %s", pattern)
        return changed

    def _updated(self, patterns: list[ResourcePattern]) -> None:
        # Read-your-writes: the snapshot shows the change before the call returns.
        try:
            self._refresh([pattern_key(p) for p in patterns])
        except AclStoreUnavailable as exc:
            _log.warning("could not refresh the ACLs after a write: %s", exc)


def _decode(key: str, path: str, data: bytes | None) -> Entries:
    if not data:
        return frozenset()
    try:
        return frozenset(decode_acl_node(data))
    except AuthzError as exc:
        _log.warning("skipping %s: %s", path, exc)
        return frozenset()


def _encode(pattern: ResourcePattern, entries: Entries) -> bytes:
    """``ResourceZNode.encode``, the entries in Kafka's order (stable bytes)."""
    ordered = kafka_ordered(AclBinding(pattern, entry) for entry in entries)
    return encode_acl_node(binding.entry for binding in ordered)


def _not_applied(reason: str) -> str:
    return f"ACL store unavailable; the change was not applied: {reason}"
