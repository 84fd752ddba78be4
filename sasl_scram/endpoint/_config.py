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
import re
import unicodedata
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

import jaas
from sasl_scram._errors import ScramConfigError
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.config import ConfigKey
from sasl_scram.config import KafkaPrincipal
from sasl_scram.config import Parser
from sasl_scram.config import boolean
from sasl_scram.config import choice
from sasl_scram.config import integer
from sasl_scram.config import read_keys
from sasl_scram.config import suggest_key
from sasl_scram.config import text
from sasl_scram.config import zookeeper_connect
from sasl_scram.endpoint._connection import LEGACY_NONCE_KEY
from sasl_scram.endpoint._extension import extension_factories
from sasl_scram.endpoint._extension import factory_keys
from sasl_scram.endpoint._metrics import METRICS_LISTENER
from sasl_scram.store import DEFAULT_MAX_STALENESS
from sasl_scram.store import MAX_STALENESS_KEY
from sasl_scram.store import parse_max_staleness
from sasl_scram.store.zookeeper import CONTEXT_KEY
from sasl_scram.store.zookeeper import JAAS_FILE_KEY
from sasl_scram.store.zookeeper import SET_ACL_KEY
from sasl_scram.store.zookeeper import TLS_KEYS
from sasl_scram.store.zookeeper import ZooKeeperSecurity

__all__ = [
    "BOOTSTRAP_FILE_KEY",
    "BOOTSTRAP_USER_KEY",
    "ENDPOINT_KEYS",
    "EVENT_LOOP_KEY",
    "WORKERS_KEY",
    "EndpointConfig",
    "Listener",
    "extension_keys",
    "parse_listeners",
]

log = logging.getLogger("sasl_scram.endpoint")

SUPPORTED_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")
# Keys we read ourselves (no Kafka equivalent) are prefixed "scram." so they
# can never be confused with a Kafka setting.
STORE_PATH_KEY = "scram.credential.store.path"
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
# More processes than this is a typo, not a machine.
MAX_WORKERS = 1024

_LISTENER_RE = re.compile(
    r"(?P<name>[A-Za-z0-9_]+)://(?P<host>\[[^\]]*\]|[^:\s]*):(?P<port>[0-9]+)"
)


@dataclass(frozen=True)
class Listener:
    """One ``NAME://host:port`` entry."""

    name: str
    host: str
    port: int
    protocol: str

    def __str__(self) -> str:
        return f"{self.name}://{self.host}:{self.port}"


def _parse_listeners(value: str, protocol_map: Mapping[str, str]) -> list[Listener]:
    listeners: list[Listener] = []
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        m = _LISTENER_RE.fullmatch(item)
        if m is None:
            raise ValueError(f"{item!r} is not of the form NAME://host:port")
        port = int(m["port"])
        if not 0 <= port <= 65535:
            raise ValueError(f"port {port} is out of range")
        name = m["name"].upper()
        protocol = protocol_map.get(name, name)
        if protocol not in SUPPORTED_PROTOCOLS:
            raise ValueError(
                f"listener {name} uses security protocol {protocol}; this endpoint "
                f"authenticates with SCRAM, so only {', '.join(SUPPORTED_PROTOCOLS)} are supported"
            )
        listeners.append(Listener(name, m["host"].strip("[]"), port, protocol))
    if not listeners:
        raise ValueError("no listener given")
    names = [entry.name for entry in listeners]
    if len(set(names)) != len(names):
        raise ValueError(f"each listener name must be unique, got {names}")
    return listeners


def parse_listeners(key: str, value: str, protocol_map: Mapping[str, str]) -> list[Listener]:
    """Parse ``NAME://host:port,...``; only SCRAM's security protocols are accepted.

    Raises:
        ScramConfigError: naming ``key``.
    """
    try:
        return _parse_listeners(value, protocol_map)
    except ValueError as exc:
        raise ScramConfigError(f"{key}: {exc}") from None


