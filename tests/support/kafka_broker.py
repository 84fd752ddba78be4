"""Real Apache Kafka brokers for tests, from Maven Central's jars.

Three brokers, each started once per test session on first use and stopped by
PID at its end:

- ``kraft_broker``: the newest Kafka 4.x in KRaft combined mode (broker and
  controller in one JVM), formatted by Kafka's ``StorageTool`` with the super
  user added by ``--add-scram``;
- ``zookeeper_broker``: the newest Kafka 3.9.x in ZooKeeper mode on the
  suite's real ZooKeeper (its own chroot), the super user written there first
  by Kafka's own ``ConfigCommand --zookeeper``;
- ``strict_kraft_broker``: the KRaft broker again, whose authorizer allows no
  one but the super user what no ACL grants (``allow.everyone.if.no.acl.found``
  off), for the tests of least privilege.

``kafka_broker`` is parametrised over both. Every broker listens on loopback
with SASL_PLAINTEXT and both SCRAM mechanisms on two listeners: ``bootstrap``,
and ``reauth_bootstrap`` whose ``connections.max.reauth.ms`` is
``REAUTH_MS`` (KIP-368). Delegation tokens are on (``SECRET_KEY``), and expired
tokens are swept every second. Tests share a broker, so each uses its own users
(``add_user``) and topics (``unique_name``). A failing test that used a broker
gets the tail of that broker's log in its report.

The jars come from ``tools/fetch_kafka_broker.py`` (``make brokers``), cached
under ``~/.cache/kafka-scram``.
"""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from collections.abc import Sequence
from pathlib import Path

import pytest
from cryptography import x509

from sasl_scram import ScramMechanism
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import KafkaConnectionError
from sasl_scram.admin import RemoteScramAdmin
from sasl_scram.admin import SaslCredentials
from sasl_scram.kafka import ErrorCode
from sasl_scram.store import ScramDeletion
from sasl_scram.store import ScramUpsertion
from tests.support.tls import self_signed
from tests.support.zookeeper_server import ZooKeeperServer
from tests.support.zookeeper_server import create_chroot
from tests.support.zookeeper_server import free_port
from tools.fetch_kafka_broker import KAFKA_VERSIONS
from tools.fetch_kafka_broker import is_fetched
from tools.fetch_kafka_broker import libs_dir

__all__ = [
    "ADMIN_PASSWORD",
    "ADMIN_USER",
    "KAFKA_VERSIONS",
    "MECHANISMS",
    "REAUTH_MS",
    "SECRET_KEY",
    "KafkaBroker",
    "kafka_broker",
    "kraft_broker",
    "strict_kraft_broker",
    "unique_name",
    "zookeeper_broker",
]

ADMIN_USER = "admin"
ADMIN_PASSWORD = "admin-secret"
SECRET_KEY = "kafka-scram-tests-token-secret"
#: connections.max.reauth.ms on the ``reauth`` listener (KIP-368).
REAUTH_MS = 3000
MECHANISMS = (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512)
_SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule"


def unique_name(prefix: str) -> str:
    """A user or topic name no other test uses on the shared broker."""
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


