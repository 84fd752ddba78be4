"""Kafka client configuration (``client.properties``) with Kafka's key names.

One typed :class:`ClientConfig` (user or delegation-token credentials) feeds
our own tools (``--command-config``) and every client integration. Errors name
the key and the problem, never a secret.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

import jaas
from sasl_scram._errors import ScramConfigError
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.config._addresses import bootstrap_servers
from sasl_scram.config._addresses import format_host_port
from sasl_scram.config._properties import read_properties

__all__ = [
    "SASL_PROTOCOLS",
    "SECURITY_PROTOCOLS",
    "ClientConfig",
    "ClientConfigError",
    "SaslCredentials",
]

#: Kafka's ``SecurityProtocol`` names a client may use.
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
#: Those that authenticate with SASL (and so can carry a SCRAM login).
SASL_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")
# Kafka's store types; only PEM can be read from Python (and by librdkafka as files).
_STORE_TYPE_KEYS = ("ssl.truststore.type", "ssl.keystore.type")
# The keys from_properties reads (with every ssl.* key).
_READ_KEYS = frozenset(
    {"bootstrap.servers", "security.protocol", "sasl.mechanism", "sasl.jaas.config"}
)

log = logging.getLogger("sasl_scram.config")


@dataclass(frozen=True)
class SaslCredentials:
    """Who a client logs in as: a user, or a delegation token (``token_auth``)."""

    mechanism: ScramMechanism
    username: str
    password: str = field(repr=False)
    token_auth: bool = False


class ClientConfigError(ScramConfigError):
    """A client property is missing or invalid; the message names the key."""


@dataclass(frozen=True)
class ClientConfig:
    """What a SCRAM client needs, read from Kafka client properties.

    Attributes:
        bootstrap_servers: ``bootstrap.servers`` (may be empty when a tool takes
            ``--bootstrap-server`` separately).
        security_protocol: ``security.protocol``.
        mechanism: ``sasl.mechanism`` (SCRAM only).
        username: From ``sasl.jaas.config``; the token id for token logins.
        password: From ``sasl.jaas.config``; the base64 HMAC for token logins.
        token_auth: ``tokenauth=true`` in the JAAS line.
        ssl_properties: The ``ssl.*`` keys, for :meth:`ssl_context`.
        properties: Everything that was given.
    """

    bootstrap_servers: str
    security_protocol: str
    mechanism: ScramMechanism | None
    username: str | None
    password: str | None = field(repr=False)
    token_auth: bool
    ssl_properties: dict[str, str] = field(default_factory=dict, repr=False)
    properties: dict[str, str] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        return (
            f"ClientConfig(bootstrap_servers={self.bootstrap_servers!r}, "
            f"security_protocol={self.security_protocol!r}, mechanism={self.mechanism}, "
            f"username={self.username!r}, password=<hidden>, token_auth={self.token_auth})"
        )

    def bootstrap_addresses(self, override: str | None = None) -> list[tuple[str, int]]:
        """``bootstrap.servers`` (or ``override``, e.g. a tool's ``--bootstrap-server``)
        as ``(host, port)`` pairs, checked as Kafka's clients check them
        (``ClientUtils``: every entry needs its port).

        Raises:
            ClientConfigError: no entry, or one without a port or out of range.
        """
        if override is not None and not isinstance(override, str):
            # kafka-python's own bootstrap_servers also takes a list; this is Kafka's one string.
            raise ClientConfigError(
                "bootstrap_servers: expected one string 'host:port[,host:port...]', got "
                f"{type(override).__name__}; join a list's entries with ','"
            )
        servers = self.bootstrap_servers if override is None else override
        if not servers.replace(",", "").strip():
            raise ClientConfigError("bootstrap.servers: required, e.g. broker1:9093,broker2:9093")
        try:
            return bootstrap_servers(servers)
        except ValueError as exc:
            raise ClientConfigError(f"bootstrap.servers: {exc}, e.g. broker1:9093") from None

    def bootstrap_list(self, override: str | None = None) -> list[str]:
        """:meth:`bootstrap_addresses` as the ``host:port`` strings clients take.

        Raises:
            ClientConfigError: as :meth:`bootstrap_addresses`.
        """
        return [format_host_port(host, port) for host, port in self.bootstrap_addresses(override)]

    @property
    def mechanism_name(self) -> str | None:
        """``sasl.mechanism`` as Kafka spells it, or ``None`` without SASL."""
        return None if self.mechanism is None else self.mechanism.mechanism_name

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol in SASL_PROTOCOLS

    @property
    def uses_ssl(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    @classmethod
    def from_file(cls, path: str | Path, *, strict: bool = False) -> ClientConfig:
        """Read a ``client.properties`` file (see :meth:`from_properties`)."""
        try:
            props = read_properties(path)
        except ScramConfigError as exc:
            raise ClientConfigError(str(exc)) from None
        return cls.from_properties(props, strict=strict)

    @classmethod
    def from_properties(cls, props: Mapping[str, str], *, strict: bool = False) -> ClientConfig:
        """Validate properties; SASL protocols need a SCRAM mechanism and a JAAS line.

        An option of ``sasl.jaas.config`` that Kafka's ScramLoginModule ignores
        (``tokenath=true``, ``passwrod=...``), or a ``tokenauth`` other than
        ``true``/``false``, is accepted as Kafka accepts it, with a WARNING on
        the ``sasl_scram.config`` logger, once per call.

        Args:
            props: The client properties.
            strict: Refuse such a line instead (``ClientConfigError``).

        Raises:
            ClientConfigError: A key is missing or invalid; the message names it.
        """
        props = dict(props)
        _check_strings(props)
        protocol = props.get("security.protocol", "PLAINTEXT").strip().upper()
        if protocol not in SECURITY_PROTOCOLS:
            raise ClientConfigError(
                f"security.protocol: {protocol!r} is not one of {', '.join(SECURITY_PROTOCOLS)}"
            )
        mechanism = None
        username = password = None
        token_auth = False
        if protocol.startswith("SASL_"):
            name = props.get("sasl.mechanism", "").strip()
            if not name:
                # Kafka's default is GSSAPI, which this library does not speak.
                raise ClientConfigError(
                    "sasl.mechanism: required for SASL protocols; set SCRAM-SHA-256 or "
                    "SCRAM-SHA-512 (Kafka's default GSSAPI is not supported here)"
                )
            try:
                mechanism = ScramMechanism.from_name(name)
            except ValueError:
                raise ClientConfigError(
                    f"sasl.mechanism: {name!r} is not supported; expected "
                    f"{' or '.join(ScramMechanism.names())}"
                ) from None
            line = props.get("sasl.jaas.config")
            if not line:
                raise ClientConfigError(
                    "sasl.jaas.config: required; e.g. org.apache.kafka.common.security.scram."
                    'ScramLoginModule required username="alice" password="alice-secret";'
                )
            creds = read_jaas_login(line, strict=strict)
            username, password, token_auth = creds.username, creds.password, creds.token_auth
        return cls(
            bootstrap_servers=props.get("bootstrap.servers", "").strip(),
            security_protocol=protocol,
            mechanism=mechanism,
            username=username,
            password=password,
            token_auth=token_auth,
            ssl_properties={k: v for k, v in props.items() if k.startswith("ssl.")},
            properties=props,
        )

    def pem_ssl_properties(self, reader: str) -> dict[str, str]:
        """The ``ssl.*`` keys once their stores are known to be PEM.

        Args:
            reader: Who cannot read other store types, for the message
                (``"from Python"``, ``"for librdkafka"``).

        Raises:
            ClientConfigError: A JKS or PKCS#12 store.
        """
        p = self.ssl_properties
        for key in _STORE_TYPE_KEYS:
            if key in p and p[key].strip().upper() != "PEM":
                raise ClientConfigError(f"{key}: only PEM is supported {reader}, got {p[key]!r}")
        return p

    def ssl_context(self) -> ssl.SSLContext | None:
        """An SSL context from the PEM ``ssl.*`` keys, or ``None`` without SSL."""
        if not self.uses_ssl:
            return None
        p = self.pem_ssl_properties("from Python")
        context = ssl.create_default_context()
        trust = p.get("ssl.truststore.location")
        inline = p.get("ssl.truststore.certificates")
        try:
            if trust:
                context.load_verify_locations(cafile=trust)
            if inline:
                context.load_verify_locations(cadata=inline)
            if p.get("ssl.keystore.location"):
                context.load_cert_chain(
                    p["ssl.keystore.location"], password=p.get("ssl.key.password") or None
                )
        except (OSError, ssl.SSLError) as exc:
            raise ClientConfigError(f"ssl: cannot load certificates: {exc}") from None
        # Kafka: an empty ssl.endpoint.identification.algorithm disables host checks.
        if p.get("ssl.endpoint.identification.algorithm", "https").strip() == "":
            context.check_hostname = False
        return context

    def require_credentials(self) -> tuple[ScramMechanism, str, str]:
        if self.mechanism is None or self.username is None or self.password is None:
            raise ClientConfigError(
                f"security.protocol: {self.security_protocol} does not authenticate with SCRAM; "
                "use SASL_PLAINTEXT or SASL_SSL"
            )
        return self.mechanism, self.username, self.password


def read_jaas_login(
    line: str, *, strict: bool = False, warn: bool = True
) -> jaas.ScramLoginCredentials:
    """The credentials of a ``sasl.jaas.config`` line, its ignored options warned about
    (or refused when ``strict``).

    Kafka's ``ScramLoginModule`` reads only ``username``, ``password`` and
    ``tokenauth`` and drops every other option without a word, so a typo in
    ``tokenauth`` sends a token id as a user name and the broker only says
    "invalid credentials".

    Args:
        line: The ``sasl.jaas.config`` value.
        strict: Refuse an ignored option instead of warning.
        warn: Log the warnings (a provider that re-reads an unchanged line at
            every login passes ``False`` after the first).

    Raises:
        ClientConfigError: The line does not parse, is not one SCRAM login, or
            (``strict``) carries an option the module ignores.
    """
    try:
        context = jaas.load_client_context(line)
    except jaas.JaasError as exc:
        raise ClientConfigError(f"sasl.jaas.config: {exc}") from None
    warnings = [w.message for e in context.entries for w in jaas.option_warnings(e)]
    if strict and warnings:
        raise ClientConfigError(f"sasl.jaas.config: {'; '.join(warnings)}")
    try:
        creds = jaas.ScramLoginCredentials.from_context(context)
    except jaas.JaasError as exc:
        # A missing password is most often a misspelled one: say which.
        why = f" ({'; '.join(warnings)})" if warnings else ""
        raise ClientConfigError(f"sasl.jaas.config: {exc}{why}") from None
    for warning in warnings if warn else ():
        log.warning("sasl.jaas.config: %s", warning)
    return creds


def _check_strings(props: Mapping[str, object]) -> None:
    """Every key read here holds a string, as in Java's ``Properties``.

    Raises:
        ClientConfigError: naming the key and the type found (never the value,
            which may be a secret).
    """
    for key, value in props.items():
        read = key in _READ_KEYS or (isinstance(key, str) and key.startswith("ssl."))
        if read and not isinstance(value, str):
            raise ClientConfigError(
                f"{key}: expected a string, got {type(value).__name__} "
                "(client properties are strings, as in a client.properties file)"
            )
