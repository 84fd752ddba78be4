"""``kafka-scram serve`` configuration, with Kafka's key names wherever Kafka has one.

:data:`ENDPOINT_KEYS` is the one table of keys (name, default, parser, what
is accepted, a doc line); extensions add theirs (the delegation-token keys)
through their entry point. Unknown keys get a warning, with the closest known
key when one is close; invalid values raise :class:`ScramConfigError` naming
the file, line and key and what is accepted, before anything starts.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import unicodedata
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from sasl_scram._errors import ScramConfigError
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.config import ConfigKey
from sasl_scram.config import KafkaPrincipal
from sasl_scram.config import boolean
from sasl_scram.config import build
from sasl_scram.config import choice
from sasl_scram.config import install_hint
from sasl_scram.config import integer
from sasl_scram.config import is_known
from sasl_scram.config import read_keys
from sasl_scram.config import suggest_key
from sasl_scram.config import text
from sasl_scram.config import verbatim
from sasl_scram.config import zookeeper_connect
from sasl_scram.endpoint._connection_caps import CAP_KEYS
from sasl_scram.endpoint._connection_caps import JAVA_INT_MAX
from sasl_scram.endpoint._extension import DEFAULT_EXTENSIONS
from sasl_scram.endpoint._extension import EXTENSIONS_KEY
from sasl_scram.endpoint._extension import extension_factories
from sasl_scram.endpoint._extension import extension_names
from sasl_scram.endpoint._extension import factory_keys
from sasl_scram.endpoint._keystore import SslKeystore
from sasl_scram.endpoint._listeners import LISTENER_KEYS
from sasl_scram.endpoint._listeners import ListenerAddress
from sasl_scram.endpoint._metrics import METRICS_LISTENER
from sasl_scram.endpoint._metrics import METRICS_MAX_USERS
from sasl_scram.frontdoor import CLIENT_PROPERTIES_KEY
from sasl_scram.frontdoor import KAFKA_AUTHORIZERS
from sasl_scram.frontdoor import UPSTREAM_KEYS
from sasl_scram.frontdoor import UpstreamConfig
from sasl_scram.frontdoor import edge_authorizer_enabled
from sasl_scram.frontdoor import upstream_config
from sasl_scram.store import StoreLocation
from sasl_scram.store.zookeeper import ZOOKEEPER_KEYS
from sasl_scram.store.zookeeper import ZooKeeperOptions

__all__ = [
    "BOOTSTRAP_FILE_KEY",
    "BOOTSTRAP_USER_KEY",
    "ENDPOINT_KEYS",
    "EVENT_LOOP_KEY",
    "JAVA_INT_MAX",
    "STORE_KEYS",
    "WORKERS_KEY",
    "EndpointConfig",
    "extension_keys",
    "store_location",
]

log = logging.getLogger("sasl_scram.endpoint")

# Keys we read ourselves (no Kafka equivalent) are prefixed "scram." so they
# can never be confused with a Kafka setting.
STORE_PATH_KEY = "scram.credential.store.path"
ZOOKEEPER_CONNECT_KEY = "zookeeper.connect"
AUTH_TIMEOUT_KEY = "scram.authentication.timeout.ms"
DECOY_SECRET_KEY = "scram.decoy.secret"  # noqa: S105 - the name of a key, not a secret
BUSY_POLL_KEY = "scram.busy.poll.us"
# Caps for authenticated users that are not super users (docs/security.md).
USER_MAX_REQUEST_KEY = "scram.user.request.max.bytes"
USER_MAX_ARRAY_KEY = "scram.user.request.max.array.length"
# Past a few milliseconds busy polling only burns a core between bursts.
MAX_BUSY_POLL_US = 100_000
CLUSTER_ID_KEY = "cluster.id"
BACKLOG_KEY = "socket.listen.backlog.size"
EVENT_LOOP_KEY = "scram.event.loop"
BOOTSTRAP_USER_KEY = "scram.bootstrap.user"
BOOTSTRAP_FILE_KEY = "scram.bootstrap.client.properties"
WORKERS_KEY = "scram.workers"
MAX_CONNECTIONS_KEY = "max.connections"
FAILURE_BUDGET_KEY = "scram.login.failure.budget"
LEGACY_NONCE_KEY = "scram.legacy.librdkafka.nonce.enable"
# More processes than this is a typo, not a machine.
MAX_WORKERS = 1024


def _mechanisms(value: str, _: Mapping[str, Any]) -> tuple[ScramMechanism, ...]:
    mechanisms: list[ScramMechanism] = []
    for name in (n.strip() for n in value.split(",")):
        if not name:
            continue
        try:
            mechanisms.append(ScramMechanism.from_name(name))
        except ValueError:
            raise ValueError(f"{name!r} is not supported") from None
    if not mechanisms:
        raise ValueError("at least one mechanism is required")
    return tuple(mechanisms)


def _super_users(value: str, _: Mapping[str, Any]) -> frozenset[KafkaPrincipal]:
    return frozenset(KafkaPrincipal.parse(p.strip()) for p in value.split(";") if p.strip())


_STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def _authorizer(value: str, _: Mapping[str, Any]) -> str:
    name = value.strip()
    if name and not edge_authorizer_enabled(name):
        raise ValueError(f"{name!r} is not one of Kafka's authorizers: use {_STANDARD_AUTHORIZER}")
    return name


def _event_loop(value: str, parsed: Mapping[str, Any]) -> str:
    chosen: str = choice("auto", "uvloop", "asyncio")(value, parsed)
    # Checked here, not when the loop starts, so the error names the file and line.
    if chosen == "uvloop" and importlib.util.find_spec("uvloop") is None:
        raise ValueError(f"uvloop is not installed: {install_hint('server')}")
    return chosen


def _workers(value: str, parsed: Mapping[str, Any]) -> int:
    if value.strip().lower() == "auto":
        # The cores this process may run on (taskset, a container's cpuset),
        # not every core of the machine; where the system cannot say, all of them.
        if hasattr(os, "sched_getaffinity"):
            return len(os.sched_getaffinity(0))
        return os.cpu_count() or 1
    try:
        workers: int = integer(1, MAX_WORKERS)(value, parsed)
    except ValueError:
        raise ValueError(f"expected auto or an integer from 1 to {MAX_WORKERS}") from None
    return workers


def _bootstrap_user(value: str, _: Mapping[str, Any]) -> str | None:
    user = value.strip()
    # The name is written into line-based files (client properties, kcat's
    # configuration): a line break (``\n`` in a properties file) would split them.
    if any(unicodedata.category(char) == "Cc" for char in user):
        raise ValueError("a user name must not contain control characters")
    return user or None


def _bootstrap_file(value: str, _: Mapping[str, Any]) -> Path:
    if not value.strip():
        raise ValueError("expected a file path, got nothing")
    path = Path(value.strip())
    # Checked before the user is created: a password nobody can read is lost.
    if path.is_dir():
        raise ValueError(f"{str(path)!r} is a directory")
    return path


def _zookeeper_connect(value: str, _: Mapping[str, Any]) -> str:
    # Empty: no ZooKeeper; otherwise kazoo would fail on a bad entry only later.
    return zookeeper_connect(value) if value.strip() else ""


def _secret_bytes(value: str, _: Mapping[str, Any]) -> bytes | None:
    return value.strip().encode("utf-8") or None


_INT0, _INT1 = "an integer >= 0", "an integer >= 1"
_SSL = "for SASL_SSL listeners (PEM only)"
_ANY = "any text"

#: The keys that name the credential store (the token store lives beside it):
#: :func:`store_location` reads their values.
STORE_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        STORE_PATH_KEY,
        "",
        text,
        "a file path",
        "the embedded SQLite credential store",
        field="store_path",
    ),
    ConfigKey(
        ZOOKEEPER_CONNECT_KEY,
        "",
        _zookeeper_connect,
        "host:port[,host:port][/chroot]",
        "Kafka's ZooKeeper, as the credential store",
        field="zookeeper_connect",
    ),
    *ZOOKEEPER_KEYS,
)

#: Every key ``kafka-scram serve`` reads, each naming the field of
#: :class:`EndpointConfig` it fills (the ZooKeeper keys fill
#: :class:`~sasl_scram.store.zookeeper.ZooKeeperOptions`, the ``zookeeper`` field).
#: Adding a key is adding one entry, and the field it names.
#: A SASL_SSL listener's keystore, filling the fields of :class:`SslKeystore`.
# Their values go to Python's ssl module as written.
SSL_KEYSTORE_KEYS = (
    ConfigKey(
        "ssl.keystore.type",
        None,
        text,
        "PEM",
        f"the keystore's type, {_SSL}",
        field="type",
    ),
    ConfigKey(
        "ssl.keystore.location",
        None,
        verbatim,
        "a PEM file path",
        f"certificate and key, {_SSL}",
        field="location",
    ),
    ConfigKey(
        "ssl.keystore.certificate.chain",
        None,
        verbatim,
        "PEM text",
        f"the certificates, {_SSL}",
        field="certificate_chain",
    ),
    ConfigKey(
        "ssl.keystore.key",
        None,
        verbatim,
        "PEM text",
        f"the key, {_SSL}",
        secret=True,
        field="key",
    ),
    ConfigKey(
        "ssl.key.password",
        None,
        verbatim,
        _ANY,
        f"password of the key, {_SSL}",
        secret=True,
        field="key_password",
    ),
)

ENDPOINT_KEYS: tuple[ConfigKey, ...] = (
    *LISTENER_KEYS,
    ConfigKey(
        "node.id", "1", integer(0), _INT0, "the broker id in Metadata answers", field="node_id"
    ),
    ConfigKey(
        CLUSTER_ID_KEY, "kafka-scram-cluster-00", text, _ANY, "the cluster id", field="cluster_id"
    ),
    ConfigKey(
        "sasl.enabled.mechanisms",
        "SCRAM-SHA-256,SCRAM-SHA-512",
        _mechanisms,
        f"a comma-separated list of {', '.join(ScramMechanism.names())}",
        "mechanisms offered in SaslHandshake",
        field="mechanisms",
    ),
    ConfigKey(
        "super.users",
        "",
        _super_users,
        "principals like User:admin, separated by ';'",
        "principals allowed every operation",
        field="super_users",
    ),
    ConfigKey(
        "authorizer.class.name",
        "",
        _authorizer,
        f"empty, {' or '.join(sorted(KAFKA_AUTHORIZERS, reverse=True))}",
        "edge ACLs decide every forwarded request, as Kafka's authorizer would (empty: off)",
        field="authorizer",
    ),
    ConfigKey(
        "allow.everyone.if.no.acl.found",
        "false",
        boolean,
        "true or false",
        "with edge ACLs: allow what no ACL of the resource names",
        field="allow_everyone_if_no_acl_found",
    ),
    ConfigKey(
        "connections.max.reauth.ms",
        "0",
        integer(0),
        _INT0,
        "KIP-368 session lifetime (0: no re-authentication)",
        field="max_reauth_ms",
    ),
    ConfigKey(
        "sasl.server.max.receive.size",
        "524288",
        integer(1),
        _INT1,
        "largest SASL token before authentication",
        field="sasl_max_receive",
    ),
    ConfigKey(
        "socket.request.max.bytes",
        "104857600",
        integer(1),
        _INT1,
        "largest request",
        field="max_request",
    ),
    ConfigKey(
        "connections.max.idle.ms",
        "600000",
        integer(1),
        _INT1,
        "idle connections are closed after this",
        field="idle_timeout_ms",
    ),
    # KIP-306: close a connection this long after a failed authentication.
    ConfigKey(
        "connection.failed.authentication.delay.ms",
        "100",
        integer(0),
        _INT0,
        "delay before answering and closing after a failed login",
        field="failed_auth_delay_ms",
    ),
    ConfigKey(
        AUTH_TIMEOUT_KEY,
        "30000",
        integer(1),
        _INT1,
        "time allowed for a login",
        field="auth_timeout_ms",
    ),
    ConfigKey(
        BUSY_POLL_KEY,
        "0",
        integer(0, MAX_BUSY_POLL_US),
        f"an integer from 0 to {MAX_BUSY_POLL_US}",
        "microseconds of spinning after each network event (0: off)",
        field="busy_poll_us",
    ),
    # Each listener's accept queue. Kafka's default is 50, drained by a dedicated
    # Acceptor thread (SocketServer); here the event loop that answers requests
    # also accepts, so a burst of 100 connects overflowed 50 (1 s SYN
    # retransmits at the bench's concurrency 100), and 1000 clients reconnecting
    # after each login overflowed 512 (retransmits, now and then a reset). 4096
    # instead, which the kernel caps at net.core.somaxconn, as Go's listeners
    # take somaxconn.
    ConfigKey(
        BACKLOG_KEY,
        "4096",
        integer(1),
        _INT1,
        "pending connections each listener queues (the kernel caps it at net.core.somaxconn)",
        field="listen_backlog",
    ),
    METRICS_LISTENER,
    METRICS_MAX_USERS,
    # Kafka's broker-wide cap (ConnectionQuotas): at it, the acceptor waits for a
    # connection to close and new ones wait in the listen queue. Here per process:
    # each of scram.workers counts its own.
    ConfigKey(
        MAX_CONNECTIONS_KEY,
        str(JAVA_INT_MAX),
        integer(1),
        _INT1,
        "connections each serve process holds at most (more wait in the listen queue)",
        field="max_connections",
    ),
    # Kafka's per-address caps, and ours per user (_connection_caps.py); per process.
    *CAP_KEYS,
    ConfigKey(
        USER_MAX_REQUEST_KEY,
        "1048576",
        integer(1),
        _INT1,
        "largest request of an authenticated user who is not a super user",
        field="user_max_request",
    ),
    ConfigKey(
        USER_MAX_ARRAY_KEY,
        "10000",
        integer(0),
        _INT0,
        "longest array in such a user's request",
        field="user_max_array",
    ),
    # Kafka 4.x requires the client-final nonce to equal the server's; librdkafka
    # < 2.6.1 repeats its client nonce in front, which Kafka 3.7.2-3.9.x accept
    # (ScramSaslServer's endsWith). This accepts that one form, nothing else.
    ConfigKey(
        LEGACY_NONCE_KEY,
        "false",
        boolean,
        "true or false",
        "also accept librdkafka < 2.6.1's client-final nonce (docs/security.md)",
        field="legacy_librdkafka_nonce",
    ),
    *STORE_KEYS,
    ConfigKey(
        DECOY_SECRET_KEY,
        None,
        _secret_bytes,
        _ANY,
        "key for decoy salts of unknown users",
        secret=True,
        field="decoy_secret",
    ),
    ConfigKey(
        BOOTSTRAP_USER_KEY,
        None,
        _bootstrap_user,
        "a user name without control characters",
        "super user created on first start",
        field="bootstrap_user",
    ),
    ConfigKey(
        BOOTSTRAP_FILE_KEY,
        "bootstrap-admin.properties",
        _bootstrap_file,
        "a file path (not a directory)",
        "where its client properties go",
        field="bootstrap_file",
    ),
    ConfigKey(
        EVENT_LOOP_KEY,
        "auto",
        _event_loop,
        "auto, uvloop (when installed) or asyncio",
        "the event loop",
        field="event_loop",
    ),
    # One process per core: the listeners are shared with SO_REUSEPORT, each
    # worker has its own event loop and store session (docs/architecture.md).
    ConfigKey(
        WORKERS_KEY,
        "1",
        _workers,
        f"auto (one per core this process may use) or an integer from 1 to {MAX_WORKERS}",
        "worker processes serving the listeners",
        field="workers",
    ),
    *SSL_KEYSTORE_KEYS,
    # An extension is code run inside the authentication server: only those named
    # here are imported, not whatever another installed distribution registers.
    ConfigKey(
        EXTENSIONS_KEY,
        DEFAULT_EXTENSIONS,
        extension_names,
        "installed extension names, comma-separated (empty: none)",
        "endpoint extensions to load (tokens: delegation tokens)",
        field="extensions",
    ),
    # The failure budget per (claimed name, source address) pair, per name and
    # per address, beyond Kafka's per-connection delay (docs/security.md).
    ConfigKey(
        FAILURE_BUDGET_KEY,
        "20",
        integer(0),
        _INT0,
        "failed logins per (name, address) pair within the window before that pair's "
        "verdicts are paced (0: the whole budget off)",
        field="failure_budget",
    ),
    ConfigKey(
        f"{FAILURE_BUDGET_KEY}.per.user",
        "500",
        integer(0),
        _INT0,
        "failed logins per name, from all addresses, within the window before that "
        "name's verdicts are paced everywhere (0: never)",
        field="failure_budget_per_user",
    ),
    ConfigKey(
        f"{FAILURE_BUDGET_KEY}.per.address",
        "500",
        integer(0),
        _INT0,
        "failed logins per address, at all names, within the window before that "
        "address's verdicts are paced for every name (0: never)",
        field="failure_budget_per_address",
    ),
    ConfigKey(
        f"{FAILURE_BUDGET_KEY}.window.ms",
        "60000",
        integer(1),
        _INT1,
        "how long a failed login counts against its pair, name and address",
        field="failure_budget_window_ms",
    ),
    ConfigKey(
        f"{FAILURE_BUDGET_KEY}.interval.ms",
        "1000",
        integer(1),
        _INT1,
        "past a threshold, least time between two verdicts of one pair, name or address",
        field="failure_budget_interval_ms",
    ),
    ConfigKey(
        f"{FAILURE_BUDGET_KEY}.max.entries",
        "100000",
        integer(1),
        _INT1,
        "most pairs, most names and most addresses the budget remembers (each)",
        field="failure_budget_max_entries",
    ),
    # The front door: its own keys, then every other key under the prefix, read
    # as a family of client properties.
    *UPSTREAM_KEYS,
    CLIENT_PROPERTIES_KEY,
)

# Keys that fill a type of their own rather than a field of EndpointConfig.
_OWN_TYPES = frozenset((*ZOOKEEPER_KEYS, *SSL_KEYSTORE_KEYS, *UPSTREAM_KEYS))


def extension_keys(names: Sequence[str] | None = None) -> tuple[ConfigKey, ...]:
    """Keys that the endpoint extensions ``names`` read (default: those loaded by
    default, whose keys are the delegation tokens')."""
    return tuple(key for factory in extension_factories(names) for key in factory_keys(factory))


def _warn_unknown(
    given: Mapping[str, str], table: Sequence[ConfigKey], origins: Mapping[str, str]
) -> None:
    known = [key.name for key in table]
    for key in sorted(name for name in given if not is_known(table, name)):
        close = suggest_key(key, known)
        hint = f"; did you mean {close!r}?" if close else ""
        where = f"{origins[key]}: " if key in origins else ""
        log.warning("%sUnknown configuration key %r is ignored%s", where, key, hint)


def _warn_shared_secrets(table: Sequence[ConfigKey], given: Mapping[str, str]) -> None:
    """A WARNING for each file holding a secret key that group or others may read or
    write, as the SQLite store and the bootstrap files get: the value lets anyone
    forge tokens or decrypt the keystore. A file line that ``--override`` replaced
    counts too: the file still holds that secret."""
    origins: Mapping[str, str] = getattr(given, "origins", {})
    shadowed: Mapping[str, Sequence[str]] = getattr(given, "shadowed", {})
    secrets_by_file: dict[str, list[str]] = {}
    for key in table:
        if not key.secret or key.name not in given:
            continue
        for origin in (*shadowed.get(key.name, ()), origins.get(key.name, "--override")):
            names = secrets_by_file.setdefault(origin.rsplit(":", 1)[0], [])
            if origin != "--override" and key.name not in names:
                names.append(key.name)
    secrets_by_file.pop("--override", None)
    for path, names in secrets_by_file.items():
        try:
            mode = os.stat(path).st_mode & 0o777
        except OSError:
            continue
        if mode & 0o077:
            log.warning(
                "%s is readable or writable by group or others (mode %o) and holds %s: "
                "run chmod 600 on it",
                path, mode, ", ".join(names),
            )  # fmt: skip


def _warn_advertised_elsewhere(
    listeners: Sequence[ListenerAddress],
    advertised: Mapping[str, ListenerAddress],
    origins: Mapping[str, str],
) -> None:
    """A WARNING when ``listeners`` and ``advertised.listeners`` were set in different
    places (a file and ``--override``) and send clients to another port or host
    than the one that serves: the case of a port changed with one override."""
    where_bound, where_told = origins.get("listeners"), origins.get("advertised.listeners")
    if where_bound is None or where_told is None or where_bound == where_told:
        return
    for entry in listeners:
        told = advertised[entry.name]
        if entry.port and (told.host, told.port) != (entry.host, entry.port):
            log.warning(
                "%s: advertised.listeners sends clients to %s, but listeners (%s) serves "
                "%s: clients will try the advertised address; set both keys "
                "(--override listeners=%s --override advertised.listeners=%s) or remove "
                "advertised.listeners, which then follows listeners",
                where_told, told, where_bound, entry, entry, entry,
            )  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class EndpointConfig:
    """The validated configuration of one endpoint process: one field per key of
    :data:`ENDPOINT_KEYS` (the key names it), and what is made of several keys.

    A field whose key has a default has none here: the table is the one place
    for it, and :meth:`from_properties` always fills it."""

    listeners: tuple[ListenerAddress, ...]
    advertised: dict[str, ListenerAddress] = field(default_factory=dict)
    #: ``listener.security.protocol.map``, by listener name.
    protocol_map: dict[str, str] = field(default_factory=dict)
    node_id: int
    cluster_id: str
    mechanisms: tuple[ScramMechanism, ...]
    super_users: frozenset[KafkaPrincipal] = frozenset()
    #: ``authorizer.class.name``: one of Kafka's authorizers, or empty (off).
    authorizer: str
    allow_everyone_if_no_acl_found: bool
    max_reauth_ms: int
    sasl_max_receive: int
    max_request: int
    idle_timeout_ms: int
    auth_timeout_ms: int
    failed_auth_delay_ms: int
    #: Frame and array caps for authenticated users that are not super users.
    user_max_request: int
    user_max_array: int
    #: Adaptive busy polling window in microseconds; 0 (default) lets the loop sleep.
    busy_poll_us: int
    #: ``socket.listen.backlog.size``: pending connections each listener queues.
    listen_backlog: int
    #: ``max.connections``: connections one process holds at most.
    max_connections: int
    #: ``max.connections.per.ip``, and the caps of ``max.connections.per.ip.overrides``
    #: by IP address (host names resolved once, at start).
    max_connections_per_ip: int
    max_connections_per_ip_overrides: dict[str, int] = field(default_factory=dict)
    #: ``scram.max.connections.per.user``: logged-in connections per user and process.
    max_connections_per_user: int
    #: ``scram.metrics.listener``: where /metrics is served (``None``: off).
    metrics_listener: tuple[str, int] | None = None
    #: ``scram.metrics.max.users``: edge users with a label of their own in /metrics.
    metrics_max_users: int
    #: ``scram.event.loop``: ``auto``, ``uvloop`` or ``asyncio``.
    event_loop: str
    #: ``scram.legacy.librdkafka.nonce.enable``: accept librdkafka < 2.6.1's
    #: client-final nonce too (off: Kafka 4.x's equality).
    legacy_librdkafka_nonce: bool
    #: ``scram.workers``: processes serving the listeners (``auto`` resolved).
    workers: int
    #: ``scram.bootstrap.user`` (``None``: no bootstrap user) and where its
    #: client properties go (``scram.bootstrap.client.properties``).
    bootstrap_user: str | None = None
    bootstrap_file: Path
    #: ``scram.credential.store.path`` and ``zookeeper.connect`` as given; the
    #: store they name, with its options, is :attr:`store`.
    store_path: str = ""
    zookeeper_connect: str = ""
    #: The ZooKeeper keys (used when ``zookeeper.connect`` is set).
    zookeeper: ZooKeeperOptions = field(default_factory=ZooKeeperOptions)
    #: The credential store: its location and the options it is opened with.
    store: StoreLocation = field(default_factory=StoreLocation.memory)
    # Secrets (the decoy key, ssl.key.password, an inline PEM key): never in a repr.
    decoy_secret: bytes | None = field(default=None, repr=False)
    #: The ``ssl.keystore.*`` keys and ``ssl.key.password``.
    ssl_keystore: SslKeystore = field(default_factory=SslKeystore)
    #: ``scram.endpoint.extensions``: the extensions loaded, by entry-point name.
    extensions: tuple[str, ...]
    #: ``scram.login.failure.budget*``: failures per (name, address) pair, per
    #: name and per address within the window, then one verdict per interval
    #: (0: off; see ``_budget.py``).
    failure_budget: int
    failure_budget_per_user: int
    failure_budget_per_address: int
    failure_budget_window_ms: int
    failure_budget_interval_ms: int
    failure_budget_max_entries: int
    #: The ``upstream.`` keys as given, prefix dropped (never in a repr: the
    #: upstream login's password is one of them) ...
    upstream_properties: dict[str, str] = field(default_factory=dict, repr=False)
    #: ... and typed: the front door (``None``: off).
    upstream: UpstreamConfig | None = None
    #: The properties as given (after overrides), for the extensions.
    properties: dict[str, str] = field(default_factory=dict, repr=False)
    #: Every key of the table (the extensions' keys included) as its parser
    #: returned it, for the extensions (``load_extensions``): parsed once.
    settings: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_properties(
        cls,
        given: Mapping[str, str],
        extra_keys: Sequence[ConfigKey] | None = None,
        *,
        keys: Sequence[ConfigKey] = ENDPOINT_KEYS,
    ) -> EndpointConfig:
        """Validate ``server.properties`` values (after overrides).

        Args:
            given: The values; a :class:`~sasl_scram.config.Properties` also
                tells where each was set, and errors name that file and line.
            extra_keys: Keys other packages read (default: those of the
                extensions ``scram.endpoint.extensions`` names), so they are
                not "unknown".
            keys: The table (a subclass adding a field passes its own).

        Raises:
            ScramConfigError: naming the file, line and key, and what is accepted.
        """
        origins: Mapping[str, str] = getattr(given, "origins", {})
        if extra_keys is None:
            # Which extensions, before their keys: only the named ones are imported.
            named = [key for key in keys if key.name == EXTENSIONS_KEY]
            extra_keys = extension_keys(read_keys(named, given, origins).get(EXTENSIONS_KEY))
        table = (*keys, *extra_keys)
        _warn_unknown(given, table, origins)
        _warn_shared_secrets(table, given)
        v = read_keys(table, given, origins)
        _warn_advertised_elsewhere(v["listeners"], v["advertised.listeners"], origins)
        zookeeper = ZooKeeperOptions.from_settings(v)
        location = store_location(v, zookeeper)
        if location is None:
            raise ScramConfigError(
                f"no credential store: set {STORE_PATH_KEY} (embedded SQLite file) "
                f"or {ZOOKEEPER_CONNECT_KEY}"
            )
        config = build(
            cls,
            # The ZooKeeper, keystore and front-door keys fill their own types.
            [key for key in table if key not in _OWN_TYPES],
            v,
            zookeeper=zookeeper,
            ssl_keystore=build(SslKeystore, SSL_KEYSTORE_KEYS, v),
            store=location,
            upstream=upstream_config(v, given.keys(), v["listeners"][0].port, origins),
            properties={
                **{key.name: key.default for key in keys if key.default is not None},
                **given,
            },
            settings=v,
        )
        if any(entry.protocol == "SASL_SSL" for entry in config.listeners):
            config.ssl_keystore.check()
        return config


def store_location(
    settings: Mapping[str, Any], zookeeper: ZooKeeperOptions | None = None
) -> StoreLocation | None:
    """The credential store the parsed keys name (``None``: neither key is set), with
    its options; the token store of the same endpoint lives there too.

    ``zookeeper``: the ZooKeeper keys already typed (else typed from ``settings``).

    Raises:
        ScramConfigError: both keys set, or an unusable ZooKeeper login.
    """
    path, connect = settings.get(STORE_PATH_KEY), settings.get(ZOOKEEPER_CONNECT_KEY)
    if path and connect:
        raise ScramConfigError(f"set either {ZOOKEEPER_CONNECT_KEY} or {STORE_PATH_KEY}, not both")
    if connect:
        options = (zookeeper or ZooKeeperOptions.from_settings(settings)).store_options()
        return StoreLocation.zookeeper(connect, **options)
    if path:
        return StoreLocation.sqlite(path)
    return None