class KafkaBroker:
    """One Apache Kafka broker JVM.

    Args:
        mode: ``"kraft"`` (combined broker and controller) or ``"zookeeper"``.
        base_dir: A directory this broker owns (config, data, log).
        zookeeper_connect: For ZooKeeper mode, ``host:port/chroot``.
        jvm_flags: Extra JVM flags (the bench pins and warms its own broker).
        authorizer: Run Kafka's authorizer (StandardAuthorizer in KRaft mode,
            AclAuthorizer in ZooKeeper mode); without it every principal may do
            everything.
        allow_everyone: ``allow.everyone.if.no.acl.found``: on the shared brokers,
            so that a test denies only on a resource it puts an ACL on; off, every
            principal but the super user needs an ACL for what it does.
        relay_ports: One more SASL_PLAINTEXT listener per port, ``RELAY0``,
            ``RELAY1``..., each bound on a port of its own (:attr:`relay_upstreams`)
            and advertised at its relay port, where a byte relay in front of it
            listens (the front-door bench's floors): a client bootstrapping at a
            relay is told the broker is there.
    """

    def __init__(
        self,
        mode: str,
        base_dir: Path,
        zookeeper_connect: str | None = None,
        jvm_flags: Sequence[str] = ("-XX:TieredStopAtLevel=1",),
        *,
        authorizer: bool = True,
        allow_everyone: bool = True,
        relay_ports: Sequence[int] = (),
    ) -> None:
        if mode not in KAFKA_VERSIONS:
            raise ValueError(f"mode must be one of {sorted(KAFKA_VERSIONS)}, not {mode!r}")
        if mode == "zookeeper" and not zookeeper_connect:
            raise ValueError("a ZooKeeper-mode broker needs zookeeper_connect")
        self.mode = mode
        self.version = KAFKA_VERSIONS[mode]
        self.base_dir = Path(base_dir)
        self.zookeeper_connect = zookeeper_connect
        self.jvm_flags = list(jvm_flags)
        self.authorizer = authorizer
        self.allow_everyone = allow_everyone
        self.port = free_port()
        self.reauth_port = free_port()
        self.ssl_port = free_port()
        self.controller_port = free_port()
        self.relay_ports = tuple(relay_ports)
        self.relay_bind_ports = tuple(free_port() for _ in self.relay_ports)
        self.config_path = self.base_dir / "server.properties"
        self.log_path = self.base_dir / "broker.log"
        self._proc: subprocess.Popen[bytes] | None = None

    def __repr__(self) -> str:
        return f"KafkaBroker(Kafka {self.version}, {self.mode}, {self.bootstrap})"

    # -- where it is ----------------------------------------------------------

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def reauth_bootstrap(self) -> str:
        """The listener whose connections must re-authenticate every ``REAUTH_MS``;
        ``ssl_bootstrap``: the SASL_SSL one (SCRAM over TLS, its CA :attr:`ca_path`)."""
        return f"127.0.0.1:{self.reauth_port}"

    ssl_bootstrap = property(lambda self: f"127.0.0.1:{self.ssl_port}")
    #: Where each ``RELAY<n>`` listener is bound: each relay's upstream.
    relay_upstreams = property(lambda self: [f"127.0.0.1:{p}" for p in self.relay_bind_ports])

    @property
    def ca_path(self) -> Path:
        """The PEM certificate clients of :attr:`ssl_bootstrap` trust."""
        return self.base_dir / "tls" / "ca.pem"

    @property
    def kraft(self) -> bool:
        return self.mode == "kraft"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def classpath(self) -> str:
        return str(libs_dir(self.version) / "*")

    # -- Kafka's own tools ------------------------------------------------------

    @property
    def config_command(self) -> str:
        """Kafka's ConfigCommand class: moved to kafka-tools in 4.0 (KAFKA-14589)."""
        return "org.apache.kafka.tools.ConfigCommand" if self.kraft else "kafka.admin.ConfigCommand"

    delegation_token_command = "org.apache.kafka.tools.DelegationTokenCommand"

    def run_class(
        self, main_class: str, *args: str, timeout: float = 120.0
    ) -> subprocess.CompletedProcess[str]:
        """Run one of Kafka's command-line classes with this version's jars."""
        return subprocess.run(
            [
                "java",
                "-Xshare:auto",
                "-XX:TieredStopAtLevel=1",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp",
                self.classpath,
                main_class,
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def client_properties(
        self,
        path: Path,
        user: str = ADMIN_USER,
        password: str = ADMIN_PASSWORD,
        mechanism: str = "SCRAM-SHA-256",
        token: bool = False,
    ) -> Path:
        """A ``--command-config`` file that logs in as ``user`` (or a token)."""
        extra = " tokenauth=true" if token else ""
        path.write_text(
            "security.protocol=SASL_PLAINTEXT\n"
            f"sasl.mechanism={mechanism}\n"
            f'sasl.jaas.config={_SCRAM_JAAS} required username="{user}" '
            f'password="{password}"{extra};\n'
        )
        return path

    # -- users ------------------------------------------------------------------

    def credentials(
        self,
        user: str = ADMIN_USER,
        password: str = ADMIN_PASSWORD,
        mechanism: ScramMechanism = ScramMechanism.SCRAM_SHA_256,
        token_auth: bool = False,
    ) -> SaslCredentials:
        return SaslCredentials(mechanism, user, password, token_auth)

    def connect(
        self, credentials: SaslCredentials | None = None, timeout: float = 10.0
    ) -> KafkaConnection:
        """Our own authenticated connection (admin by default)."""
        return KafkaConnection(self.bootstrap, credentials or self.credentials(), timeout=timeout)

    def add_user(
        self,
        user: str,
        password: str,
        mechanisms: Sequence[ScramMechanism] = MECHANISMS,
        iterations: int = 4096,
    ) -> None:
        """Create or replace SCRAM credentials (KIP-554) and wait until they log in.

        One request per mechanism: a KRaft controller refuses a second
        alteration of the same user in one request, whatever its mechanism
        (DUPLICATE_RESOURCE; ZooKeeper mode only refuses a repeated pair)."""
        with self.connect() as conn:
            admin = RemoteScramAdmin(conn)
            for mechanism in mechanisms:
                upsert = ScramUpsertion.from_password(user, mechanism, password, iterations)
                for result in admin.alter([], [upsert]):
                    if result.error != ErrorCode.NONE:
                        raise RuntimeError(f"broker refused user {user!r}: {result.message}")
        for mechanism in mechanisms:
            self.wait_login(self.credentials(user, password, mechanism))

    def delete_user(self, user: str, mechanisms: Sequence[ScramMechanism] = MECHANISMS) -> None:
        """Delete SCRAM credentials (KIP-554), one request per mechanism as in
        :meth:`add_user`."""
        with self.connect() as conn:
            for mechanism in mechanisms:
                deletion = ScramDeletion(user, mechanism.type_byte)
                for result in RemoteScramAdmin(conn).alter([deletion], []):
                    if result.error != ErrorCode.NONE:
                        raise RuntimeError(f"broker refused to delete {user!r}: {result.message}")

    def wait_login(self, credentials: SaslCredentials, timeout: float = 20.0) -> None:
        """Until ``credentials`` log in: credential changes reach the
        authenticator asynchronously (the metadata log, or ZooKeeper's change
        notifications)."""
        self._wait_for_login(credentials, True, timeout)

    def wait_refused(self, credentials: SaslCredentials, timeout: float = 20.0) -> None:
        """Until ``credentials`` are refused (``SASL_AUTHENTICATION_FAILED``):
        deletions and token expiries reach the authenticator asynchronously
        too."""
        self._wait_for_login(credentials, False, timeout)

    def _wait_for_login(self, credentials: SaslCredentials, accepted: bool, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            error: KafkaConnectionError | None = None
            try:
                with KafkaConnection(self.bootstrap, credentials, timeout=5.0):
                    pass
            except KafkaConnectionError as exc:
                if not accepted and exc.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED:
                    return
                error = exc
            if accepted and error is None:
                return
            if time.monotonic() > deadline:
                if accepted:
                    raise RuntimeError(
                        f"{credentials.username} cannot log in to {self}: {error}"
                    ) from error
                raise RuntimeError(f"{credentials.username} still logs in to {self}: {error}")
            time.sleep(0.1)

    # -- life cycle ---------------------------------------------------------------

    def _properties(self) -> str:
        listeners = [
            f"SASL_PLAINTEXT://127.0.0.1:{self.port}",
            f"REAUTH://127.0.0.1:{self.reauth_port}",
            f"SASL_SSL://127.0.0.1:{self.ssl_port}",
        ]
        protocols = "SASL_PLAINTEXT:SASL_PLAINTEXT,REAUTH:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"
        advertised = list(listeners)
        sasl_listeners = ["sasl_plaintext", "reauth", "sasl_ssl"]
        for i, (relay, bound) in enumerate(
            zip(self.relay_ports, self.relay_bind_ports, strict=True)
        ):
            # Advertised at the relay's port, not the one bound (the relay
            # forwards Metadata unchanged): KafkaConfig checks only that an
            # advertised listener's name is a listener's, and parses the
            # advertised ports with requireDistinctPorts=false.
            listeners.append(f"RELAY{i}://127.0.0.1:{bound}")
            advertised.append(f"RELAY{i}://127.0.0.1:{relay}")
            protocols += f",RELAY{i}:SASL_PLAINTEXT"
            sasl_listeners.append(f"relay{i}")
        keystore = _pkcs12_keystore(self.base_dir / "tls")
        jaas = f'{_SCRAM_JAAS} required username="{ADMIN_USER}" password="{ADMIN_PASSWORD}";'
        super_users = [f"User:{ADMIN_USER}"]
        if self.kraft and not self.allow_everyone:
            # The CONTROLLER listener is PLAINTEXT: the broker registers with the
            # controller as User:ANONYMOUS, which needs ClusterAction.
            super_users.append("User:ANONYMOUS")
        lines = [
            f"advertised.listeners={','.join(advertised)}",
            "inter.broker.listener.name=SASL_PLAINTEXT",
            "sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512",
            "sasl.mechanism.inter.broker.protocol=SCRAM-SHA-256",
            f"super.users={';'.join(super_users)}",
            f"allow.everyone.if.no.acl.found={str(self.allow_everyone).lower()}",
            f"delegation.token.secret.key={SECRET_KEY}",
            "delegation.token.expiry.check.interval.ms=1000",
            f"log.dirs={self.base_dir / 'data'}",
            "num.partitions=1",
            "offsets.topic.replication.factor=1",
            "offsets.topic.num.partitions=4",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "group.initial.rebalance.delay.ms=0",
        ]
        lines += [
            "listener.name.sasl_ssl.ssl.keystore.type=PKCS12",
            f"listener.name.sasl_ssl.ssl.keystore.location={keystore}",
            f"listener.name.sasl_ssl.ssl.keystore.password={_TLS_KEY}",
            f"listener.name.sasl_ssl.ssl.key.password={_TLS_KEY}",
        ]
        for listener in sasl_listeners:
            for mech in ("scram-sha-256", "scram-sha-512"):
                lines.append(f"listener.name.{listener}.{mech}.sasl.jaas.config={jaas}")
        for mech in ("scram-sha-256", "scram-sha-512"):
            lines.append(f"listener.name.reauth.{mech}.connections.max.reauth.ms={REAUTH_MS}")
        if self.kraft:
            listeners.append(f"CONTROLLER://127.0.0.1:{self.controller_port}")
            lines += [
                "process.roles=broker,controller",
                "node.id=1",
                f"controller.quorum.voters=1@127.0.0.1:{self.controller_port}",
                "controller.listener.names=CONTROLLER",
            ]
            protocols += ",CONTROLLER:PLAINTEXT"
            authorizer = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
        else:
            lines += ["broker.id=0", f"zookeeper.connect={self.zookeeper_connect}"]
            authorizer = "kafka.security.authorizer.AclAuthorizer"
        if self.authorizer:
            lines.append(f"authorizer.class.name={authorizer}")
        lines += [f"listeners={','.join(listeners)}", f"listener.security.protocol.map={protocols}"]
        return "\n".join(lines) + "\n"

    def _prepare(self) -> None:
        """Format KRaft storage with the super user, or write it to ZooKeeper."""
        both = [
            f"SCRAM-SHA-256=[password={ADMIN_PASSWORD}]",
            f"SCRAM-SHA-512=[password={ADMIN_PASSWORD}]",
        ]
        if self.kraft:
            cluster_id = _cluster_id()
            args = ["format", "-t", cluster_id, "-c", str(self.config_path)]
            for item in both:
                mech, _, rest = item.partition("=")
                args += ["--add-scram", f"{mech}=[name={ADMIN_USER},{rest[1:]}"]
            result = self.run_class("kafka.tools.StorageTool", *args)
        else:
            assert self.zookeeper_connect is not None
            create_chroot(self.zookeeper_connect)
            result = self.run_class(
                self.config_command,
                "--zookeeper",
                self.zookeeper_connect,
                "--alter",
                "--add-config",
                ",".join(both),
                "--entity-type",
                "users",
                "--entity-name",
                ADMIN_USER,
            )
        if result.returncode != 0:
            raise RuntimeError(f"could not prepare {self}: {result.stdout}{result.stderr}")

    def start(self, timeout: float = 120.0) -> None:
        """Write the configuration, prepare storage, start the JVM and wait
        until the super user logs in with SCRAM."""
        if not is_fetched(self.version):
            raise RuntimeError(
                f"Kafka {self.version} jars not in {libs_dir(self.version)}; run `make brokers`"
            )
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(self._properties())
        self._prepare()
        self._launch(timeout)

    def start_again(self, timeout: float = 120.0) -> None:
        """Start a stopped broker on its ports, storage and users (after
        :meth:`stop`, for an outage of the test's length); returns once the
        super user logs in."""
        self._launch(timeout)

    def restart(self, timeout: float = 120.0) -> None:
        """Stop the JVM (a controlled shutdown) and start it again on the same
        ports, storage and users; returns once the super user logs in again."""
        self.stop()
        self._launch(timeout)

    def _launch(self, timeout: float) -> None:
        with self.log_path.open("ab") as log:
            self._proc = subprocess.Popen(
                [
                    "java",
                    "-Xshare:auto",
                    "-Xms256m",
                    "-Xmx1g",
                    *self.jvm_flags,
                    "-Djava.awt.headless=true",
                    "-Dorg.slf4j.simpleLogger.showDateTime=true",
                    "-cp",
                    self.classpath,
                    "kafka.Kafka",
                    str(self.config_path),
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while True:
            if self._proc.poll() is not None:
                raise RuntimeError(
                    f"{self} exited with {self._proc.returncode}:\n{self.log_tail()}"
                )
            try:
                with KafkaConnection(self.bootstrap, self.credentials(), timeout=5.0):
                    return
            except KafkaConnectionError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(
                        f"{self} did not accept a SCRAM login in {timeout} s:\n{self.log_tail()}"
                    ) from None
                time.sleep(0.25)

    def stop(self, timeout: float = 30.0) -> None:
        """SIGTERM the broker's process group (a controlled shutdown), then SIGKILL."""
        if self._proc is None:
            return
        if self._proc.poll() is None:
            os.killpg(self._proc.pid, signal.SIGTERM)
            try:
                self._proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self._proc.pid, signal.SIGKILL)
                self._proc.wait(timeout=timeout)
        self._proc = None

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no broker log)"
        return "\n".join(text.splitlines()[-lines:])


# -- pytest fixtures ----------------------------------------------------------------


_TLS_KEY = "broker-key-password"


def _pkcs12_keystore(folder: Path) -> Path:
    """The SASL_SSL listener's keystore, for 127.0.0.1, and its CA in ``ca.pem``.

    PKCS#12 with SHA-1/3DES: the JDK's PEM keystore cannot decrypt a PBES2 key
    ("PBES2 SecretKeyFactory not available"), and this is what every JDK reads.
    """
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    folder.mkdir(parents=True, exist_ok=True)
    _, pem = self_signed(folder, ip="127.0.0.1")
    data = pem.read_bytes()
    key = serialization.load_pem_private_key(data, password=None)
    cert = x509.load_pem_x509_certificate(data[data.index(b"-----BEGIN CERTIFICATE") :])
    encryption = (
        serialization.PrivateFormat.PKCS12.encryption_builder()
        .kdf_rounds(2048)
        .key_cert_algorithm(pkcs12.PBES.PBESv1SHA1And3KeyTripleDESCBC)
        .hmac_hash(hashes.SHA1())  # noqa: S303 - what every JDK reads, for a test key
        .build(_TLS_KEY.encode())
    )
    store = folder / "broker.p12"
    store.write_bytes(
        pkcs12.serialize_key_and_certificates(b"broker", key, cert, None, encryption)  # type: ignore[arg-type]
    )
    return store


def _cluster_id() -> str:
    """A random cluster id that does not start with "-": kafka-storage would read it
    as an option (Kafka's own Uuid.randomUuid draws again for the same reason)."""
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not cluster_id.startswith("-"):
            return cluster_id


@pytest.fixture(scope="session")
def kraft_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """Kafka 4.x in KRaft mode, shared by the whole session."""
    broker = KafkaBroker("kraft", tmp_path_factory.mktemp("kafka-kraft"))
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(scope="session")
def strict_kraft_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """Kafka 4.x in KRaft mode with ``allow.everyone.if.no.acl.found=false``: a
    principal holds what its ACLs grant and nothing else (the shared
    ``kraft_broker`` lets everyone do everything on a resource without ACLs,
    the Cluster included)."""
    broker = KafkaBroker("kraft", tmp_path_factory.mktemp("kafka-strict"), allow_everyone=False)
    try:
        broker.start()
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def zookeeper_broker(
    tmp_path_factory: pytest.TempPathFactory, zookeeper_server: ZooKeeperServer
) -> Iterator[KafkaBroker]:
    """Kafka 3.9 in ZooKeeper mode on the session's ZooKeeper (chroot ``/kafka39``)."""
    broker = KafkaBroker(
        "zookeeper",
        tmp_path_factory.mktemp("kafka-zookeeper"),
        zookeeper_connect=f"{zookeeper_server.hosts}/kafka39",
    )
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture(params=["kraft", "zookeeper"], ids=["kafka4-kraft", "kafka39-zookeeper"])
def kafka_broker(request: pytest.FixtureRequest) -> KafkaBroker:
    """Each real broker in turn."""
    broker: KafkaBroker = request.getfixturevalue(f"{request.param}_broker")
    return broker


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failing test that used a broker shows the tail of that broker's log; so
    does any other fixture value with a ``log_tail()`` (a front door's serve)."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if report.failed:
        for value in getattr(item, "funcargs", {}).values():
            if isinstance(value, KafkaBroker) or callable(getattr(value, "log_tail", None)):
                report.sections.append((f"log of {value}", value.log_tail()))
