"""ZooKeeper over TLS, configured with Kafka's ``zookeeper.ssl.*`` keys (KIP-515).

Kafka reads these keys from ``server.properties`` and, for ``kafka-configs
--zookeeper``, from the ``--zk-tls-config-file``. Python's ``ssl`` module reads
PEM only, so the key and trust stores must be PEM files, as the SASL_SSL
listener requires too. A JKS or PKCS12 store is refused with an error that
says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

__all__ = ["TLS_KEYS", "ZooKeeperTls"]

_PREFIX = "zookeeper.ssl."
#: The keys understood here (``zookeeper.clientCnxnSocket`` is Java's and is ignored).
TLS_KEYS = frozenset(
    {
        "zookeeper.ssl.client.enable",
        "zookeeper.clientCnxnSocket",
        "zookeeper.ssl.keystore.location",
        "zookeeper.ssl.keystore.password",
        "zookeeper.ssl.keystore.type",
        "zookeeper.ssl.truststore.location",
        "zookeeper.ssl.truststore.password",
        "zookeeper.ssl.truststore.type",
        "zookeeper.ssl.endpoint.identification.algorithm",
    }
)


@dataclass(frozen=True)
class ZooKeeperTls:
    """TLS to ZooKeeper.

    Args:
        truststore: PEM file of the CA certificates to trust; ``None`` uses
            the system's.
        keystore: PEM file holding the client's private key and certificate
            chain, for ensembles that require client certificates (and give
            x509 identities to ACLs).
        key_password: The keystore's key password; never shown by ``repr``.
        check_hostname: Kafka's ``zookeeper.ssl.endpoint.identification.algorithm``
            (``HTTPS``, the default, checks it; empty does not).
    """

    truststore: Path | None = None
    keystore: Path | None = None
    key_password: str | None = field(default=None, repr=False)
    check_hostname: bool = True

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> ZooKeeperTls | None:
        """From Kafka's ``zookeeper.ssl.*`` keys; ``None`` unless
        ``zookeeper.ssl.client.enable=true``.

        Raises:
            ValueError: a non-PEM store, a missing file, or a bad value.
        """
        enable = props.get("zookeeper.ssl.client.enable", "false").strip().lower()
        if enable not in ("true", "false"):
            raise ValueError(f"zookeeper.ssl.client.enable: expected true or false, got {enable!r}")
        if enable == "false":
            return None
        return cls.from_settings(props)

    @classmethod
    def from_settings(cls, settings: Mapping[str, str | None]) -> ZooKeeperTls:
        """From the values of the ``zookeeper.ssl.*`` keys by name (a missing or
        ``None`` value: the key is not set), TLS being enabled.

        Raises:
            ValueError: a non-PEM store, a missing file, or a bad value.
        """
        stores: dict[str, Path | None] = {}
        for store in ("keystore", "truststore"):
            location = (settings.get(f"{_PREFIX}{store}.location") or "").strip()
            kind = (settings.get(f"{_PREFIX}{store}.type") or "").strip().upper()
            if location and kind not in ("", "PEM"):
                raise ValueError(
                    f"{_PREFIX}{store}.type: {kind} is not supported, only PEM (Python's "
                    "ssl module reads PEM); convert the store to a PEM file"
                )
            path = Path(location) if location else None
            if path is not None and not path.is_file():
                raise ValueError(f"{_PREFIX}{store}.location: no such file: {path}")
            stores[store] = path
        algorithm = settings.get(f"{_PREFIX}endpoint.identification.algorithm")
        algorithm = "HTTPS" if algorithm is None else algorithm.strip()
        if algorithm.upper() not in ("HTTPS", ""):
            raise ValueError(
                f"{_PREFIX}endpoint.identification.algorithm: expected HTTPS or empty, "
                f"got {algorithm!r}"
            )
        password = settings.get(f"{_PREFIX}keystore.password") or None
        return cls(stores["truststore"], stores["keystore"], password, algorithm != "")

    def kazoo_options(self) -> dict[str, Any]:
        """Keyword arguments for ``KazooClient``."""
        options: dict[str, Any] = {
            "use_ssl": True,
            "verify_certs": True,
            "check_hostname": self.check_hostname,
        }
        if self.truststore is not None:
            options["ca"] = str(self.truststore)
        if self.keystore is not None:
            # One PEM file holds both the key and the chain, as Kafka's PEM stores do.
            options["certfile"] = options["keyfile"] = str(self.keystore)
            options["keyfile_password"] = self.key_password
        return options
