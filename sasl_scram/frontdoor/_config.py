"""The ``upstream.`` key family: the cluster the front door forwards to.

``upstream.bootstrap.servers`` turns the front door on. Two more keys are the
front door's own (``upstream.identity``, ``upstream.node.port.base``); every
other ``upstream.`` key is a Kafka client property for the connections to the
cluster with the prefix dropped, as Kafka Connect's ``producer.`` and
``consumer.`` prefixes pass properties on.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass

from sasl_scram.config import ClientConfig
from sasl_scram.config import ClientConfigError
from sasl_scram.config import bootstrap_servers
from sasl_scram.frontdoor._errors import UpstreamConfigError

__all__ = ["UPSTREAM_PREFIX", "UpstreamConfig", "UpstreamIdentity", "upstream_config"]

UPSTREAM_PREFIX = "upstream."
_BOOTSTRAP = "bootstrap.servers"
_IDENTITY = "identity"
_PORT_BASE = "node.port.base"
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
    """

    bootstrap: tuple[tuple[str, int], ...]
    identity: UpstreamIdentity
    node_port_base: int
    client: ClientConfig


def _key(name: str) -> str:
    return UPSTREAM_PREFIX + name


def upstream_config(family: Mapping[str, str], listener_port: int) -> UpstreamConfig | None:
    """The front door's upstream, or ``None`` when the family does not turn it on.

    Args:
        family: the ``upstream.`` keys with the prefix dropped, as the endpoint's
            key table hands a family over (``{"bootstrap.servers": ...}``).
        listener_port: the edge listener's port: the default port base is
            this + 1.

    Raises:
        UpstreamConfigError: one line naming the ``upstream.`` key at fault.
    """
    if not family:
        return None
    servers = family.get(_BOOTSTRAP, "").strip()
    if not servers:
        others = ", ".join(sorted(_key(name) for name in family))
        raise UpstreamConfigError(
            f"{_key(_BOOTSTRAP)}: required to use {others} (it turns the front door on)"
        )
    try:
        bootstrap = tuple(bootstrap_servers(servers))
    except ValueError as exc:
        raise UpstreamConfigError(f"{_key(_BOOTSTRAP)}: {exc}") from None
    identity_text = family.get(_IDENTITY, UpstreamIdentity.SERVICE.value).strip()
    try:
        identity = UpstreamIdentity(identity_text)
    except ValueError:
        choices = " or ".join(i.value for i in UpstreamIdentity)
        raise UpstreamConfigError(
            f"{_key(_IDENTITY)}: {identity_text!r} is not {choices}"
        ) from None
    base = _port_base(family.get(_PORT_BASE), listener_port)
    client_props = {k: v for k, v in family.items() if k not in (_IDENTITY, _PORT_BASE)}
    try:
        client = ClientConfig.from_properties(client_props, strict=True)
    except ClientConfigError as exc:
        # ClientConfig names the property; the user wrote it with the prefix.
        raise UpstreamConfigError(f"{UPSTREAM_PREFIX}{_one_line(str(exc))}") from None
    return UpstreamConfig(bootstrap, identity, base, client)


def _one_line(message: str) -> str:
    """The first line of a client-configuration error, its quoted values masked.

    A JAAS diagnostic quotes the token it stopped at and draws a caret under
    the line: in a malformed ``sasl.jaas.config`` that token may be the
    password, and ``serve`` reports configuration errors on one line.
    """
    return _QUOTED.sub('"********"', message.splitlines()[0] if message else message)


def _port_base(text: str | None, listener_port: int) -> int:
    if text is None:
        if listener_port == 0:
            raise UpstreamConfigError(
                f"{_key(_PORT_BASE)}: required when the listener's port is 0 (chosen at "
                "start), e.g. 9100: node N is then served on 9100 + N"
            )
        base = listener_port + 1
    else:
        try:
            base = int(text.strip())
        except ValueError:
            raise UpstreamConfigError(
                f"{_key(_PORT_BASE)}: expected an integer, got {text.strip()!r}"
            ) from None
    if not 0 < base <= _MAX_PORT:
        raise UpstreamConfigError(f"{_key(_PORT_BASE)}: {base} is not a TCP port (1..65535)")
    return base
