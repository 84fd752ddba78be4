"""The ``upstream.`` key family: the cluster the front door forwards to.

``upstream.bootstrap.servers`` turns the front door on. It and six more keys
are the front door's own, entries of the endpoint's key table
(:data:`UPSTREAM_KEYS`: ``upstream.identity``, ``upstream.node.port.base``,
``upstream.request.timeout.ms``, ``upstream.allow.cluster.admin``,
``upstream.owner.admins``, ``upstream.start.wait``); every other ``upstream.`` key is a Kafka
client property for the connections to the cluster with the prefix dropped,
as Kafka Connect's ``producer.`` and ``consumer.`` prefixes pass properties on.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Collection
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sasl_scram._errors import ScramConfigError
from sasl_scram.config import ClientConfig
from sasl_scram.config import ClientConfigError
from sasl_scram.config import ConfigKey
from sasl_scram.config import KafkaPrincipal
from sasl_scram.config import boolean
from sasl_scram.config import bootstrap_servers
from sasl_scram.config import build
from sasl_scram.config import format_host_port
from sasl_scram.config import integer
from sasl_scram.config import read_keys
from sasl_scram.config import verbatim
from sasl_scram.frontdoor._errors import UpstreamConfigError

__all__ = [
    "ALLOW_CLUSTER_ADMIN_KEY",
    "BOOTSTRAP_KEY",
    "CLIENT_PROPERTIES_KEY",
    "IDENTITY_KEY",
    "OWNER_ADMINS_KEY",
    "PORT_BASE_KEY",
    "REQUEST_TIMEOUT_KEY",
    "START_WAIT_KEY",
    "UPSTREAM_KEYS",
    "UPSTREAM_PREFIX",
    "UpstreamConfig",
    "UpstreamIdentity",
    "is_client_property",
    "read_upstream",
    "upstream_config",
]

UPSTREAM_PREFIX = "upstream."
BOOTSTRAP_KEY = "upstream.bootstrap.servers"
IDENTITY_KEY = "upstream.identity"
PORT_BASE_KEY = "upstream.node.port.base"
REQUEST_TIMEOUT_KEY = "upstream.request.timeout.ms"
ALLOW_CLUSTER_ADMIN_KEY = "upstream.allow.cluster.admin"
OWNER_ADMINS_KEY = "upstream.owner.admins"
START_WAIT_KEY = "upstream.start.wait"
_MAX_PORT = 65535
_QUOTED = re.compile(r'"[^"]*"')


class UpstreamIdentity(enum.Enum):
    """Who the cluster sees behind the front door (``upstream.identity``)."""

    #: Every connection logs in with the ``upstream.`` login.
    SERVICE = "service"
    #: Each edge user's connections log in with a delegation token the
    #: ``upstream.`` login obtains for that user as its owner (KIP-48's owner
    #: field, CreateDelegationToken v3, Kafka 3.3+).
    OWNER_TOKEN = "owner-token"  # noqa: S105 - a mode name, not a secret


def _identity(value: str, _: Mapping[str, Any]) -> UpstreamIdentity:
    try:
        return UpstreamIdentity(value.strip())
    except ValueError:
        raise ValueError(f"{value.strip()!r} is not service or owner-token") from None


def _bootstrap(value: str, _: Mapping[str, Any]) -> tuple[tuple[str, int], ...]:
    servers = value.strip()
    if not servers:
        raise ValueError("empty: name the cluster's brokers, e.g. broker1:9092,broker2:9092")
    return tuple(bootstrap_servers(servers))


def _owner_admins(value: str, _: Mapping[str, Any]) -> frozenset[KafkaPrincipal]:
    admins = set()
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        principal_type, _colon, name = item.partition(":")
        # An owner token's owner is a user (CreateDelegationToken's owner_principal_type).
        if principal_type != "User" or not name:
            raise ValueError(f"{item!r} is not a User principal such as User:admin")
        admins.add(KafkaPrincipal.user(name))
    return frozenset(admins)


#: The front door's own keys, in the endpoint's one key table, each naming the
#: field of :class:`UpstreamConfig` it fills; every other ``upstream.X`` is
#: client property X (:data:`CLIENT_PROPERTIES_KEY`).
UPSTREAM_KEYS = (
    ConfigKey(
        BOOTSTRAP_KEY,
        None,
        _bootstrap,
        "host:port pairs separated by commas",
        "the cluster behind the front door; turns the front door on (docs/front-door.md)",
        field="bootstrap",
    ),
    ConfigKey(
        IDENTITY_KEY,
        UpstreamIdentity.SERVICE.value,
        _identity,
        "service or owner-token",
        "who the cluster sees: the upstream login (service), or each edge user through "
        "a delegation token the upstream login obtains for it (owner-token)",
        field="identity",
    ),
    ConfigKey(
        PORT_BASE_KEY,
        None,
        integer(1, _MAX_PORT),
        "a TCP port from 1 to 65535",
        "upstream node N is served on this + N (default: the first listener's port + 1; "
        "required when that port is 0)",
        field="node_port_base",
    ),
    ConfigKey(
        REQUEST_TIMEOUT_KEY,
        "30000",
        integer(1),
        "an integer >= 1",
        "time allowed to open and log in each connection to the cluster (at start, for "
        "each forwarded connection, to re-authenticate there) and for the front door's "
        "own requests to it",
        field="request_timeout_ms",
    ),
    ConfigKey(
        ALLOW_CLUSTER_ADMIN_KEY,
        "false",
        boolean,
        "true or false",
        "upstream.identity=service: start even when the upstream login is a cluster "
        "administrator (it holds Alter, AlterConfigs or ClusterAction on the cluster), which "
        "makes every edge user one; said at WARNING at every start (docs/front-door.md)",
        field="allow_cluster_admin",
    ),
    ConfigKey(
        OWNER_ADMINS_KEY,
        "",
        _owner_admins,
        "User principals such as User:admin, separated by ','",
        "upstream.identity=owner-token: the owners whose logins are forwarded although they "
        "are cluster administrators; any other such owner's login is refused "
        "(docs/front-door.md)",
        field="owner_admins",
    ),
    ConfigKey(
        START_WAIT_KEY,
        "true",
        boolean,
        "true or false",
        "a cluster that cannot be reached at start: listen, and answer clients once it is "
        "reached, as a broker that is not ready (true), or exit with status 1 (false)",
        field="start_wait",
    ),
)
#: Keys under the prefix that are not client properties.
_OWN_KEYS = frozenset(key.name for key in UPSTREAM_KEYS)
#: Every other key under the prefix, read as a family of client properties.
CLIENT_PROPERTIES_KEY = ConfigKey(
    UPSTREAM_PREFIX,
    None,
    verbatim,
    "Kafka client properties for the connections to the cluster",
    "upstream.X is client property X for the connections to the cluster, "
    "e.g. upstream.security.protocol, upstream.sasl.jaas.config (docs/front-door.md)",
    secret=True,
    field="upstream_properties",
    family=True,
)


@dataclass(frozen=True)
class UpstreamConfig:
    """The typed ``upstream.`` family.

    Attributes:
        bootstrap: ``upstream.bootstrap.servers`` as ``(host, port)`` pairs.
        identity: ``upstream.identity``.
        node_port_base: ``upstream.node.port.base``; upstream node N is served
            on this + N.
        client: the other keys, prefix dropped, as a validated client
            configuration (its repr hides the login's secrets).
        request_timeout_ms: ``upstream.request.timeout.ms``.
        allow_cluster_admin: ``upstream.allow.cluster.admin``.
        owner_admins: ``upstream.owner.admins``.
        start_wait: ``upstream.start.wait``.
    """

    bootstrap: tuple[tuple[str, int], ...]
    identity: UpstreamIdentity
    node_port_base: int
    client: ClientConfig
    request_timeout_ms: int
    allow_cluster_admin: bool
    owner_admins: frozenset[KafkaPrincipal]
    start_wait: bool = True


def upstream_config(
    settings: Mapping[str, Any],
    given: Collection[str],
    listener_port: int,
    origins: Mapping[str, str] | None = None,
) -> UpstreamConfig | None:
    """The front door's upstream, or ``None`` when no ``upstream.`` key is set.

    Args:
        settings: the endpoint's parsed keys (``read_keys``): the front door's own
            keys (:data:`UPSTREAM_KEYS`) and the ``upstream.`` family, prefix
            dropped, of the client properties.
        given: the names of the keys set (in a file or an override), so that a
            default is not taken for a key the user wrote.
        listener_port: the edge listener's port: the default port base is
            this + 1.
        origins: where each key was set (``server.properties:12``), for errors.

    Raises:
        UpstreamConfigError: one line naming the file, line and ``upstream.`` key at fault.
    """
    origins = origins or {}
    family: Mapping[str, str] = settings.get(UPSTREAM_PREFIX) or {}
    bootstrap = settings.get(BOOTSTRAP_KEY)
    if bootstrap is None:
        others = sorted(name for name in given if name.startswith(UPSTREAM_PREFIX))
        if not others:
            return None
        raise UpstreamConfigError(
            f"{_where(others[0], origins)}{BOOTSTRAP_KEY}: required to use "
            f"{', '.join(others)} (it turns the front door on)"
        )
    base = settings.get(PORT_BASE_KEY)
    if base is None:
        # The key at fault is absent: name the line that asked for a front door.
        where = _where(BOOTSTRAP_KEY, origins)
        if listener_port == 0:
            raise UpstreamConfigError(
                f"{where}{PORT_BASE_KEY}: required when the listener's port is 0 (chosen at "
                "start), e.g. 9100: node N is then served on 9100 + N"
            )
        base = listener_port + 1
        if base > _MAX_PORT:
            raise UpstreamConfigError(
                f"{where}{PORT_BASE_KEY}: the default, the listener's port + 1, is {base}: not a "
                "TCP port; set a base whose ports (base + each node id) are free"
            )
    try:
        # The client properties name the cluster too, for the connections our
        # own client side opens (the owner tokens' RPCs).
        servers = ",".join(format_host_port(host, port) for host, port in bootstrap)
        client = ClientConfig.from_properties({**family, "bootstrap.servers": servers}, strict=True)
    except ClientConfigError as exc:
        # ClientConfig names the property; the user wrote it with the prefix.
        message = UPSTREAM_PREFIX + _one_line(str(exc))
        raise UpstreamConfigError(f"{_where(message.split(':')[0], origins)}{message}") from None
    # Each key fills the field it names, its default the table's (the port
    # base's default depends on the listener: filled above).
    filled = [key for key in UPSTREAM_KEYS if key.name != PORT_BASE_KEY]
    return build(UpstreamConfig, filled, settings, node_port_base=base, client=client)


def read_upstream(properties: Mapping[str, str], listener_port: int) -> UpstreamConfig | None:
    """The front door's upstream from ``server.properties`` values (``upstream.``
    keys with their prefix), read by the front door's part of the key table.

    Raises:
        UpstreamConfigError: one line naming the ``upstream.`` key at fault.
    """
    origins: Mapping[str, str] = getattr(properties, "origins", {})
    try:
        settings = read_keys((*UPSTREAM_KEYS, CLIENT_PROPERTIES_KEY), properties, origins)
    except ScramConfigError as exc:
        raise UpstreamConfigError(str(exc)) from None
    return upstream_config(settings, properties.keys(), listener_port, origins)


def _where(key: str, origins: Mapping[str, str]) -> str:
    origin = origins.get(key)
    return f"{origin}: " if origin else ""


def is_client_property(name: str) -> bool:
    """Whether ``upstream.X`` is client property X (not one of the front door's keys)."""
    return name.startswith(UPSTREAM_PREFIX) and name not in _OWN_KEYS


def _one_line(message: str) -> str:
    """The first line of a client-configuration error, its quoted values masked.

    A JAAS diagnostic quotes the token it stopped at and draws a caret under
    the line: in a malformed ``sasl.jaas.config`` that token may be the
    password, and ``serve`` reports configuration errors on one line.
    """
    return _QUOTED.sub('"********"', message.splitlines()[0] if message else message)
