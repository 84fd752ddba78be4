"""One kazoo connection as the ZooKeeper stores use it: bounded requests, Kafka's paths.

Shared by :class:`~sasl_scram.store.ZooKeeperCredentialStore` and
``tokenauth``'s ``ZooKeeperTokenStore``. The session

* creates the kazoo client from a connect string (and then owns it) or uses
  one passed in (never stopped here). A client we create reconnects with a
  bounded back-off (:data:`CONNECTION_RETRY`): kazoo's default doubles its
  delay up to an hour with compounding jitter, so an endpoint could stay
  away long after ZooKeeper came back. Each attempt is bounded too
  (``_handshake``): a server that accepts a connection and never answers its
  handshake costs about a second, not the session timeout. With
  ``share=True`` the stores of one process that name the same ZooKeeper
  (credentials and tokens) share one client, so one session and half the
  load on ZooKeeper;
* sends kazoo's per-attempt log lines ("Connecting to", "Connection
  dropped") to DEBUG: the stores log each state change once themselves;
* keeps znode data out of kazoo's log: kazoo logs requests and replies with
  their data (credential strings) at DEBUG and below, and a reply it cannot
  read as an ERROR naming the request; a filter on the ``kazoo.client``
  logger (our clients' and, by default, any client's) replaces every such
  argument by its type name, at every level;
* bounds every request by ``request_timeout`` (kazoo itself would wait
  forever) and turns connection trouble into the store's "unavailable"
  exception, while ZooKeeper's answers (NoNode, BadVersion, ...) are raised
  unchanged;
* creates the chroot like ``KafkaZkClient.createChrootIfNecessary`` and the
  store's persistent paths (``/config/users`` and ``/config/changes``, or the
  delegation-token paths).

kazoo is imported only when a session is created, so importing the stores
never needs it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import ClassVar

from sasl_scram.store._api import NoStore
from sasl_scram.store.zookeeper._handshake import bounded_handler
from sasl_scram.store.zookeeper._security import ZooKeeperSecurity

if TYPE_CHECKING:
    from kazoo.client import KazooClient

__all__ = ["CONNECTION_RETRY", "DEFAULT_REQUEST_TIMEOUT", "ZkSession", "load_kazoo"]

# Our bound on one ZooKeeper request; kazoo itself would wait forever.
DEFAULT_REQUEST_TIMEOUT = 10.0

#: ``KazooRetry`` arguments for reconnecting: forever, but never more than
#: about 1.2 s between attempts, so a returning ZooKeeper is seen within seconds.
CONNECTION_RETRY: dict[str, float] = {
    "max_tries": -1,
    "delay": 0.1,
    "backoff": 2,
    "max_jitter": 0.2,
    "max_delay": 1.0,
}


def load_kazoo(error: type[Exception], message: str) -> Any:
    """The ``kazoo`` package with the modules the stores use.

    Raises:
        error: kazoo is not installed (``message`` says what to install).
    """
    try:
        import kazoo.client
        import kazoo.exceptions
        import kazoo.handlers.threading
        import kazoo.protocol.states
        import kazoo.retry
        import kazoo.security
    except ImportError as exc:
        raise error(message) from exc
    _install_payload_filter()
    return kazoo


# kazoo's own BLATHER level.
_BELOW_DEBUG = 5
# The logger kazoo clients log to unless given another (ours log to it too).
_KAZOO_LOGGER = "kazoo.client"
# Arguments that cannot hold znode data: paths, xids, hosts, states, errors.
_NO_PAYLOAD = (str, int, float, type(None), BaseException)


def _without_payload(value: object) -> object:
    """``value`` when it cannot carry znode data, else only its type's name.

    kazoo's requests and replies (``Create``, ``SetData``, ``Transaction``,
    ``(data, ZnodeStat)``, lists of results) are tuples, lists or bytes; the
    session password is bytes. Rendering them would print the data.
    """
    return value if isinstance(value, _NO_PAYLOAD) else f"<{type(value).__name__}>"


def _scrub(args: Any) -> Any:
    if isinstance(args, Mapping):
        return {key: _without_payload(value) for key, value in args.items()}
    if isinstance(args, tuple):
        return tuple(_without_payload(value) for value in args)
    return args


class _PayloadFilter(logging.Filter):
    """Strips znode data from every record of the ``kazoo.client`` logger, at any level.

    A filter, not a level: kazoo's "Exception raised during deserialization of
    request" is an ERROR (we show it at DEBUG), and a logger at NOTSET lets
    BLATHER through, so demoting is no protection. It also covers a client an
    application passes in, which logs to this logger by default.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.args:
            record.args = _scrub(record.args)
        return True


