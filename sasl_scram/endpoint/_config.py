"""``kafka-scram serve`` configuration, with Kafka's key names wherever Kafka has one.

Unknown keys get a warning; invalid values raise :class:`ScramConfigError`
naming the key, before anything starts.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import jaas
from sasl_scram._errors import ScramConfigError
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.config import KafkaPrincipal
from sasl_scram.store.zookeeper import (
    CONTEXT_KEY,
    JAAS_FILE_KEY,
    SET_ACL_KEY,
    TLS_KEYS,
    ZooKeeperSecurity,
)

__all__ = ["EndpointConfig", "Listener", "parse_listeners"]

log = logging.getLogger("sasl_scram.endpoint")

SUPPORTED_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")
# Keys we read ourselves (no Kafka equivalent) are prefixed "scram." so they
# can never be confused with a Kafka setting.
STORE_PATH_KEY = "scram.credential.store.path"
AUTH_TIMEOUT_KEY = "scram.authentication.timeout.ms"
DECOY_SECRET_KEY = "scram.decoy.secret"  # noqa: S105 - the name of a key, not a secret
BUSY_POLL_KEY = "scram.busy.poll.us"
# Past a few milliseconds busy polling only burns a core between bursts.
MAX_BUSY_POLL_US = 100_000
CLUSTER_ID_KEY = "cluster.id"

_DEFAULTS: dict[str, str] = {
    "listeners": "SASL_PLAINTEXT://127.0.0.1:9092",
    "node.id": "1",
    "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
    "super.users": "",
    "connections.max.reauth.ms": "0",
    "sasl.server.max.receive.size": "524288",
    "socket.request.max.bytes": "104857600",
    "connections.max.idle.ms": "600000",
    # KIP-306: close a connection this long after a failed authentication.
    "connection.failed.authentication.delay.ms": "100",
    AUTH_TIMEOUT_KEY: "30000",
    BUSY_POLL_KEY: "0",
    # Each listener's accept queue. Kafka's default is 50, drained by a
    # dedicated Acceptor thread (SocketServer); here the event loop that
    # answers requests also accepts, so a burst of 100 connects overflowed 50
    # (1 s SYN retransmits at the bench's concurrency 100): 512 instead.
    "socket.listen.backlog.size": "512",
}

# Keys understood here or by an endpoint extension (delegation tokens).
KNOWN_KEYS = frozenset(
    {
        *_DEFAULTS,
        "advertised.listeners",
        "listener.security.protocol.map",
        "zookeeper.connect",
        "zookeeper.session.timeout.ms",
        "zookeeper.connection.timeout.ms",
        SET_ACL_KEY,
        CONTEXT_KEY,
        JAAS_FILE_KEY,
        *TLS_KEYS,
        STORE_PATH_KEY,
        DECOY_SECRET_KEY,
        CLUSTER_ID_KEY,
        "scram.bootstrap.user",
        "scram.metrics.listener",
        "scram.event.loop",
        "scram.bootstrap.client.properties",
        "ssl.keystore.type",
        "ssl.keystore.location",
        "ssl.keystore.key",
        "ssl.keystore.certificate.chain",
        "ssl.key.password",
        "delegation.token.secret.key",
        "delegation.token.master.key",
        "delegation.token.max.lifetime.ms",
        "delegation.token.expiry.time.ms",
        "delegation.token.expiry.check.interval.ms",
    }
)

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


def parse_listeners(key: str, value: str, protocol_map: Mapping[str, str]) -> list[Listener]:
    listeners: list[Listener] = []
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        m = _LISTENER_RE.fullmatch(item)
        if m is None:
            raise ScramConfigError(f"{key}: {item!r} is not of the form NAME://host:port")
        port = int(m["port"])
        if not 0 <= port <= 65535:
            raise ScramConfigError(f"{key}: port {port} is out of range")
        name = m["name"].upper()
        protocol = protocol_map.get(name, name)
        if protocol not in SUPPORTED_PROTOCOLS:
            raise ScramConfigError(
                f"{key}: listener {name} uses security protocol {protocol}; this endpoint "
                f"authenticates with SCRAM, so only {', '.join(SUPPORTED_PROTOCOLS)} are supported"
            )
        listeners.append(Listener(name, m["host"].strip("[]"), port, protocol))
    if not listeners:
        raise ScramConfigError(f"{key}: no listener given")
    names = [entry.name for entry in listeners]
    if len(set(names)) != len(names):
        raise ScramConfigError(f"{key}: each listener name must be unique, got {names}")
    return listeners


def _int(props: Mapping[str, str], key: str, minimum: int | None = None) -> int:
    text = props[key].strip()
    try:
        value = int(text)
    except ValueError:
        raise ScramConfigError(f"{key}: expected an integer, got {text!r}") from None
    if minimum is not None and value < minimum:
        raise ScramConfigError(f"{key}: must be at least {minimum}, got {value}")
    return value


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
    listen_backlog: int = 512

    def store_options(self) -> dict[str, Any]:
        """Keyword options for the credential store this configuration names."""
        return dict(self.zookeeper_options)

    @classmethod
    def from_properties(cls, given: Mapping[str, str]) -> EndpointConfig:
        """Validate ``server.properties`` values (after overrides)."""
        for key in sorted(set(given) - KNOWN_KEYS):
            log.warning("Unknown configuration key %r is ignored", key)
        props = {**_DEFAULTS, **given}
        protocol_map: dict[str, str] = {}
        for item in props.get("listener.security.protocol.map", "").split(","):
            if item.strip():
                name, sep, proto = item.partition(":")
                if not sep:
                    raise ScramConfigError(
                        f"listener.security.protocol.map: {item!r} is not NAME:PROTOCOL"
                    )
                protocol_map[name.strip().upper()] = proto.strip().upper()
        listeners = parse_listeners("listeners", props["listeners"], protocol_map)
        advertised = {entry.name: entry for entry in listeners}
        if props.get("advertised.listeners", "").strip():
            for entry in parse_listeners(
                "advertised.listeners", props["advertised.listeners"], protocol_map
            ):
                if entry.name not in advertised:
                    raise ScramConfigError(
                        f"advertised.listeners: {entry.name} is not one of the listeners"
                    )
                advertised[entry.name] = entry
        for name, entry in list(advertised.items()):
            if entry.host in ("", "0.0.0.0", "::"):  # noqa: S104 - detecting wildcard binds
                # Clients reconnect to the advertised address; a wildcard is unusable.
                raise ScramConfigError(
                    f"advertised.listeners: listener {name} binds "
                    f"{entry.host or 'all interfaces'}; "
                    "set advertised.listeners to an address clients can reach"
                )
        mechanisms: list[ScramMechanism] = []
        for name in (n.strip() for n in props["sasl.enabled.mechanisms"].split(",")):
            if not name:
                continue
            try:
                mechanisms.append(ScramMechanism.from_name(name))
            except ValueError:
                raise ScramConfigError(
                    f"sasl.enabled.mechanisms: {name!r} is not supported; "
                    f"expected {', '.join(ScramMechanism.names())}"
                ) from None
        if not mechanisms:
            raise ScramConfigError("sasl.enabled.mechanisms: at least one mechanism is required")
        super_users: set[KafkaPrincipal] = set()
        for item in (p.strip() for p in props["super.users"].split(";")):
            if item:
                try:
                    super_users.add(KafkaPrincipal.parse(item))
                except ValueError as exc:
                    raise ScramConfigError(f"super.users: {exc}") from None
        store = props.get(STORE_PATH_KEY, "").strip()
        zk = props.get("zookeeper.connect", "").strip()
        if store and zk:
            raise ScramConfigError(f"set either zookeeper.connect or {STORE_PATH_KEY}, not both")
        zk_options: dict[str, Any] = {}
        if zk:
            location = f"zookeeper:{zk}"
            zk_options = zookeeper_store_options(props)
        elif store:
            location = f"sqlite:{store}"
        else:
            raise ScramConfigError(
                f"no credential store: set {STORE_PATH_KEY} (embedded SQLite file) "
                "or zookeeper.connect"
            )
        ssl = {k: v for k, v in props.items() if k.startswith("ssl.")}
        if any(entry.protocol == "SASL_SSL" for entry in listeners):
            if props.get("ssl.keystore.type", "PEM").upper() != "PEM":
                raise ScramConfigError("ssl.keystore.type: only PEM is supported")
            if not (ssl.get("ssl.keystore.location") or ssl.get("ssl.keystore.certificate.chain")):
                raise ScramConfigError(
                    "SASL_SSL listener needs ssl.keystore.location (a PEM file with the "
                    "certificate chain and private key) or ssl.keystore.certificate.chain "
                    "and ssl.keystore.key"
                )
        decoy = props.get(DECOY_SECRET_KEY)
        return cls(
            listeners=tuple(listeners),
            advertised=advertised,
            node_id=_int(props, "node.id", 0),
            cluster_id=props.get(CLUSTER_ID_KEY, "kafka-scram-cluster-00").strip(),
            mechanisms=tuple(mechanisms),
            super_users=frozenset(super_users),
            max_reauth_ms=_int(props, "connections.max.reauth.ms", 0),
            sasl_max_receive=_int(props, "sasl.server.max.receive.size", 1),
            max_request=_int(props, "socket.request.max.bytes", 1),
            idle_timeout_ms=_int(props, "connections.max.idle.ms", 1),
            auth_timeout_ms=_int(props, AUTH_TIMEOUT_KEY, 1),
            failed_auth_delay_ms=_int(props, "connection.failed.authentication.delay.ms", 0),
            store_location=location,
            busy_poll_us=_busy_poll_us(props),
            decoy_secret=decoy.encode("utf-8") if decoy else None,
            ssl_keystore=ssl,
            properties=dict(props),
            zookeeper_options=zk_options,
            listen_backlog=_int(props, "socket.listen.backlog.size", 1),
        )


def _busy_poll_us(props: Mapping[str, str]) -> int:
    value = _int(props, BUSY_POLL_KEY, 0)
    if value > MAX_BUSY_POLL_US:
        raise ScramConfigError(
            f"{BUSY_POLL_KEY}: at most {MAX_BUSY_POLL_US} (microseconds of spinning after "
            f"each network event), got {value}"
        )
    return value


def zookeeper_store_options(props: Mapping[str, str]) -> dict[str, Any]:
    """Keyword options for a ZooKeeper credential or token store, from server properties.

    ``zookeeper.session.timeout.ms`` (Kafka's default 18 s), the connection
    timeout (defaults to the session timeout, as in Kafka) bounding each
    request, and the SASL login and ACLs of :meth:`ZooKeeperSecurity.from_properties`.

    Raises:
        ScramConfigError: a bad timeout, or an unusable ZooKeeper login.
    """
    session_ms = (
        _int(props, "zookeeper.session.timeout.ms", 1)
        if props.get("zookeeper.session.timeout.ms", "").strip()
        else 18_000
    )
    connection_ms = (
        _int(props, "zookeeper.connection.timeout.ms", 1)
        if props.get("zookeeper.connection.timeout.ms", "").strip()
        else session_ms
    )
    try:
        security = ZooKeeperSecurity.from_properties(props)
    except (ValueError, OSError, jaas.JaasError) as exc:
        raise ScramConfigError(f"ZooKeeper login: {exc}") from None
    return {
        "security": security,
        "session_timeout": session_ms / 1000,
        "request_timeout": connection_ms / 1000,
    }
