"""The connection caps' keys: per client address as Kafka's broker has them, and per user.

Kafka's ``ConnectionQuotas`` (``SocketServer``) counts each client address's
connections and refuses a new one past ``max.connections.per.ip`` (or the
address's entry in ``max.connections.per.ip.overrides``): the acceptor closes
it at once (``TooManyConnectionsException``). ``serve`` does the same, and
adds ``scram.max.connections.per.user``, checked once a login has said who
the connection is: behind a front door every connection reaches the cluster
from ``serve``'s one address, so the cluster's own per-address cap is shared
by every edge user, and one user holding it would lock the others out.

The parsers are the keys' only ones (:data:`CAP_KEYS`, entries of
``ENDPOINT_KEYS``); :mod:`sasl_scram.endpoint.runtime`'s ``ConnectionCaps``
counts.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Mapping
from typing import Any

from sasl_scram.config import ConfigKey
from sasl_scram.config import integer

__all__ = [
    "CAP_KEYS",
    "JAVA_INT_MAX",
    "PER_IP_KEY",
    "PER_IP_OVERRIDES_KEY",
    "PER_USER_KEY",
    "canonical_address",
]

PER_IP_KEY = "max.connections.per.ip"
PER_IP_OVERRIDES_KEY = "max.connections.per.ip.overrides"
PER_USER_KEY = "scram.max.connections.per.user"
#: Kafka's default for its connection caps (``Int.MaxValue``): no limit.
JAVA_INT_MAX = 2**31 - 1

# Kafka's Utils.validHostPattern: what a host of the overrides may hold.
_VALID_HOST = re.compile(r"[0-9a-zA-Z\-%._:]*")
# Kafka's Csv.parseCsvMap splits the entries at commas, spaces around them dropped.
_ENTRIES = re.compile(r"\s*,\s*")
# Java's Integer.parseInt: an optional sign, then ASCII digits.
_JAVA_INT = re.compile(r"[+-]?[0-9]+")


def canonical_address(host: str) -> str:
    """An IP address as the kernel writes a peer's (``::0001`` is ``::1``); an IPv6
    zone is dropped (``Inet6Address.equals`` ignores it; the acceptor drops a
    peer's too), and an IPv4-mapped address is the IPv4 one, as Java's
    ``InetAddress.getByName`` makes it: the address an IPv4 client has. Raises
    ``ValueError`` for a host that is not an IP address."""
    address = ipaddress.ip_address(host.partition("%")[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.compressed
    return address.compressed


def _addresses(host: str) -> list[str]:
    """The addresses ``host`` stands for: itself when it is one, else all that it
    resolves to (Kafka takes ``InetAddress.getByName``'s first; a name with an IPv4
    and an IPv6 address is both here)."""
    try:
        return [canonical_address(host)]
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise ValueError(f"cannot resolve {host!r} ({exc})") from None
    return sorted({canonical_address(str(entry[4][0])) for entry in found})


def _overrides(value: str, _: Mapping[str, Any]) -> dict[str, int]:
    """``host:count,...`` as Kafka reads it, each host resolved once (at start, as
    ``ConnectionQuotas`` does): the cap of each address."""
    caps: dict[str, int] = {}
    stripped = value.strip()
    if not stripped:
        return caps
    entries = _ENTRIES.split(stripped)
    if entries[-1] == "":  # Java's String.split drops a trailing empty entry
        entries.pop()
    for entry in entries:
        host, sep, count = entry.rpartition(":")  # the last ':', as IPv6 hosts have more
        host, count = host.strip(), count.strip()
        if not sep or not host:
            raise ValueError(f"{entry!r} is not host:count")
        if not _VALID_HOST.fullmatch(host):
            raise ValueError(f"contains an invalid address: {host!r}")
        if not _JAVA_INT.fullmatch(count) or not 0 <= int(count) <= JAVA_INT_MAX:
            raise ValueError(f"{entry!r}: the count must be an integer from 0 to {JAVA_INT_MAX}")
        for address in _addresses(host):
            caps[address] = int(count)
    return caps


def _per_ip(value: str, parsed: Mapping[str, Any]) -> int:
    cap: int = integer(0, JAVA_INT_MAX)(value, parsed)
    # KafkaConfig's own check: 0 refuses every address but the overrides.
    if cap == 0 and not parsed.get(PER_IP_OVERRIDES_KEY):
        raise ValueError(f"can be set to zero only if {PER_IP_OVERRIDES_KEY} is set")
    return cap


#: The entries of ``ENDPOINT_KEYS``: the overrides first, which the per-address
#: cap's parser reads.
CAP_KEYS = (
    ConfigKey(
        PER_IP_OVERRIDES_KEY,
        "",
        _overrides,
        "host:count entries, comma-separated (a host: an IP address or a name, resolved at start)",
        "each listed client address's own cap, instead of max.connections.per.ip",
        field="max_connections_per_ip_overrides",
    ),
    ConfigKey(
        PER_IP_KEY,
        str(JAVA_INT_MAX),
        _per_ip,
        f"an integer from 0 to {JAVA_INT_MAX} (0 only with overrides)",
        "connections each serve process holds from one client address; more are closed at once",
        field="max_connections_per_ip",
    ),
    ConfigKey(
        PER_USER_KEY,
        str(JAVA_INT_MAX),
        integer(1, JAVA_INT_MAX),
        f"an integer from 1 to {JAVA_INT_MAX}",
        "logged-in connections each serve process holds for one user; more are refused at login",
        field="max_connections_per_user",
    ),
)