_PAYLOAD_FILTER = _PayloadFilter()


def _install_payload_filter() -> None:
    logger = logging.getLogger(_KAZOO_LOGGER)
    if _PAYLOAD_FILTER not in logger.filters:  # once per process
        logger.addFilter(_PAYLOAD_FILTER)


# The warning kazoo's ConnectionHandler logs when the server refuses the login.
_KAZOO_AUTH_FAILED = "AUTH_FAILED closing: %s"


class _KazooLog(logging.LoggerAdapter):  # type: ignore[type-arg]
    """kazoo's own logger, at DEBUG, remembering its last warning: kazoo logs
    why a connection failed (refused, TLS handshake, SASL) and then only times
    out, and it logs every attempt (34 lines for one 20 s outage)."""

    def __init__(self) -> None:
        super().__init__(logging.getLogger(_KAZOO_LOGGER), {})
        self.last_problem: str | None = None
        # kazoo's connection thread logs this, then ends with state CLOSED:
        # by the time start() returns, the log is the only witness.
        self.auth_failed = False

    def log(self, level: int, msg: object, *args: object, **kwargs: Any) -> None:
        # Before last_problem is formatted: it may reach an exception's message.
        args = _scrub(args)
        if level >= logging.WARNING:
            try:
                text = str(msg) % args if args else str(msg)
            except (TypeError, ValueError):
                text = str(msg)
            # Its closing "Failed connecting ... retry policy" says nothing new.
            if not text.startswith("Failed connecting"):
                self.last_problem = text
            self.auth_failed = self.auth_failed or msg == _KAZOO_AUTH_FAILED
            level = logging.DEBUG
        else:
            # kazoo's own debug lines dump requests and replies (their data is
            # scrubbed above): noise, kept below DEBUG.
            level = min(level, _BELOW_DEBUG)
        super().log(level, msg, *args, **kwargs)

    def isEnabledFor(self, level: int) -> bool:  # noqa: N802 - logging's name
        # Warnings are always seen (for last_problem), then logged at DEBUG.
        return level >= logging.WARNING or self.logger.isEnabledFor(level)


def new_client(kazoo: Any, hosts: str, *, session_timeout: float, options: dict[str, Any]) -> Any:
    """A kazoo client with bounded reconnects, each attempt bounded too, and its
    chatter at DEBUG (not started)."""
    handler = bounded_handler(kazoo)
    retry = kazoo.retry.KazooRetry(sleep_func=handler.sleep_func, **CONNECTION_RETRY)
    log = _KazooLog()
    client = kazoo.client.KazooClient(
        hosts=hosts,
        timeout=session_timeout,
        handler=handler,
        connection_retry=retry,
        logger=log,
        **options,
    )
    client._scram_log = log  # where ZkSession finds the last problem
    return client


_SharedKey = tuple[str, float, Any]  # (connect string, session timeout, ZooKeeperSecurity)


class _Shared:
    """The process's shared clients, by what identifies a session: the connect
    string, session timeout and login; each with its count of users."""

    lock: ClassVar[threading.Lock] = threading.Lock()
    clients: ClassVar[dict[_SharedKey, tuple[Any, int]]] = {}

    @classmethod
    def acquire(cls, key: _SharedKey, make: Callable[[], Any]) -> tuple[Any, bool]:
        """The client for ``key`` and whether this call made it (then the caller starts it)."""
        with cls.lock:
            known = cls.clients.get(key)
            if known is not None:
                client, users = known
                cls.clients[key] = (client, users + 1)
                return client, False
            client = make()
            cls.clients[key] = (client, 1)
            return client, True

    @classmethod
    def release(cls, key: _SharedKey, client: Any) -> bool:
        """Forget one user of ``client``; whether it was the last (then stop it)."""
        with cls.lock:
            known = cls.clients.get(key)
            if known is None or known[0] is not client:
                return True
            if known[1] > 1:
                cls.clients[key] = (client, known[1] - 1)
                return False
            del cls.clients[key]
            return True


