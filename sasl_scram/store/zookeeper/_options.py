"""The ZooKeeper stores' options from server properties: the key table and the typed result.

``kafka-scram serve`` reads these keys with the rest of its table (each
entry names its field of :class:`ZooKeeperOptions`), once; the credential and
token stores of one endpoint are opened with the same
:meth:`ZooKeeperOptions.store_options`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import jaas
from sasl_scram._errors import ScramConfigError
from sasl_scram.config import ConfigKey
from sasl_scram.config import Parser
from sasl_scram.config import boolean
from sasl_scram.config import build
from sasl_scram.config import integer
from sasl_scram.config import read_keys
from sasl_scram.config import text
from sasl_scram.config import verbatim
from sasl_scram.store._freshness import DEFAULT_MAX_STALENESS
from sasl_scram.store._freshness import MAX_STALENESS_KEY
from sasl_scram.store._freshness import parse_max_staleness
from sasl_scram.store.zookeeper._security import CONTEXT_KEY
from sasl_scram.store.zookeeper._security import JAAS_FILE_KEY
from sasl_scram.store.zookeeper._security import SET_ACL_KEY
from sasl_scram.store.zookeeper._security import ZooKeeperSecurity
from sasl_scram.store.zookeeper._tls import ZooKeeperTls

__all__ = ["DEFAULT_SESSION_TIMEOUT_MS", "ZOOKEEPER_KEYS", "ZooKeeperOptions"]

#: Kafka's ``zookeeper.session.timeout.ms`` default.
DEFAULT_SESSION_TIMEOUT_MS = 18_000

_INT1 = "an integer >= 1"
_ANY = "any text"
_TLS = "zookeeper.ssl."


def _max_staleness(value: str, _: Mapping[str, Any]) -> float:
    return parse_max_staleness(value)


def _optional_integer(minimum: int) -> Parser:
    parse = integer(minimum)
    return lambda value, parsed: parse(value, parsed) if value.strip() else None


def _text_key(name: str, field_name: str, doc: str, *, secret: bool = False) -> ConfigKey:
    # A password is kept as written: its spaces may be part of it.
    return ConfigKey(
        name, None, verbatim if secret else text, _ANY, doc, secret=secret, field=field_name
    )


#: The keys a ZooKeeper store reads, in the order ``serve``'s table lists them
#: (docs/stores.md has the details).
ZOOKEEPER_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        MAX_STALENESS_KEY,
        str(int(DEFAULT_MAX_STALENESS * 1000)),
        _max_staleness,
        "milliseconds (0 or more), or -1 to never fail closed",
        "how long a store serves its cached copy without ZooKeeper",
        field="max_staleness",
    ),
    ConfigKey(
        "zookeeper.session.timeout.ms",
        "",
        _optional_integer(1),
        _INT1,
        "ZooKeeper session timeout (empty: 18 s, as in Kafka)",
        field="session_timeout_ms",
    ),
    ConfigKey(
        "zookeeper.connection.timeout.ms",
        "",
        _optional_integer(1),
        _INT1,
        "bound on connecting and on each ZooKeeper request (empty: the session timeout)",
        field="connection_timeout_ms",
    ),
    # Kafka's BOOLEAN keys, checked at start whichever store is used.
    ConfigKey(
        SET_ACL_KEY,
        "false",
        boolean,
        "true or false",
        "true: the znodes we create get Kafka's secure ACLs (needs SASL or TLS)",
        field="set_acl",
    ),
    ConfigKey(
        f"{_TLS}client.enable",
        "false",
        boolean,
        "true or false",
        "true: connect to ZooKeeper over TLS",
        field="tls_enable",
    ),
    _text_key(
        JAAS_FILE_KEY,
        "jaas_file",
        "JAAS file whose Client section (DigestLoginModule) logs in to ZooKeeper",
    ),
    _text_key(
        "zookeeper.clientCnxnSocket",
        "client_cnxn_socket",
        "Kafka's Netty socket class for TLS; accepted, not needed here",
    ),
    _text_key(
        CONTEXT_KEY, "sasl_context", "the JAAS section of that file to log in with (default Client)"
    ),
    _text_key(
        f"{_TLS}endpoint.identification.algorithm",
        "tls_endpoint_identification_algorithm",
        "HTTPS (the default) checks ZooKeeper's host name, empty does not",
    ),
    _text_key(
        f"{_TLS}keystore.location",
        "tls_keystore_location",
        "client certificate and key for TLS to ZooKeeper (PEM)",
    ),
    _text_key(
        f"{_TLS}keystore.password",
        "tls_keystore_password",
        "password of the keystore's key",
        secret=True,
    ),
    _text_key(
        f"{_TLS}keystore.type",
        "tls_keystore_type",
        "the keystore's type: PEM only (JKS, PKCS12 refused)",
    ),
    _text_key(
        f"{_TLS}truststore.location",
        "tls_truststore_location",
        "CA certificates that verify ZooKeeper (PEM)",
    ),
    _text_key(
        f"{_TLS}truststore.password",
        "tls_truststore_password",
        "password of the truststore",
        secret=True,
    ),
    _text_key(
        f"{_TLS}truststore.type",
        "tls_truststore_type",
        "the truststore's type: PEM only (JKS, PKCS12 refused)",
    ),
)


@dataclass(frozen=True)
class ZooKeeperOptions:
    """The typed values of :data:`ZOOKEEPER_KEYS` (``None``: not set)."""

    max_staleness: float = DEFAULT_MAX_STALENESS
    session_timeout_ms: int | None = None
    connection_timeout_ms: int | None = None
    set_acl: bool = False
    tls_enable: bool = False
    jaas_file: str | None = None
    client_cnxn_socket: str | None = None
    sasl_context: str | None = None
    tls_endpoint_identification_algorithm: str | None = None
    tls_keystore_location: str | None = None
    tls_keystore_password: str | None = field(default=None, repr=False)
    tls_keystore_type: str | None = None
    tls_truststore_location: str | None = None
    tls_truststore_password: str | None = field(default=None, repr=False)
    tls_truststore_type: str | None = None

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> ZooKeeperOptions:
        """From the values :func:`~sasl_scram.config.read_keys` parsed, by key name."""
        return build(cls, ZOOKEEPER_KEYS, settings)

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> ZooKeeperOptions:
        """Read :data:`ZOOKEEPER_KEYS` from server properties.

        Raises:
            ConfigValueError: a bad value, naming its file, line and key.
        """
        return cls.from_settings(read_keys(ZOOKEEPER_KEYS, props, getattr(props, "origins", {})))

    def tls(self) -> ZooKeeperTls | None:
        """TLS to ZooKeeper, when ``zookeeper.ssl.client.enable`` is true.

        Raises:
            ValueError: a non-PEM store, a missing file, or a bad value.
        """
        if not self.tls_enable:
            return None
        # Every key of the table names its field.
        tls_keys = (key for key in ZOOKEEPER_KEYS if key.name.startswith(_TLS))
        return ZooKeeperTls.from_settings(
            {key.name: getattr(self, str(key.field)) for key in tls_keys}
        )

    def security(self) -> ZooKeeperSecurity | None:
        """The SASL login and ACL choice (:meth:`ZooKeeperSecurity.from_settings`).

        Raises:
            ValueError, OSError, jaas.JaasError: an unusable login or TLS setting.
        """
        return ZooKeeperSecurity.from_settings(
            set_acl=self.set_acl,
            tls=self.tls(),
            jaas_file=self.jaas_file,
            context=self.sasl_context,
        )

    def store_options(self) -> dict[str, Any]:
        """Keyword options for a ZooKeeper credential or token store.

        ``scram.store.max.staleness.ms`` (default 60 s; ``-1`` never fails
        closed, as a broker), one ZooKeeper session shared by the stores of
        the process, ``zookeeper.session.timeout.ms`` (Kafka's default 18 s),
        the connection timeout (defaults to the session timeout, as in Kafka)
        bounding each request, and the SASL login and ACLs of :meth:`security`.

        Raises:
            ScramConfigError: an unusable ZooKeeper login.
        """
        session_ms = self.session_timeout_ms or DEFAULT_SESSION_TIMEOUT_MS
        connection_ms = self.connection_timeout_ms or session_ms
        try:
            security = self.security()
        except (ValueError, OSError, jaas.JaasError) as exc:
            raise ScramConfigError(f"ZooKeeper login: {exc}") from None
        return {
            "security": security,
            "session_timeout": session_ms / 1000,
            "request_timeout": connection_ms / 1000,
            "max_staleness": self.max_staleness,
            # The credential and token stores of one endpoint share one session.
            "share_session": True,
        }