def _protocol_map(value: str, _: Mapping[str, Any]) -> dict[str, str]:
    protocol_map: dict[str, str] = {}
    for item in value.split(","):
        if item.strip():
            name, sep, proto = item.partition(":")
            if not sep:
                raise ValueError(f"{item!r} is not NAME:PROTOCOL")
            protocol_map[name.strip().upper()] = proto.strip().upper()
    return protocol_map


def _max_staleness(value: str, _: Mapping[str, Any]) -> float:
    return parse_max_staleness(value)


def _listeners(value: str, parsed: Mapping[str, Any]) -> tuple[Listener, ...]:
    return tuple(_parse_listeners(value, parsed["listener.security.protocol.map"]))


def _advertised(value: str, parsed: Mapping[str, Any]) -> dict[str, Listener]:
    listeners: tuple[Listener, ...] = parsed["listeners"]
    advertised = {entry.name: entry for entry in listeners}
    if value.strip():
        for entry in _parse_listeners(value, parsed["listener.security.protocol.map"]):
            if entry.name not in advertised:
                raise ValueError(f"{entry.name} is not one of the listeners")
            advertised[entry.name] = entry
    for name, entry in advertised.items():
        if entry.host in ("", "0.0.0.0", "::"):  # noqa: S104 - detecting wildcard binds
            # Clients reconnect to the advertised address; a wildcard is unusable.
            raise ValueError(
                f"listener {name} binds {entry.host or 'all interfaces'}; "
                "set advertised.listeners to an address clients can reach"
            )
    return advertised


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


def _event_loop(value: str, parsed: Mapping[str, Any]) -> str:
    chosen: str = choice("auto", "uvloop", "asyncio")(value, parsed)
    # Checked here, not when the loop starts, so the error names the file and line.
    if chosen == "uvloop" and importlib.util.find_spec("uvloop") is None:
        raise ValueError("uvloop is not installed: pip install 'kafka-scram[server]'")
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


def _optional_integer(minimum: int) -> Parser:
    parse = integer(minimum)
    return lambda value, parsed: parse(value, parsed) if value.strip() else None


def _zookeeper_connect(value: str, _: Mapping[str, Any]) -> str:
    # Empty: no ZooKeeper; otherwise kazoo would fail on a bad entry only later.
    return zookeeper_connect(value) if value.strip() else ""


_INT0, _INT1 = "an integer >= 0", "an integer >= 1"
# What each ZooKeeper login and TLS key does (docs/stores.md has the details).
_ZK_DOCS = {
    "zookeeper.session.timeout.ms": "ZooKeeper session timeout (empty: 18 s, as in Kafka)",
    "zookeeper.connection.timeout.ms": (
        "bound on connecting and on each ZooKeeper request (empty: the session timeout)"
    ),
    JAAS_FILE_KEY: "JAAS file whose Client section (DigestLoginModule) logs in to ZooKeeper",
    CONTEXT_KEY: "the JAAS section of that file to log in with (default Client)",
    SET_ACL_KEY: "true: the znodes we create get Kafka's secure ACLs (needs SASL or TLS)",
    "zookeeper.ssl.client.enable": "true: connect to ZooKeeper over TLS",
    "zookeeper.clientCnxnSocket": "Kafka's Netty socket class for TLS; accepted, not needed here",
    "zookeeper.ssl.endpoint.identification.algorithm": (
        "HTTPS (the default) checks ZooKeeper's host name, empty does not"
    ),
    "zookeeper.ssl.keystore.location": "client certificate and key for TLS to ZooKeeper (PEM)",
    "zookeeper.ssl.keystore.password": "password of the keystore's key",
    "zookeeper.ssl.keystore.type": "the keystore's type: PEM only (JKS, PKCS12 refused)",
    "zookeeper.ssl.truststore.location": "CA certificates that verify ZooKeeper (PEM)",
    "zookeeper.ssl.truststore.password": "password of the truststore",
    "zookeeper.ssl.truststore.type": "the truststore's type: PEM only (JKS, PKCS12 refused)",
}
_ZK_BOOLEANS = frozenset({SET_ACL_KEY, "zookeeper.ssl.client.enable"})
_SSL = "for SASL_SSL listeners (PEM only)"
_ANY = "any text"

