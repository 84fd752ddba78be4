"""A throwaway ZooKeeper server for tests: Debian's ``zookeeper`` package, run in
the foreground on a free loopback port with its own data directory.

Never the system service. Usable from any test package::

    from tests.support.zookeeper_server import ZooKeeperServer
    with ZooKeeperServer(tmp_path) as zk:
        client = KazooClient(hosts=zk.hosts)

``stop()``/``start()`` (same port, same data) and ``kill()`` (SIGKILL) let
outage tests take the server away and bring it back. A 3-server quorum is
:mod:`tests.support.zookeeper_ensemble` (each member is a ``ZooKeeperServer`` running
``QuorumPeerMain``); a network partition is :mod:`tests.support.tcp_proxy`.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

__all__ = [
    "SECURE_ZOOKEEPER_USERS",
    "ZOOKEEPER_JAR",
    "ZooKeeperServer",
    "four_letter_word",
    "free_port",
    "secure_zookeeper_server",
    "tls_zookeeper_server",
    "zookeeper_available",
]

JAVA_DIR = Path("/usr/share/java")
ZOOKEEPER_JAR = JAVA_DIR / "zookeeper.jar"
# The jars ZooKeeperServerMain needs at run time, as packaged by Debian.
_CLASSPATH_JARS = (
    "zookeeper.jar",
    "zookeeper-jute.jar",
    "slf4j-api.jar",
    "slf4j-simple.jar",
    "netty-buffer.jar",
    "netty-codec.jar",
    "netty-common.jar",
    "netty-handler.jar",
    "netty-resolver.jar",
    "netty-transport.jar",
    "netty-transport-native-epoll.jar",
    "netty-transport-native-unix-common.jar",
    "metrics-core.jar",
    "snappy-java.jar",
    "commons-cli.jar",
    "audience-annotations.jar",
    "jline.jar",
)


def zookeeper_available() -> bool:
    """Whether Debian's ZooKeeper and a JVM are installed."""
    return ZOOKEEPER_JAR.is_file() and shutil.which("java") is not None


def free_port() -> int:
    """A currently free TCP port on 127.0.0.1, below the kernel's ephemeral range.

    Not the kernel's pick (``bind(("127.0.0.1", 0))``): that comes from the
    ephemeral range, where any outgoing connection on a busy machine may take
    it before the server it was drawn for binds it (a ZooKeeper once exited
    with EADDRINUSE so).
    """
    return free_port_base(1) + 1


def _ephemeral_low() -> int:
    """The first port the kernel gives outgoing connections (Linux's default 32768)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port_base(nodes: int = 4) -> int:
    """A port ``base`` such that ``base + 1`` .. ``base + nodes`` are free on
    127.0.0.1 now: a front door's ``upstream.node.port.base``.

    Drawn below the kernel's ephemeral range: there, an outgoing connection
    (serve's own look at the cluster, or another test's on a busy machine)
    could take one of these ports before serve binds it (EADDRINUSE at start).
    """
    low = _ephemeral_low()
    while True:
        base = 10000 + secrets.randbelow(max(low - 10000 - nodes - 1, 1000))
        held: list[socket.socket] = []
        try:
            for port in range(base + 1, base + nodes + 1):
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                held.append(sock)
                sock.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for sock in held:
                sock.close()


def four_letter_word(port: int, word: str = "srvr", timeout: float = 1.0) -> bytes:
    """Send a ZooKeeper four-letter word to 127.0.0.1:port; empty if it does not answer."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(word.encode("ascii"))
            data = b""
            while chunk := sock.recv(4096):
                data += chunk
        return data
    except OSError:
        return b""


