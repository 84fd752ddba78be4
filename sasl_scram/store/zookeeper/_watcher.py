"""Following Kafka's ZooKeeper change notifications, as ``ZkNodeChangeNotificationListener``.

Shared by :class:`~sasl_scram.store.ZooKeeperCredentialStore`
(``/config/changes/config_change_*``) and ``tokenauth``'s
``ZooKeeperTokenStore`` (``/delegation_token/token_changes/token_change_*``).
Like a broker (docs/kafka-facts.md §5.4):

* a child watch on the notification path wakes one background thread, which
  reads the children sorted lexicographically and handles every sequence
  above the last one processed (a vanished notification is skipped);
* then notifications whose ZooKeeper ``ctime`` is older than the expiry
  (15 minutes in Kafka) are purged; another reader may purge them first;
* after start, a reconnect or a session expiry the watch is re-armed and
  everything is reloaded (a resync), since notifications may have been
  missed meanwhile.

What a notification means, how to reload and how staleness is tracked belong
to the store, given here as its :class:`WatcherHooks`. A store whose changes are
announced under more than one parent (the ACLs: ``/kafka-acl-changes`` and
``/kafka-acl-extended-changes``, one ``ZkNodeChangeNotificationListener`` each
in ``AclAuthorizer``) gives the others as :class:`ChangeFeed` values: one thread and
one resync follow them all.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sasl_scram.store.zookeeper._session import ZkSession

__all__ = ["DEFAULT_NOTIFICATION_EXPIRY", "ChangeFeed", "WatcherHooks", "ZkChangeWatcher"]

# ZkNodeChangeNotificationListener.changeExpirationMs: 15 minutes.
DEFAULT_NOTIFICATION_EXPIRY = 15 * 60.0

# An empty item only makes the thread go round its loop again.
_WAKE = ""
_RESYNC = "resync"
_CHANGES = "changes"
_STOP = "stop"


def _nothing() -> None:
    pass


@dataclass(frozen=True)
class WatcherHooks:
    """What the store does when the watcher calls on it.

    Attributes:
        reload: Reloads everything; returns the keys whose value changed.
        on_fresh: Called after a resync with the changed keys: stop the
            staleness clock and tell the listeners.
        on_notification: Handles one notification ``(name, data)`` (re-reads
            what it names).
        on_disconnect: Called on kazoo's thread when the connection is
            suspended or lost: start the staleness clock. Must not block.
        on_idle: Called on the background thread about once a second while
            a resync is pending (to notice that the store now fails closed).
    """

    reload: Callable[[], list[str]]
    on_fresh: Callable[[list[str]], None]
    on_notification: Callable[[str, bytes], None]
    on_disconnect: Callable[[], None]
    on_idle: Callable[[], None] = _nothing


@dataclass(frozen=True)
class ChangeFeed:
    """One more notification parent a watcher follows, beside its first.

    Attributes:
        path: The notification parent, e.g. ``/kafka-acl-extended-changes``.
        sequence: A child's sequence number, ``None`` if it is not a notification.
        handle: Handles one of its notifications ``(name, data)``.
    """

    path: str
    sequence: Callable[[str], int | None]
    handle: Callable[[str, bytes], None]


class _Feed:
    """A followed parent and how far it has been processed (the watcher's thread only,
    but for :meth:`ZkChangeWatcher.sync`, which reads ``last_executed``)."""

    def __init__(self, feed: ChangeFeed) -> None:
        self.path = feed.path
        self.sequence = feed.sequence
        self.handle = feed.handle
        self.last_executed = -1
        self.ctimes: dict[str, int] = {}

    def latest(self, children: Iterable[str]) -> int:
        return max((s for s in map(self.sequence, children) if s is not None), default=-1)


class ZkChangeWatcher:
    """The notification-following thread of a ZooKeeper store.

    Args:
        session: The store's ZooKeeper session.
        changes_path: The notification parent, e.g. ``/config/changes``.
        change_sequence: A child's sequence number, ``None`` if it is not a
            notification.
        notification_expiry: Seconds (against ``ctime``) after which a
            notification is purged.
        clock: Wall-clock seconds, compared with ``ctime``.
        hooks: The store's side of reloading and notifications.
        logger: The store's logger.
        what: What is followed, for the log (``"ZooKeeper changes"``).
        thread_name: The background thread's name.
        more_feeds: Further notification parents, followed like the first
            and resynced with it (each with its own handler).
    """

    def __init__(
        self,
        session: ZkSession,
        *,
        changes_path: str,
        change_sequence: Callable[[str], int | None],
        notification_expiry: float,
        clock: Callable[[], float],
        hooks: WatcherHooks,
        logger: logging.Logger,
        what: str,
        thread_name: str,
        more_feeds: Sequence[ChangeFeed] = (),
    ) -> None:
        self._zk = session
        self._feeds = [
            _Feed(ChangeFeed(changes_path, change_sequence, hooks.on_notification)),
            *(_Feed(feed) for feed in more_feeds),
        ]
        self._expiry_ms = int(notification_expiry * 1000)
        self._clock = clock
        self._hooks = hooks
        self._log = logger
        self._what = what
        self._thread_name = thread_name
        self._queue: queue.Queue[str] = queue.Queue()
        self._closed = False
        self._need_resync = False
        self._worker: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------

    def start(self) -> None:
        """Connect, register for state changes and do the first resync (on this thread).

        Raises:
            Exception: Whatever the session or the first load raised; the
                caller tears down.
        """
        self._zk.start(self.on_state)
        self.resync()

    def run_in_background(self) -> None:
        """Start the thread that follows notifications until :meth:`stop`."""
        self._worker = threading.Thread(target=self._run, name=self._thread_name, daemon=True)
        self._worker.start()

    def stop(self) -> None:
        """Stop the thread (waiting at most one request timeout and 5 s)."""
        self._closed = True
        self._queue.put(_STOP)
        if self._worker is not None:
            self._worker.join(timeout=self._zk.request_timeout + 5)

    def sync(self, timeout: float | None = None) -> bool:
        """Wait until the notifications present now have been processed.

        Returns whether that happened within ``timeout``.
        """
        try:
            targets = [(feed, feed.latest(self._zk.children(feed.path))) for feed in self._feeds]
        except self._zk.unavailable:
            return False
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._need_resync or any(feed.last_executed < t for feed, t in targets):
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(0.002)
        return True

    # -- kazoo callbacks (kazoo's thread: never block) -----------------------------

    def on_state(self, state: str) -> None:
        """kazoo connection-state listener."""
        kz_state = self._zk.states.KazooState
        if state in (kz_state.SUSPENDED, kz_state.LOST):
            self._hooks.on_disconnect()
            self._need_resync = True
            # Wake the thread: it may be blocked without a timeout, and from now
            # on it must tick once a second to notice when the copy goes stale.
            self._queue.put(_WAKE)
        elif state == kz_state.CONNECTED:
            # kazoo cleared every watch when the connection dropped and sets
            # none again on the new one (it sends no SetWatches, unlike
            # ZooKeeper's ClientCnxn): only this resync re-arms ours.
            self._queue.put(_RESYNC)

    def _on_changes(self, event: Any) -> None:
        # kazoo fires every watch once with a NONE event when the connection
        # drops; the CONNECTED listener handles that case with a full resync.
        if event is not None and event.type == self._zk.states.EventType.NONE:
            return
        self._queue.put(_CHANGES)

    # -- the background thread -----------------------------------------------------

    def _run(self) -> None:
        while True:
            try:
                item = self._queue.get(timeout=1.0 if self._need_resync else None)
            except queue.Empty:
                self._hooks.on_idle()
                item = _RESYNC if self._zk.connected() else ""
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
                    if self._zk.connected():
                        self.resync()
                else:
                    for feed in self._feeds:
                        self._process_feed(feed)
            except self._zk.unavailable as exc:
                # The state listener has logged the loss; this is its echo.
                self._need_resync = True
                self._log.debug("ZooKeeper unavailable, will resync: %s", exc)
            except Exception:
                self._need_resync = True
                self._log.exception("unexpected error following %s; will resync", self._what)

    def resync(self) -> None:
        """Re-arm the watch and reload everything (after start, reconnect, expiry)."""
        self._need_resync = False
        # After an expiry this is a new session, possibly on a lagging
        # follower: catch up with the leader first, so that the snapshot
        # swapped in is never older than what the cache already holds.
        self._zk.sync(self._feeds[0].path)
        seen = [self._zk.children(feed.path, watch=self._on_changes) for feed in self._feeds]
        latest = [feed.latest(children) for feed, children in zip(self._feeds, seen, strict=True)]
        changed = self._hooks.reload()
        for feed, newest in zip(self._feeds, latest, strict=True):
            feed.last_executed = max(feed.last_executed, newest)
        self._hooks.on_fresh(changed)
        # Notifications that arrived during the load are handled next.
        for feed, children in zip(self._feeds, seen, strict=True):
            self._process_feed(feed, children)

    def _process_feed(self, feed: _Feed, children: Sequence[str] | None = None) -> None:
        """One ``ZkNodeChangeNotificationListener.processNotifications`` pass, then the purge."""
        if children is None:
            children = self._zk.children(feed.path, watch=self._on_changes)
        names = sorted(children)
        for name in names:
            seq = feed.sequence(name)
            if seq is None or seq <= feed.last_executed:
                continue
            try:
                data, stat = self._zk.call(self._zk.client.get_async(f"{feed.path}/{name}"))
            except self._zk.ex.NoNodeError:
                feed.last_executed = seq
                continue
            feed.ctimes[name] = stat.ctime
            feed.handle(name, data)
            feed.last_executed = seq
        self._purge(feed, names)

    def _purge(self, feed: _Feed, names: Sequence[str]) -> None:
        """Delete notifications whose ctime is older than the expiry, like every broker.

        ``names`` are the live children: the ctimes of the others (purged,
        here or by another reader) are forgotten, so the map never outgrows them.
        """
        live = set(names)
        for gone in [name for name in feed.ctimes if name not in live]:
            del feed.ctimes[gone]
        now_ms = int(self._clock() * 1000)
        for name in names:
            if feed.sequence(name) is None:
                continue
            path = f"{feed.path}/{name}"
            ctime = feed.ctimes.get(name)
            if ctime is None:
                try:
                    stat = self._zk.call(self._zk.client.exists_async(path))
                except self._zk.ex.NoNodeError:
                    stat = None
                if stat is None:
                    continue
                ctime = feed.ctimes[name] = stat.ctime
            if now_ms - ctime > self._expiry_ms:
                # Another reader may have purged it first.
                with contextlib.suppress(self._zk.ex.NoNodeError):
                    self._zk.call(self._zk.client.delete_async(path))
                feed.ctimes.pop(name, None)