class ZkSession:
    """A kazoo client plus the request discipline of the ZooKeeper stores.

    Args:
        zookeeper: ``host:port[,host:port...][/chroot]`` or a kazoo client
            (started or not); a client passed in is not stopped by :meth:`close`.
        paths: The persistent paths to create, the data root first (a
            ``NoNode`` while creating it means the chroot is missing).
        request_timeout: Upper bound on one ZooKeeper request.
        session_timeout: Session timeout for a client we create.
        unavailable: Raised for connection trouble (the store's fail-closed
            exception).
        kazoo: The loaded kazoo package (see :func:`load_kazoo`).
        logger: Where shutdown trouble is logged.
        security: The SASL login for a client we create, and whether the
            znodes we create get Kafka's secure ACLs.
        share: Share the client with the other stores of this process that
            name the same ZooKeeper, session timeout and login.
        create: Create the chroot and the paths when missing; ``False`` for a
            store opened only to read, which then requires them and creates
            nothing (as ``kafka-configs --describe`` creates nothing).
    """

    def __init__(
        self,
        zookeeper: str | KazooClient,
        *,
        paths: Sequence[str],
        request_timeout: float,
        session_timeout: float,
        unavailable: type[Exception],
        kazoo: Any,
        logger: logging.Logger,
        security: ZooKeeperSecurity | None = None,
        share: bool = False,
        create: bool = True,
    ) -> None:
        self.kz = kazoo
        self._create = create
        self.security = security
        self._client_options: dict[str, Any] = security.kazoo_options() if security else {}
        self.ex = kazoo.exceptions
        self.states = kazoo.protocol.states
        self.unavailable = unavailable
        self.request_timeout = request_timeout
        self._timeout_error: type[Exception] = kazoo.handlers.threading.KazooTimeoutError
        self._paths = tuple(paths)
        self._log = logger
        self._state_listener: Callable[[str], None] | None = None
        # Set when the client is shared (see _Shared).
        self._shared_key: _SharedKey | None = None
        # Joined a shared client another store started: never start it again.
        self._joined = False
        if isinstance(zookeeper, str):

            def make() -> Any:
                return new_client(
                    kazoo, zookeeper, session_timeout=session_timeout, options=self._client_options
                )

            if share:
                self.client: KazooClient
                self._shared_key = (zookeeper, session_timeout, security)
                self.client, created = _Shared.acquire(self._shared_key, make)
                self._joined = not created
            else:
                self.client = make()
            self.owns_client = True
        else:
            self.client = zookeeper
            self.owns_client = False
        self._kazoo_log: _KazooLog | None = getattr(self.client, "_scram_log", None)
        self.hosts = ",".join(f"{h}:{p}" for h, p in self.client.hosts)

    def start(self, state_listener: Callable[[str], None]) -> None:
        """Connect if needed, create the paths, then register ``state_listener``."""
        if self._joined:
            # Starting a started kazoo client stops its handler and then waits,
            # with no limit, for a connection thread that retries forever: wait
            # for the session the first store keeps alive, as any request does.
            self._wait_connected()
        elif self.client.state != self.states.KazooState.CONNECTED:
            try:
                self.client.start(timeout=self.request_timeout)
            except self.ex.AuthFailedError:
                raise self._auth_failed() from None
            except self._timeout_error:
                # kazoo says "connected" before it sends the SASL login; a
                # refusal that lands before start() looks clears that, and
                # start() then times out at once with the state saying why.
                if self._kazoo_log and self._kazoo_log.auth_failed:
                    raise self._auth_failed() from None
                hosts = self.hosts
                why = self._kazoo_log.last_problem if self._kazoo_log else None
                raise self.unavailable(
                    f"could not connect to ZooKeeper at {hosts} within "
                    f"{self.request_timeout:g} s"
                    + (f": {why}" if why else "; the 'kazoo.client' log says why")
                ) from None
        if self._create:
            self.ensure_paths()
        else:
            self._require_paths()
        self._state_listener = state_listener
        self.client.add_listener(state_listener)

    def _wait_connected(self) -> None:
        deadline = time.monotonic() + self.request_timeout
        while self.client.state != self.states.KazooState.CONNECTED:
            if time.monotonic() >= deadline:
                raise self.unavailable(
                    f"could not connect to ZooKeeper at {self.hosts} within "
                    f"{self.request_timeout:g} s (the session shared with this "
                    "process's other store is not connected)"
                )
            time.sleep(0.05)

    def close(self) -> None:
        """Remove the state listener and stop the client if we created it (best effort)."""
        if self._state_listener is not None:
            with contextlib.suppress(Exception):  # best effort during shutdown
                self.client.remove_listener(self._state_listener)
        if self._shared_key is not None and not _Shared.release(self._shared_key, self.client):
            return
        if self.owns_client:
            try:
                self.client.stop()
                self.client.close()
            except Exception:
                self._log.debug("error stopping the ZooKeeper client", exc_info=True)

    # -- requests ------------------------------------------------------------------

    def connected(self) -> bool:
        return bool(self.client.state == self.states.KazooState.CONNECTED)

    def call(self, async_result: Any) -> Any:
        """Wait for one request, turning connection trouble into ``unavailable``.

        ZooKeeper answers (NoNode, BadVersion, ...) are raised unchanged.
        """
        try:
            return async_result.get(timeout=self.request_timeout)
        except self._timeout_error:
            raise self.unavailable(
                f"no answer from ZooKeeper within {self.request_timeout:g} s"
            ) from None
        except (
            self.ex.ConnectionLoss,
            self.ex.SessionExpiredError,
            self.ex.ConnectionDropped,
            self.ex.ZookeeperStoppedError,
            self.ex.OperationTimeoutError,
        ) as exc:
            raise self.unavailable(f"ZooKeeper connection failed: {type(exc).__name__}") from None
        except self.ex.AuthFailedError:
            raise self._auth_failed() from None
        except self.ex.NoAuthError:
            # Kafka's secure ACLs: only the brokers' ZooKeeper principal may read.
            if self.security is None:
                who = "an anonymous client"
            elif self.security.username is None:
                who = "this TLS client"
            else:
                who = repr(self.security.username)
            raise self.unavailable(
                f"ZooKeeper denied access to {who} (NoAuth): log in as the brokers' "
                "ZooKeeper principal (the 'Client' section of their JAAS file)"
            ) from None

    def _auth_failed(self) -> Exception:
        who = f" of {self.security.username!r}" if self.security and self.security.username else ""
        return self.unavailable(f"ZooKeeper rejected the SASL login{who}")

    def sync(self, path: str) -> None:
        """Make the server we are connected to catch up with the leader for ``path``.

        ZooKeeper reads are served by whichever server a client is connected
        to, and a follower may lag; a new session (after an expiry) has no
        guarantee of seeing what an older one saw. ``sync`` then read is how
        ZooKeeper gives an up-to-date read.
        """
        self.call(self.client.sync_async(path))

    def children(self, path: str, watch: Callable[[Any], None] | None = None) -> list[str]:
        """The children of ``path``; with ``watch``, also (re-)arm a child watch.

        A missing path reads as empty, except with a watch: then the paths are
        recreated so that the watch is armed.
        """
        try:
            if watch is not None:
                return list(self.call(self.client.get_children_async(path, watch=watch)))
            return list(self.call(self.client.get_children_async(path)))
        except self.ex.NoNodeError:
            if watch is not None and self._create:
                self.ensure_paths()
                return self.children(path, watch=watch)
            return []

    def acl(self, path: str) -> list[Any] | None:
        """The ACL for a znode we create at ``path``; ``None`` means ZooKeeper's open ACL."""
        return self.security.acl(path, self.kz.security) if self.security else None

    def create_in(self, txn: Any, path: str, data: bytes, *, sequence: bool = False) -> None:
        """Add a create to a multi-op, with the ACL :meth:`acl` gives ``path``.

        Every znode the stores create goes through here or :meth:`ensure_paths`,
        so none can miss Kafka's secure ACLs.
        """
        txn.create(path, data, acl=self.acl(path), sequence=sequence)

    def ensure_paths(self) -> None:
        """Create the chroot (like ``KafkaZkClient.createChrootIfNecessary``) and the paths."""
        root, *others = self._paths
        try:
            self._ensure(self.client, root)
        except self.ex.NoNodeError:
            self._create_chroot()
            self._ensure(self.client, root)
        for path in others:
            self._ensure(self.client, path)

    def _require_paths(self) -> None:
        """Fail unless every path exists: a store opened only to read creates nothing."""
        for path in self._paths:
            if self.call(self.client.exists_async(path)) is None:
                where = f"{self.hosts}{self.client.chroot or ''}"
                raise self.unavailable(
                    f"nothing to read at ZooKeeper {where}: {path} does not exist "
                    "(a Kafka broker or a write creates it; a read creates nothing)"
                ) from NoStore(f"{path} does not exist")

    def ensure_path(self, path: str) -> None:
        """Create ``path`` and its parents if missing, each with its own ACL."""
        self._ensure(self.client, path)

    def _ensure(self, client: KazooClient, path: str) -> None:
        """Create ``path`` level by level, each with its own ACL (``createRecursive``)."""
        parts = path.strip("/").split("/")
        for depth in range(1, len(parts) + 1):
            node = "/" + "/".join(parts[:depth])
            with contextlib.suppress(self.ex.NodeExistsError):
                self.call(client.create_async(node, b"", acl=self.acl(node)))

    def _create_chroot(self) -> None:
        chroot = self.client.chroot
        if not chroot:
            return
        helper = new_client(self.kz, self.hosts, session_timeout=10.0, options=self._client_options)
        try:
            helper.start(timeout=self.request_timeout)
            self._ensure(helper, chroot)
        finally:
            helper.stop()
            helper.close()
