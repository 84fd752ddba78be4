"""``host:port`` lists as Kafka's clients and ZooKeeper read them, checked once.

``bootstrap.servers`` (``ClientUtils.parseAndValidateAddresses``): every entry
needs a port, empty entries are skipped. A ZooKeeper connect string
(``ConnectStringParser``): ``host[:port][,host[:port]...][/chroot]``, the port
2181 when left out.
"""

from __future__ import annotations

__all__ = ["bootstrap_servers", "format_host_port", "zookeeper_connect"]

_MAX_PORT = 65535


def _host_port(item: str, *, port_required: bool) -> tuple[str, int | None]:
    if item.startswith("["):  # [IPv6] or [IPv6]:port
        host, closed, rest = item[1:].partition("]")
        if not closed or (rest and not rest.startswith(":")):
            raise ValueError(f"{item!r} is not host:port")
        port: str | None = rest[1:] if rest else None
    else:
        # The port follows the last colon, as in Kafka's Utils.getPort and
        # ZooKeeper's ConnectStringParser.
        host, sep, port = item.rpartition(":")
        if not sep:
            host, port = item, None
    if port is None:
        if port_required:
            raise ValueError(f"{item!r} is not host:port")
        return host, None  # ZooKeeper's default port
    if not host or not (port.isascii() and port.isdigit()):
        raise ValueError(f"{item!r} is not host:port")
    number = int(port)
    if not 1 <= number <= _MAX_PORT:
        raise ValueError(f"port {number} is out of range (1-{_MAX_PORT})")
    return host, number


def bootstrap_servers(text: str) -> list[tuple[str, int]]:
    """``host:port[,host:port...]``; empty entries are skipped, as Kafka's clients do.

    Raises:
        ValueError: an entry without a port, a port out of range, or no entry.
    """
    out = []
    for item in (part.strip() for part in text.split(",")):
        if item:
            host, port = _host_port(item, port_required=True)
            assert port is not None
            out.append((host, port))
    if not out:
        raise ValueError("no host:port given")
    return out


def format_host_port(host: str, port: int) -> str:
    """``host:port`` as a client is given it; an IPv6 address in brackets, as
    :func:`bootstrap_servers` reads it (and Kafka's ``Utils.formatAddress``)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def zookeeper_connect(text: str) -> str:
    """``text`` once its hosts are known to be ``host[:port]`` entries.

    Raises:
        ValueError: an empty entry (kazoo would fail on it later with a Python
            error), a port that is not a number or out of range, no host.
    """
    hosts = text.strip().partition("/")[0]
    if not hosts:
        raise ValueError("no host:port given")
    for item in (part.strip() for part in hosts.split(",")):
        if not item:
            raise ValueError(f"an empty host:port in {hosts!r}")
        _host_port(item, port_required=False)
    return text.strip()