#: Every key ``kafka-scram serve`` reads. Adding a key is adding one entry.
ENDPOINT_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "listener.security.protocol.map",
        "",
        _protocol_map,
        "NAME:PROTOCOL,...",
        "security protocol of each listener name",
    ),
    ConfigKey(
        "listeners",
        "SASL_PLAINTEXT://127.0.0.1:9092",
        _listeners,
        "NAME://host:port,... with protocol SASL_PLAINTEXT or SASL_SSL",
        "addresses to listen on",
    ),
    ConfigKey(
        "advertised.listeners",
        "",
        _advertised,
        "NAME://host:port,... naming listeners",
        "addresses clients are told to reconnect to",
    ),
    ConfigKey("node.id", "1", integer(0), _INT0, "the broker id in Metadata answers"),
    ConfigKey(CLUSTER_ID_KEY, "kafka-scram-cluster-00", text, _ANY, "the cluster id"),
    ConfigKey(
        "sasl.enabled.mechanisms",
        "SCRAM-SHA-256,SCRAM-SHA-512",
        _mechanisms,
        f"a comma-separated list of {', '.join(ScramMechanism.names())}",
        "mechanisms offered in SaslHandshake",
    ),
    ConfigKey(
        "super.users",
        "",
        _super_users,
        "principals like User:admin, separated by ';'",
        "principals allowed every operation",
    ),
    ConfigKey(
        "connections.max.reauth.ms",
        "0",
        integer(0),
        _INT0,
        "KIP-368 session lifetime (0: no re-authentication)",
    ),
    ConfigKey(
        "sasl.server.max.receive.size",
        "524288",
        integer(1),
        _INT1,
        "largest SASL token before authentication",
    ),
    ConfigKey("socket.request.max.bytes", "104857600", integer(1), _INT1, "largest request"),
    ConfigKey(
        "connections.max.idle.ms",
        "600000",
        integer(1),
        _INT1,
        "idle connections are closed after this",
    ),
    # KIP-306: close a connection this long after a failed authentication.
    ConfigKey(
        "connection.failed.authentication.delay.ms",
        "100",
        integer(0),
        _INT0,
        "delay before closing after a failed login",
    ),
    ConfigKey(AUTH_TIMEOUT_KEY, "30000", integer(1), _INT1, "time allowed for a login"),
    ConfigKey(
        BUSY_POLL_KEY,
        "0",
        integer(0, MAX_BUSY_POLL_US),
        f"an integer from 0 to {MAX_BUSY_POLL_US}",
        "microseconds of spinning after each network event (0: off)",
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
    ),
    METRICS_LISTENER,
    ConfigKey(
        USER_MAX_REQUEST_KEY,
        "1048576",
        integer(1),
        _INT1,
        "largest request of an authenticated user who is not a super user",
    ),
    ConfigKey(
        USER_MAX_ARRAY_KEY,
        "10000",
        integer(0),
        _INT0,
        "longest array in such a user's request",
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
    ),
    ConfigKey(STORE_PATH_KEY, "", text, "a file path", "the embedded SQLite credential store"),
    ConfigKey(
        MAX_STALENESS_KEY,
        str(int(DEFAULT_MAX_STALENESS * 1000)),
        _max_staleness,
        "milliseconds (0 or more), or -1 to never fail closed",
        "how long a store serves its cached copy without ZooKeeper",
    ),
    ConfigKey(
        "zookeeper.connect",
        "",
        _zookeeper_connect,
        "host:port[,host:port][/chroot]",
        "Kafka's ZooKeeper, as the credential store",
    ),
    *(
        ConfigKey(key, "", _optional_integer(1), _INT1, _ZK_DOCS[key])
        for key in ("zookeeper.session.timeout.ms", "zookeeper.connection.timeout.ms")
    ),
    # Kafka's BOOLEAN keys, checked at start whichever store is used.
    *(
        ConfigKey(key, "false", boolean, "true or false", _ZK_DOCS[key])
        for key in sorted(_ZK_BOOLEANS)
    ),
    *(
        ConfigKey(key, None, text, _ANY, _ZK_DOCS[key], secret="password" in key)
        for key in sorted({CONTEXT_KEY, JAAS_FILE_KEY, *TLS_KEYS} - _ZK_BOOLEANS)
    ),
    ConfigKey(
        DECOY_SECRET_KEY, None, text, _ANY, "key for decoy salts of unknown users", secret=True
    ),
    ConfigKey(
        BOOTSTRAP_USER_KEY,
        None,
        _bootstrap_user,
        "a user name without control characters",
        "super user created on first start",
    ),
    ConfigKey(
        BOOTSTRAP_FILE_KEY,
        "bootstrap-admin.properties",
        _bootstrap_file,
        "a file path (not a directory)",
        "where its client properties go",
    ),
    ConfigKey(
        EVENT_LOOP_KEY,
        "auto",
        _event_loop,
        "auto, uvloop (when installed) or asyncio",
        "the event loop",
    ),
    # One process per core: the listeners are shared with SO_REUSEPORT, each
    # worker has its own event loop and store session (docs/architecture.md).
    ConfigKey(
        WORKERS_KEY,
        "1",
        _workers,
        f"auto (one per core this process may use) or an integer from 1 to {MAX_WORKERS}",
        "worker processes serving the listeners",
    ),
    ConfigKey("ssl.keystore.type", None, text, "PEM", f"the keystore's type, {_SSL}"),
    ConfigKey(
        "ssl.keystore.location", None, text, "a PEM file path", f"certificate and key, {_SSL}"
    ),
    ConfigKey(
        "ssl.keystore.certificate.chain", None, text, "PEM text", f"the certificates, {_SSL}"
    ),
    ConfigKey("ssl.keystore.key", None, text, "PEM text", f"the key, {_SSL}", secret=True),
    ConfigKey("ssl.key.password", None, text, _ANY, f"password of the key, {_SSL}", secret=True),
)