class ZooKeeperServer:
    """One standalone ZooKeeper JVM.

    Args:
        base_dir: A directory this server owns (data, config, log).
        port: The client port; a free one by default. It stays the same
            across ``stop()``/``start()``.
        tick_time_ms: ZooKeeper's tickTime; sessions may last 2..20 ticks.
    """

    main_class = "org.apache.zookeeper.server.ZooKeeperServerMain"
    ready_modes: tuple[bytes, ...] = (b"Mode: standalone",)
    max_heap = "-Xmx256m"

    def __init__(
        self,
        base_dir: Path,
        port: int | None = None,
        tick_time_ms: int = 200,
        sasl_users: dict[str, str] | None = None,
        tls: tuple[Path, Path] | None = None,
    ) -> None:
        self.base_dir = Path(base_dir)
        self.port = port if port is not None else free_port()
        self.tick_time_ms = tick_time_ms
        self._proc: subprocess.Popen[bytes] | None = None
        self.base_dir.mkdir(parents=True, exist_ok=True)
        (self.base_dir / "data").mkdir(exist_ok=True)
        self.config_path = self.base_dir / "zoo.cfg"
        self.log_path = self.base_dir / "zookeeper.log"
        self.config_path.write_text(
            f"tickTime={tick_time_ms}\n"
            f"dataDir={self.base_dir / 'data'}\n"
            f"clientPort={self.port}\n"
            "clientPortAddress=127.0.0.1\n"
            "admin.enableServer=false\n"
            "maxClientCnxns=0\n"
            "4lw.commands.whitelist=srvr,stat,ruok,cons,mntr\n"
            # Short sessions make expiry tests fast: 2..20 ticks.
            "minSessionTimeout=400\n"
            "maxSessionTimeout=30000\n"
        )
        self._jvm_flags: list[str] = []
        self.tls_port: int | None = None
        if tls is not None:
            # A TLS port beside the plain one; clients must show a certificate the
            # CA signed, and x509 gives ACLs their identity (the certificate's DN).
            ca, keystore = tls
            self.tls_port = free_port()
            with self.config_path.open("a") as cfg:
                cfg.write(
                    f"secureClientPort={self.tls_port}\n"
                    "secureClientPortAddress=127.0.0.1\n"
                    "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n"
                    f"ssl.keyStore.location={keystore}\nssl.keyStore.type=PEM\n"
                    f"ssl.trustStore.location={ca}\nssl.trustStore.type=PEM\n"
                    "authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider\n"
                )
        if sasl_users:
            # SASL DIGEST-MD5 logins, as a secured Kafka ZooKeeper ensemble has them.
            jaas_path = self.base_dir / "zookeeper-server.jaas"
            users = "".join(f'\n    user_{u}="{p}"' for u, p in sasl_users.items())
            module = "org.apache.zookeeper.server.auth.DigestLoginModule"
            jaas_path.write_text(f"Server {{\n  {module} required{users};\n}};\n")
            with self.config_path.open("a") as cfg:
                cfg.write(
                    "authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider\n"
                )
            self._jvm_flags.append(f"-Djava.security.auth.login.config={jaas_path}")

    @property
    def hosts(self) -> str:
        """The connect string, ``127.0.0.1:<port>``."""
        return f"127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _classpath(self) -> str:
        jars = [str(JAVA_DIR / j) for j in _CLASSPATH_JARS if (JAVA_DIR / j).exists()]
        return os.pathsep.join(jars)

    def start(self, timeout: float = 30.0) -> None:
        """Start the JVM and wait until it answers ``srvr``."""
        if self.running:
            return
        self.launch()
        self.wait_ready(timeout)

    def launch(self) -> None:
        """Start the JVM without waiting (an ensemble's members start together)."""
        if self.running:
            return
        if not zookeeper_available():
            raise RuntimeError(
                f"{ZOOKEEPER_JAR} or java not found; install Debian's zookeeper (make system)"
            )
        log = self.log_path.open("ab")
        self._proc = subprocess.Popen(
            [
                "java",
                "-Xshare:auto",
                self.max_heap,
                "-XX:TieredStopAtLevel=1",
                "-Dzookeeper.admin.enableServer=false",
                *self._jvm_flags,
                "-cp",
                self._classpath(),
                self.main_class,
                str(self.config_path),
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Wait until the server answers ``srvr`` in a serving mode."""
        assert self._proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(
                    f"ZooKeeper exited with {self._proc.returncode}; see {self.log_path}"
                )
            if self._answers():
                return
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"ZooKeeper did not start within {timeout} s; see {self.log_path}")

    def srvr(self) -> bytes:
        """The ``srvr`` four-letter answer, empty if the server does not answer."""
        return four_letter_word(self.port)

    def _answers(self) -> bool:
        data = self.srvr()
        return any(mode in data for mode in self.ready_modes)

    def stop(self, timeout: float = 15.0) -> None:
        """Stop the JVM (SIGTERM, then SIGKILL) and wait until the port is closed."""
        if self._proc is None:
            return
        if self._proc.poll() is None:
            self._proc.send_signal(signal.SIGTERM)
            try:
                self._proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=timeout)
        self._proc = None

    def kill(self) -> None:
        """SIGKILL the JVM, like a crash; data already synced survives."""
        if self._proc is None:
            return
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait(timeout=15)
        self._proc = None

    def restart(self, timeout: float = 30.0) -> None:
        """Stop, then start on the same port with the same data."""
        self.stop()
        self.start(timeout)

    def __enter__(self) -> ZooKeeperServer:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()


# -- pytest fixtures, importable from any conftest ------------------------------
#
#     from tests.support.zookeeper_server import zookeeper_server, zookeeper_hosts

import uuid  # noqa: E402
from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def zookeeper_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperServer]:
    """One ZooKeeper for the whole session; tests isolate themselves with chroots.

    Do not stop this one; use ``dedicated_zookeeper`` for outage tests.
    """
    if not zookeeper_available():
        pytest.fail(f"{ZOOKEEPER_JAR} not found: install Debian's zookeeper (make system)")
    server = ZooKeeperServer(tmp_path_factory.mktemp("zookeeper"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def zookeeper_hosts(zookeeper_server: ZooKeeperServer) -> str:
    """A connect string with a fresh chroot, e.g. ``127.0.0.1:41234/t3f2...``."""
    return f"{zookeeper_server.hosts}/t{uuid.uuid4().hex[:12]}"


@pytest.fixture
def dedicated_zookeeper(tmp_path: Path) -> Iterator[ZooKeeperServer]:
    """A ZooKeeper of this test's own, free to stop, kill and restart."""
    if not zookeeper_available():
        pytest.fail(f"{ZOOKEEPER_JAR} not found: install Debian's zookeeper (make system)")
    server = ZooKeeperServer(tmp_path / "zookeeper")
    server.start()
    yield server
    server.stop()


def expire_session(client: object, hosts: str, timeout: float = 15.0) -> None:
    """Expire a kazoo client's session from the server side and wait for its LOST.

    A second client attaches to the same session and closes it, which is how
    ZooKeeper's own tests force an expiry.
    """
    import threading

    from kazoo.client import KazooClient
    from kazoo.protocol.states import KazooState

    lost = threading.Event()

    def listener(state: str) -> None:
        if state == KazooState.LOST:
            lost.set()

    client.add_listener(listener)  # type: ignore[attr-defined]
    twin = KazooClient(hosts=hosts, client_id=client.client_id)  # type: ignore[attr-defined]
    twin.start(timeout=timeout)
    twin.stop()
    twin.close()
    if not lost.wait(timeout):
        raise AssertionError("the session did not expire")
    client.remove_listener(listener)  # type: ignore[attr-defined]


#: The SASL users of ``secure_zookeeper_server``: the brokers' login and a stranger.
SECURE_ZOOKEEPER_USERS = {"kafka": "kafka-zk-secret", "stranger": "stranger-secret"}


@pytest.fixture(scope="session")
def secure_zookeeper_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ZooKeeperServer]:
    """A ZooKeeper with SASL DIGEST-MD5 logins, as secured Kafka ensembles run it."""
    if not zookeeper_available():
        pytest.fail(f"{ZOOKEEPER_JAR} not found: install Debian's zookeeper (make system)")
    server = ZooKeeperServer(
        tmp_path_factory.mktemp("secure-zookeeper"), sasl_users=SECURE_ZOOKEEPER_USERS
    )
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def tls_zookeeper_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ZooKeeperServer, Path, Path]]:
    """A ZooKeeper with a TLS port that wants client certificates (x509 identities).

    Yields the server, the CA (PEM) and a keystore (PEM key + certificate,
    CN=localhost, also valid for 127.0.0.1) that the CA trusts, for the server
    and for clients alike.
    """
    from tests.support.tls import self_signed

    if not zookeeper_available():
        pytest.fail(f"{ZOOKEEPER_JAR} not found: install Debian's zookeeper (make system)")
    base = tmp_path_factory.mktemp("tls-zookeeper")
    ca, keystore = self_signed(base, "localhost", ip="127.0.0.1")
    server = ZooKeeperServer(base / "zk", tls=(ca, keystore))
    server.start()
    yield server, ca, keystore
    server.stop()


def create_chroot(zookeeper_hosts: str) -> str:
    """Create the chroot of a ``zookeeper_hosts`` connect string (stores create
    their own; a kazoo client given one needs it first), and return the string."""
    from kazoo.client import KazooClient

    hosts, _, chroot = zookeeper_hosts.partition("/")
    setup = KazooClient(hosts=hosts)
    setup.start(timeout=10)
    try:
        setup.ensure_path("/" + chroot)
    finally:
        setup.stop()
        setup.close()
    return zookeeper_hosts
