"""Kafka's listeners: ``NAME://host:port`` entries, their security protocols, and
the addresses clients are told (``listeners``, ``advertised.listeners``,
``listener.security.protocol.map``, as a broker reads them)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sasl_scram._errors import ScramConfigError
from sasl_scram.config import ConfigKey

__all__ = ["LISTENER_KEYS", "SUPPORTED_PROTOCOLS", "ListenerAddress", "parse_listeners"]

SUPPORTED_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")

_LISTENER_RE = re.compile(
    r"(?P<name>[A-Za-z0-9_]+)://(?P<host>\[[^\]]*\]|[^:\s]*):(?P<port>[0-9]+)"
)


@dataclass(frozen=True)
class ListenerAddress:
    """One ``NAME://host:port`` entry of ``listeners`` (Kafka's ``EndPoint``)."""

    name: str
    host: str
    port: int
    protocol: str

    def __str__(self) -> str:
        return f"{self.name}://{self.host}:{self.port}"


def _parse_listeners(value: str, protocol_map: Mapping[str, str]) -> list[ListenerAddress]:
    listeners: list[ListenerAddress] = []
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
        listeners.append(ListenerAddress(name, m["host"].strip("[]"), port, protocol))
    if not listeners:
        raise ValueError("no listener given")
    names = [entry.name for entry in listeners]
    if len(set(names)) != len(names):
        raise ValueError(f"each listener name must be unique, got {names}")
    return listeners


def parse_listeners(key: str, value: str, protocol_map: Mapping[str, str]) -> list[ListenerAddress]:
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


def _listeners(value: str, parsed: Mapping[str, Any]) -> tuple[ListenerAddress, ...]:
    return tuple(_parse_listeners(value, parsed["listener.security.protocol.map"]))


def _advertised(value: str, parsed: Mapping[str, Any]) -> dict[str, ListenerAddress]:
    listeners: tuple[ListenerAddress, ...] = parsed["listeners"]
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


#: The listener keys, in the order they must be read (each parser sees the ones before).
LISTENER_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        "listener.security.protocol.map",
        "",
        _protocol_map,
        "NAME:PROTOCOL,...",
        "security protocol of each listener name",
        field="protocol_map",
    ),
    ConfigKey(
        "listeners",
        "SASL_PLAINTEXT://127.0.0.1:9092",
        _listeners,
        "NAME://host:port,... with protocol SASL_PLAINTEXT or SASL_SSL",
        "addresses to listen on",
        field="listeners",
    ),
    ConfigKey(
        "advertised.listeners",
        "",
        _advertised,
        "NAME://host:port,... naming listeners",
        "addresses clients are told to reconnect to",
        field="advertised",
    ),
)
