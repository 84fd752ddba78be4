"""A client address as Kafka's ACLs compare it: ``InetAddress.getHostAddress()``."""

from __future__ import annotations

import ipaddress

from sasl_scram.authz._errors import AuthzError

__all__ = ["java_host_address"]


def java_host_address(address: str) -> str:
    """The text Java gives for ``address``, which an ACL's host must equal.

    IPv4 stays dotted (``10.0.0.5``). IPv6 is written in full, without ``::`` and
    without leading zeros (``0:0:0:0:0:0:0:1``), and an IPv4-mapped address becomes
    its IPv4 address, as Java's ``InetAddress`` makes it an ``Inet4Address``. A zone
    (``%eth0``) is kept. So an ACL for host ``::1`` never matches: Kafka compares the
    strings, and its own answer for that client is ``0:0:0:0:0:0:0:1``.
    """
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        raise AuthzError(
            f"{address!r} is not an IP address: give the client's IPv4 or IPv6 address"
        ) from None
    if isinstance(parsed, ipaddress.IPv4Address):
        return str(parsed)
    if parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    packed = parsed.packed
    groups = (f"{int.from_bytes(packed[i : i + 2], 'big'):x}" for i in range(0, 16, 2))
    zone = f"%{parsed.scope_id}" if parsed.scope_id else ""
    return ":".join(groups) + zone