def extension_keys() -> tuple[ConfigKey, ...]:
    """Keys that installed endpoint extensions read (delegation tokens' keys)."""
    return tuple(key for factory in extension_factories() for key in factory_keys(factory))


def _warn_unknown(
    given: Mapping[str, str], known: Sequence[str], origins: Mapping[str, str]
) -> None:
    for key in sorted(set(given) - set(known)):
        close = suggest_key(key, known)
        hint = f"; did you mean {close!r}?" if close else ""
        where = f"{origins[key]}: " if key in origins else ""
        log.warning("%sUnknown configuration key %r is ignored%s", where, key, hint)


def _warn_shared_secrets(
    table: Sequence[ConfigKey], given: Mapping[str, str], origins: Mapping[str, str]
) -> None:
    """A WARNING for each file holding a secret key that group or others may read or
    write, as the SQLite store and the bootstrap files get: the value lets anyone
    forge tokens or decrypt the keystore."""
    secrets_by_file: dict[str, list[str]] = {}
    for key in table:
        origin = origins.get(key.name, "--override") if key.name in given else "--override"
        if key.secret and origin != "--override":
            secrets_by_file.setdefault(origin.rsplit(":", 1)[0], []).append(key.name)
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
    listeners: Sequence[Listener], advertised: Mapping[str, Listener], origins: Mapping[str, str]
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


