"""How the ZooKeeper stores log in to ZooKeeper and which ACLs their znodes get.

A secured Kafka 3.x ensemble has brokers that log in with SASL (a JAAS
``Client`` section) and run with ``zookeeper.set.acl=true``. Their znodes then
carry Kafka's ``ZkData.defaultAcls``:

* ``CREATOR_ALL_ACL`` on every path;
* plus world read (``READ_ACL_UNSAFE``), except under the sensitive roots
  ``/config/users``, ``/config/brokers`` and ``/delegation_token/tokens``
  (``ZkData.sensitivePath``: a plain prefix test).

To read such credentials a store must log in as the brokers' principal (or a
ZooKeeper super user). With ``secure_acls`` it also writes the same ACLs.
Without it, znodes get ZooKeeper's open ACL, as Kafka does with
``zookeeper.set.acl=false``.

Only the DIGEST-MD5 mechanism (``DigestLoginModule``) is supported. kazoo
speaks SASL through ``pure-sasl``. A Kerberos ``Client`` section is refused
with an error rather than ignored. TLS (:class:`ZooKeeperTls`, Kafka's
``zookeeper.ssl.*`` keys) can be used with or instead of SASL; a client
certificate then gives the x509 identity the ACLs name.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

import jaas
from sasl_scram.store.zookeeper._tls import ZooKeeperTls

__all__ = [
    "CONTEXT_KEY",
    "DIGEST_LOGIN_MODULE",
    "JAAS_FILE_KEY",
    "SENSITIVE_ROOTS",
    "SET_ACL_KEY",
    "ZOOKEEPER_CLIENT_CONTEXT",
    "ZooKeeperSecurity",
]

#: ``ZkData.SensitiveRootPaths`` (docs/kafka-facts.md §5.1), plus the decoy secret.
SENSITIVE_ROOTS = (
    "/config/users",
    "/config/brokers",
    "/delegation_token/tokens",
    "/kafka-scram/secrets",
)
#: The JAAS section ZooKeeper clients read (``zookeeper.sasl.clientconfig``).
ZOOKEEPER_CLIENT_CONTEXT = "Client"
DIGEST_LOGIN_MODULE = "org.apache.zookeeper.server.auth.DigestLoginModule"
#: Server property keys: Kafka's, and ours for what Kafka takes from JVM flags.
SET_ACL_KEY = "zookeeper.set.acl"
CONTEXT_KEY = "zookeeper.sasl.clientconfig"
JAAS_FILE_KEY = "scram.zookeeper.jaas.file"


@dataclass(frozen=True)
class ZooKeeperSecurity:
    """How to authenticate to ZooKeeper, and whether created znodes get Kafka's secure ACLs.

    Args:
        username: The SASL DIGEST-MD5 user (the brokers' ZooKeeper principal),
            or ``None`` for no SASL login.
        password: Its password; never shown by ``repr``.
        secure_acls: Kafka's ``zookeeper.set.acl``.
        tls: TLS to ZooKeeper (a client certificate also authenticates).
    """

    username: str | None = None
    password: str | None = field(default=None, repr=False)
    secure_acls: bool = True
    tls: ZooKeeperTls | None = None

    def __post_init__(self) -> None:
        if self.username is None and self.tls is None:
            raise ValueError("a ZooKeeper login needs a SASL user, TLS, or both")
        if self.username is not None and not self.username:
            raise ValueError("the ZooKeeper SASL username is empty")
        if self.username is not None and not self.password:
            raise ValueError(f"the ZooKeeper SASL password of {self.username!r} is empty")
        if self.username is None and self.password is not None:
            raise ValueError("a ZooKeeper SASL password was given without a username")

    @classmethod
    def from_jaas_file(
        cls,
        path: str | Path,
        *,
        context: str = ZOOKEEPER_CLIENT_CONTEXT,
        secure_acls: bool = True,
        tls: ZooKeeperTls | None = None,
    ) -> ZooKeeperSecurity:
        """Read the login from a JAAS file's ``Client`` section, as a broker does.

        Raises:
            jaas.JaasError: The file does not parse.
            ValueError: No such section, several login modules, or not a
                ``DigestLoginModule`` with ``username`` and ``password``.
        """
        text = Path(path).read_text(encoding="utf-8")
        config = jaas.parse_file(text, str(path))
        entries = config.entries(context)
        if entries is None:
            raise ValueError(f"{path}: no '{context}' section for the ZooKeeper login")
        if len(entries) != 1:
            raise ValueError(
                f"{path}: the '{context}' section has {len(entries)} login modules; expected one"
            )
        entry = entries[0]
        if entry.module != DIGEST_LOGIN_MODULE:
            raise ValueError(
                f"{path}: the '{context}' section uses {entry.module}; only "
                f"{DIGEST_LOGIN_MODULE} (SASL DIGEST-MD5) is supported for ZooKeeper"
            )
        missing = [k for k in ("username", "password") if not entry.options.get(k)]
        if missing:
            raise ValueError(
                f"{path}: the '{context}' section lacks {' and '.join(missing)} "
                f"for {DIGEST_LOGIN_MODULE}"
            )
        return cls(entry.options["username"], entry.options["password"], secure_acls, tls)

    @classmethod
    def from_kafka_opts(
        cls, kafka_opts: str | None, tls: ZooKeeperTls | None = None
    ) -> ZooKeeperSecurity | None:
        """The login Kafka's own tools would use, from a ``KAFKA_OPTS`` value.

        Kafka's scripts pass ``-Djava.security.auth.login.config=FILE`` (and
        optionally ``-Dzookeeper.sasl.clientconfig=NAME``). Like
        ``JaasUtils.isZkSaslEnabled``, a login found this way also means
        secure ACLs, and so does TLS (``kafka-configs --zk-tls-config-file``).
        ``-Dzookeeper.sasl.client=false`` turns the SASL login off.
        ``None`` when there is neither.
        """
        flags: dict[str, str] = {}
        for word in shlex.split(kafka_opts or ""):
            if word.startswith("-D") and "=" in word:
                key, _, value = word[2:].partition("=")
                flags[key] = value
        path = flags.get("java.security.auth.login.config")
        if not path or flags.get("zookeeper.sasl.client", "true").lower() == "false":
            return cls(tls=tls) if tls is not None else None
        context = flags.get("zookeeper.sasl.clientconfig", ZOOKEEPER_CLIENT_CONTEXT)
        return cls.from_jaas_file(path, context=context, tls=tls)

    @classmethod
    def from_settings(
        cls,
        *,
        set_acl: bool,
        tls: ZooKeeperTls | None,
        jaas_file: str | None,
        context: str | None,
    ) -> ZooKeeperSecurity | None:
        """From the typed values of ``zookeeper.set.acl``, the TLS keys,
        ``scram.zookeeper.jaas.file`` and ``zookeeper.sasl.clientconfig``
        (``None``: not set).

        Raises:
            ValueError: ``set_acl`` with neither a SASL login nor TLS (Kafka
                refuses to start then too), an unusable JAAS file.
        """
        path = (jaas_file or "").strip()
        if not path:
            if tls is not None:
                return cls(secure_acls=set_acl, tls=tls)
            if set_acl:
                raise ValueError(
                    f"{SET_ACL_KEY} is true, but no ZooKeeper SASL login or TLS is configured: "
                    f"set {JAAS_FILE_KEY} to a JAAS file with a 'Client' section, or "
                    "zookeeper.ssl.client.enable=true"
                )
            return None
        context = (context or "").strip() or ZOOKEEPER_CLIENT_CONTEXT
        return cls.from_jaas_file(path, context=context, secure_acls=set_acl, tls=tls)

    def kazoo_options(self) -> dict[str, Any]:
        """Keyword arguments for ``KazooClient``."""
        options = self.tls.kazoo_options() if self.tls is not None else {}
        if self.username is not None:
            options["sasl_options"] = {
                "mechanism": "DIGEST-MD5",
                "username": self.username,
                "password": self.password,
            }
        return options

    def acl(self, path: str, kazoo_security: Any) -> list[Any] | None:
        """The ACL for a znode created at ``path`` (chroot-relative); ``None``: the default."""
        if not self.secure_acls:
            return None
        acl = list(kazoo_security.CREATOR_ALL_ACL)
        if not path.startswith(SENSITIVE_ROOTS):
            acl.extend(kazoo_security.READ_ACL_UNSAFE)
        return acl