@dataclass(frozen=True)
class EndpointConfig:
    """The validated configuration of one endpoint process."""

    listeners: tuple[Listener, ...]
    advertised: dict[str, Listener]
    node_id: int
    cluster_id: str
    mechanisms: tuple[ScramMechanism, ...]
    super_users: frozenset[KafkaPrincipal]
    max_reauth_ms: int
    sasl_max_receive: int
    max_request: int
    idle_timeout_ms: int
    auth_timeout_ms: int
    failed_auth_delay_ms: int
    store_location: str
    #: Frame and array caps for authenticated users that are not super users.
    user_max_request: int
    user_max_array: int
    #: Adaptive busy polling window in microseconds; 0 (default) lets the loop sleep.
    busy_poll_us: int
    # Secrets (the decoy key, ssl.key.password, an inline PEM key): never in a repr.
    decoy_secret: bytes | None = field(repr=False)
    ssl_keystore: dict[str, str] = field(repr=False)
    properties: dict[str, str] = field(repr=False)
    #: Options for a ZooKeeper store (login, ACLs, timeouts); the login's repr
    #: hides its password.
    zookeeper_options: dict[str, Any] = field(default_factory=dict)
    #: ``socket.listen.backlog.size``: pending connections each listener queues.
    listen_backlog: int = 4096
    #: ``scram.event.loop``: ``auto``, ``uvloop`` or ``asyncio``.
    event_loop: str = "auto"
    #: ``scram.legacy.librdkafka.nonce.enable``: accept librdkafka < 2.6.1's
    #: client-final nonce too (off: Kafka 4.x's equality).
    legacy_librdkafka_nonce: bool = False
    #: ``scram.workers``: processes serving the listeners (``auto`` resolved).
    workers: int = 1
    #: ``scram.bootstrap.user`` (``None``: no bootstrap user) and where its
    #: client properties go (``scram.bootstrap.client.properties``).
    bootstrap_user: str | None = None
    bootstrap_file: Path = Path("bootstrap-admin.properties")
    #: Every key of the table (the extensions' keys included) as its parser
    #: returned it, for the extensions (``load_extensions``): parsed once.
    settings: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def store_options(self) -> dict[str, Any]:
        """Keyword options for the credential store this configuration names."""
        return dict(self.zookeeper_options)

    @classmethod
    def from_properties(
        cls, given: Mapping[str, str], extra_keys: Sequence[ConfigKey] | None = None
    ) -> EndpointConfig:
        """Validate ``server.properties`` values (after overrides).

        Args:
            given: The values; a :class:`~sasl_scram.config.Properties` also
                tells where each was set, and errors name that file and line.
            extra_keys: Keys other packages read (default: those of the
                installed endpoint extensions), so they are not "unknown".

        Raises:
            ScramConfigError: naming the file, line and key, and what is accepted.
        """
        origins: Mapping[str, str] = getattr(given, "origins", {})
        table = (*ENDPOINT_KEYS, *(extension_keys() if extra_keys is None else extra_keys))
        _warn_unknown(given, [key.name for key in table], origins)
        _warn_shared_secrets(table, given, origins)
        v = read_keys(table, given, origins)
        _warn_advertised_elsewhere(v["listeners"], v["advertised.listeners"], origins)
        props = {key.name: key.default for key in ENDPOINT_KEYS if key.default is not None}
        props.update(given)
        location, zk_options = _store(v, props)
        ssl = {k: val for k, val in props.items() if k.startswith("ssl.")}
        if any(entry.protocol == "SASL_SSL" for entry in v["listeners"]):
            _check_ssl(v)
        decoy = v[DECOY_SECRET_KEY]
        return cls(
            listeners=v["listeners"],
            advertised=v["advertised.listeners"],
            node_id=v["node.id"],
            cluster_id=v[CLUSTER_ID_KEY],
            mechanisms=v["sasl.enabled.mechanisms"],
            super_users=v["super.users"],
            max_reauth_ms=v["connections.max.reauth.ms"],
            sasl_max_receive=v["sasl.server.max.receive.size"],
            max_request=v["socket.request.max.bytes"],
            idle_timeout_ms=v["connections.max.idle.ms"],
            auth_timeout_ms=v[AUTH_TIMEOUT_KEY],
            failed_auth_delay_ms=v["connection.failed.authentication.delay.ms"],
            store_location=location,
            user_max_request=v[USER_MAX_REQUEST_KEY],
            user_max_array=v[USER_MAX_ARRAY_KEY],
            busy_poll_us=v[BUSY_POLL_KEY],
            decoy_secret=decoy.encode("utf-8") if decoy else None,
            ssl_keystore=ssl,
            properties=props,
            zookeeper_options=zk_options,
            listen_backlog=v[BACKLOG_KEY],
            event_loop=v[EVENT_LOOP_KEY],
            legacy_librdkafka_nonce=v[LEGACY_NONCE_KEY],
            workers=v[WORKERS_KEY],
            bootstrap_user=v[BOOTSTRAP_USER_KEY],
            bootstrap_file=v[BOOTSTRAP_FILE_KEY],
            settings=v,
        )


def _store(v: Mapping[str, Any], props: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    store, zk = v[STORE_PATH_KEY], v["zookeeper.connect"]
    if store and zk:
        raise ScramConfigError(f"set either zookeeper.connect or {STORE_PATH_KEY}, not both")
    if zk:
        return f"zookeeper:{zk}", zookeeper_store_options(props)
    if store:
        return f"sqlite:{store}", {}
    raise ScramConfigError(
        f"no credential store: set {STORE_PATH_KEY} (embedded SQLite file) or zookeeper.connect"
    )


def _check_ssl(v: Mapping[str, Any]) -> None:
    if (v["ssl.keystore.type"] or "PEM").upper() != "PEM":
        raise ScramConfigError("ssl.keystore.type: only PEM is supported")
    if not (v["ssl.keystore.location"] or v["ssl.keystore.certificate.chain"]):
        raise ScramConfigError(
            "SASL_SSL listener needs ssl.keystore.location (a PEM file with the "
            "certificate chain and private key) or ssl.keystore.certificate.chain "
            "and ssl.keystore.key"
        )


def zookeeper_store_options(props: Mapping[str, str]) -> dict[str, Any]:
    """Keyword options for a ZooKeeper credential or token store, from server properties.

    ``scram.store.max.staleness.ms`` (default 60 s; ``-1`` never fails
    closed, as a broker), one ZooKeeper session shared by the stores of the
    process, ``zookeeper.session.timeout.ms`` (Kafka's default 18 s), the connection
    timeout (defaults to the session timeout, as in Kafka) bounding each
    request, and the SASL login and ACLs of :meth:`ZooKeeperSecurity.from_properties`.

    Raises:
        ScramConfigError: a bad timeout, or an unusable ZooKeeper login.
    """
    timeouts = read_keys(
        [
            k
            for k in ENDPOINT_KEYS
            if k.name == MAX_STALENESS_KEY
            or (k.name.startswith("zookeeper.") and k.name.endswith(".ms"))
        ],
        props,
        getattr(props, "origins", {}),
    )
    session_ms = timeouts["zookeeper.session.timeout.ms"] or 18_000
    connection_ms = timeouts["zookeeper.connection.timeout.ms"] or session_ms
    try:
        security = ZooKeeperSecurity.from_properties(props)
    except (ValueError, OSError, jaas.JaasError) as exc:
        raise ScramConfigError(f"ZooKeeper login: {exc}") from None
    max_staleness: float = timeouts[MAX_STALENESS_KEY]
    return {
        "security": security,
        "session_timeout": session_ms / 1000,
        "request_timeout": connection_ms / 1000,
        "max_staleness": max_staleness,
        # The credential and token stores of one endpoint share one session.
        "share_session": True,
    }
