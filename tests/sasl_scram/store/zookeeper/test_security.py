"""A secured ZooKeeper (SASL DIGEST-MD5 logins, Kafka's ``zookeeper.set.acl=true``).

The server is real. The ACLs are compared with what Kafka's ``ZkData.defaultAcls``
gives each path.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import AuthFailedError
from kazoo.exceptions import NoAuthError
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import KazooState
from kazoo.protocol.states import KeeperState
from kazoo.security import ACL
from kazoo.security import Id
from kazoo.security import Permissions

from sasl_scram import SCRAM_SHA_256
from sasl_scram import ScramCredential
from sasl_scram.store import CredentialStoreUnavailable
from sasl_scram.store import ZooKeeperCredentialStore
from sasl_scram.store import ZooKeeperSecurity
from sasl_scram.store.zookeeper import ZkSession
from sasl_scram.store.zookeeper._security import SENSITIVE_ROOTS
from sasl_scram.store.zookeeper._session import _KazooLog
from tests.sasl_scram.store.test_contract import SALT
from tests.sasl_scram.store.test_contract import ok
from tests.sasl_scram.store.test_contract import ups
from tests.support.polling import wait_until
from tests.support.zookeeper_server import SECURE_ZOOKEEPER_USERS
from tests.support.zookeeper_server import ZooKeeperServer

BROKER = ZooKeeperSecurity("kafka", SECURE_ZOOKEEPER_USERS["kafka"])
CREATOR_ONLY = [ACL(Permissions.ALL, Id("sasl", "kafka"))]
CREATOR_AND_WORLD_READ = [*CREATOR_ONLY, ACL(Permissions.READ, Id("world", "anyone"))]


@pytest.fixture
def secure_hosts(secure_zookeeper_server: ZooKeeperServer) -> str:
    return f"{secure_zookeeper_server.hosts}/s{uuid.uuid4().hex[:12]}"


def client(hosts: str, security: ZooKeeperSecurity | None = None) -> KazooClient:
    kz = KazooClient(hosts=hosts, **(security.kazoo_options() if security else {}))
    kz.start(timeout=10)
    return kz


@pytest.fixture
def broker_zk(secure_hosts: str) -> Iterator[KazooClient]:
    """Kafka's view: logged in as the brokers' principal."""
    kz = client(secure_hosts, BROKER)
    yield kz
    kz.stop()
    kz.close()


def acls(kz: KazooClient, path: str) -> list[ACL]:
    return list(kz.get_acls(path)[0])


def test_znodes_get_kafkas_secure_acls(secure_hosts: str, broker_zk: KazooClient) -> None:
    store = ZooKeeperCredentialStore(secure_hosts, security=BROKER)
    try:
        assert store.alter([], [ups("alice")]) == [ok("alice")]
        # ZkData.sensitivePath: only the creator, nobody else may read.
        assert acls(broker_zk, "/config/users") == CREATOR_ONLY
        assert acls(broker_zk, "/config/users/alice") == CREATOR_ONLY
        # Everything else: the creator, and world read.
        assert acls(broker_zk, "/config") == CREATOR_AND_WORLD_READ
        assert acls(broker_zk, "/config/changes") == CREATOR_AND_WORLD_READ
        (change,) = broker_zk.get_children("/config/changes")
        assert acls(broker_zk, f"/config/changes/{change}") == CREATOR_AND_WORLD_READ
        # The chroot was created by us too, with the non-sensitive ACL.
        root, chroot = secure_hosts.split("/", 1)
        top = client(root, BROKER)
        try:
            assert acls(top, f"/{chroot}") == CREATOR_AND_WORLD_READ
        finally:
            top.stop()
            top.close()
    finally:
        store.close()


def test_credentials_are_hidden_from_other_principals(
    secure_hosts: str, broker_zk: KazooClient
) -> None:
    store = ZooKeeperCredentialStore(secure_hosts, security=BROKER)
    anonymous = client(secure_hosts)
    stranger = client(secure_hosts, ZooKeeperSecurity("stranger", "stranger-secret"))
    try:
        assert store.alter([], [ups("alice")]) == [ok("alice")]
        for outsider in (anonymous, stranger):
            with pytest.raises(NoAuthError):
                outsider.get("/config/users/alice")
            # Notifications stay readable, as in Kafka (they hold no secret).
            (change,) = outsider.get_children("/config/changes")
            assert b"users/alice" in outsider.get(f"/config/changes/{change}")[0]
    finally:
        for kz in (anonymous, stranger):
            kz.stop()
            kz.close()
        store.close()


def test_a_second_broker_login_reads_and_follows_the_credentials(secure_hosts: str) -> None:
    writer = ZooKeeperCredentialStore(secure_hosts, security=BROKER)
    reader = ZooKeeperCredentialStore(
        secure_hosts, security=ZooKeeperSecurity("kafka", SECURE_ZOOKEEPER_USERS["kafka"])
    )
    try:
        assert writer.alter([], [ups("alice")]) == [ok("alice")]
        assert wait_until(lambda: reader.lookup("alice", SCRAM_SHA_256) is not None) is not None
        found = reader.lookup("alice", SCRAM_SHA_256)
        expected = ScramCredential.from_password(SCRAM_SHA_256, "secret", salt=SALT)
        assert found is not None and found.stored_key == expected.stored_key
    finally:
        writer.close()
        reader.close()


def test_a_store_without_the_login_cannot_read_secured_credentials(
    secure_hosts: str, broker_zk: KazooClient
) -> None:
    writer = ZooKeeperCredentialStore(secure_hosts, security=BROKER)
    assert writer.alter([], [ups("alice")]) == [ok("alice")]
    writer.close()
    # Fails closed, loudly: it never serves a partial view as if it were complete.
    for security in (None, ZooKeeperSecurity("stranger", "stranger-secret")):
        with pytest.raises(CredentialStoreUnavailable) as info:
            ZooKeeperCredentialStore(secure_hosts, security=security)
        assert "denied access" in str(info.value)
        assert "brokers' ZooKeeper principal" in str(info.value)


def test_a_wrong_password_is_a_clear_error(secure_hosts: str) -> None:
    wrong = ZooKeeperSecurity("kafka", "not-the-password")
    with pytest.raises(CredentialStoreUnavailable) as info:
        ZooKeeperCredentialStore(secure_hosts, security=wrong, request_timeout=5)
    assert "rejected the SASL login of 'kafka'" in str(info.value)
    assert "not-the-password" not in str(info.value)


class _RejectedBeforeStartReturns:
    """A kazoo client whose SASL login failed before ``start`` looked.

    kazoo reports the session connected before it sends the SASL login. When
    the refusal comes first, its connection thread logs it and ends (state
    CLOSED), and ``start`` raises its time-out at once.
    """

    hosts = (("127.0.0.1", 2181),)
    state = KazooState.LOST
    client_state = KeeperState.CLOSED

    def __init__(self) -> None:
        self._scram_log = _KazooLog()

    def start(self, timeout: float) -> None:
        self._scram_log.warning("AUTH_FAILED closing: %s", AuthFailedError("Connection dropped"))
        raise KazooTimeoutError("Connection time-out")


def test_a_login_refused_before_start_returns_is_still_named() -> None:
    import kazoo

    session = ZkSession(
        cast(KazooClient, _RejectedBeforeStartReturns()),
        paths=["/config"],
        request_timeout=10,
        session_timeout=18,
        unavailable=CredentialStoreUnavailable,
        kazoo=kazoo,
        logger=logging.getLogger("test"),
        security=ZooKeeperSecurity("kafka", "not-the-password"),
    )
    with pytest.raises(CredentialStoreUnavailable) as info:
        session.start(lambda state: None)
    assert str(info.value) == "ZooKeeper rejected the SASL login of 'kafka'"


def test_open_acls_when_set_acl_is_false(secure_hosts: str, broker_zk: KazooClient) -> None:
    login_only = ZooKeeperSecurity("kafka", SECURE_ZOOKEEPER_USERS["kafka"], secure_acls=False)
    store = ZooKeeperCredentialStore(secure_hosts, security=login_only)
    try:
        assert store.alter([], [ups("alice")]) == [ok("alice")]
        assert acls(broker_zk, "/config/users/alice") == [
            ACL(Permissions.ALL, Id("world", "anyone"))
        ]
    finally:
        store.close()


# -- the login itself, without a server ------------------------------------------------


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "jaas.conf"
    path.write_text(text)
    return path


def test_login_from_a_brokers_jaas_file(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "KafkaServer { org.apache.kafka.common.security.scram.ScramLoginModule required; };\n"
        "Client {\n"
        "  org.apache.zookeeper.server.auth.DigestLoginModule required\n"
        '  username="kafka" password="zk-secret";\n'
        "};\n",
    )
    security = ZooKeeperSecurity.from_jaas_file(path)
    assert (security.username, security.password, security.secure_acls) == (
        "kafka",
        "zk-secret",
        True,
    )
    assert "zk-secret" not in repr(security)
    assert security.kazoo_options()["sasl_options"]["mechanism"] == "DIGEST-MD5"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("KafkaServer { a.B required; };", "no 'Client' section"),
        (
            "Client { com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true; };",
            "only org.apache.zookeeper.server.auth.DigestLoginModule",
        ),
        (
            'Client { org.apache.zookeeper.server.auth.DigestLoginModule required username="k"; };',
            "lacks password",
        ),
        (
            "Client { org.apache.zookeeper.server.auth.DigestLoginModule required;\n"
            "  org.apache.zookeeper.server.auth.DigestLoginModule required; };",
            "has 2 login modules",
        ),
    ],
)
def test_unusable_jaas_client_sections_are_refused(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ZooKeeperSecurity.from_jaas_file(write(tmp_path, text))


def test_sensitive_paths_follow_kafkas_prefix_rule() -> None:
    import kazoo.security

    security = ZooKeeperSecurity("kafka", "x")
    for root in SENSITIVE_ROOTS:
        assert security.acl(root, kazoo.security) == list(kazoo.security.CREATOR_ALL_ACL)
        assert security.acl(f"{root}/child", kazoo.security) == list(kazoo.security.CREATOR_ALL_ACL)
    assert security.acl("/delegation_token/token_changes/x", kazoo.security) == [
        *kazoo.security.CREATOR_ALL_ACL,
        *kazoo.security.READ_ACL_UNSAFE,
    ]
    assert ZooKeeperSecurity("kafka", "x", secure_acls=False).acl("/a", kazoo.security) is None


# -- where the login comes from: KAFKA_OPTS, server properties, the CLI ------------------


def broker_jaas(tmp_path: Path, password: str = SECURE_ZOOKEEPER_USERS["kafka"]) -> Path:
    return write(
        tmp_path,
        "Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n"
        f'  username="kafka" password="{password}";\n}};\n'
        "ZkOther {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n"
        '  username="stranger" password="stranger-secret";\n};\n',
    )


def test_login_from_kafka_opts_as_kafkas_scripts_pass_it(tmp_path: Path) -> None:
    path = broker_jaas(tmp_path)
    opts = f"-Xmx1G '-Djava.security.auth.login.config={path}' -Dfoo=bar"
    security = ZooKeeperSecurity.from_kafka_opts(opts)
    assert security is not None and security.username == "kafka" and security.secure_acls
    other = ZooKeeperSecurity.from_kafka_opts(f"{opts} -Dzookeeper.sasl.clientconfig=ZkOther")
    assert other is not None and other.username == "stranger"
    assert ZooKeeperSecurity.from_kafka_opts(f"{opts} -Dzookeeper.sasl.client=false") is None
    assert ZooKeeperSecurity.from_kafka_opts("-Xmx1G") is None
    assert ZooKeeperSecurity.from_kafka_opts(None) is None


def test_server_properties_follow_kafkas_set_acl_rule(tmp_path: Path) -> None:
    from sasl_scram import ScramConfigError
    from sasl_scram.endpoint import EndpointConfig

    base = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "zookeeper.connect": "127.0.0.1:1"}
    with pytest.raises(ScramConfigError, match=r"zookeeper\.set\.acl is true, but no ZooKeeper"):
        EndpointConfig.from_properties({**base, "zookeeper.set.acl": "true"})
    with pytest.raises(ScramConfigError, match="expected true or false"):
        EndpointConfig.from_properties({**base, "zookeeper.set.acl": "yes"})
    with pytest.raises(ScramConfigError, match="no 'Missing' section"):
        EndpointConfig.from_properties(
            {
                **base,
                "scram.zookeeper.jaas.file": str(broker_jaas(tmp_path)),
                "zookeeper.sasl.clientconfig": "Missing",
            }
        )
    config = EndpointConfig.from_properties(
        {
            **base,
            "scram.zookeeper.jaas.file": str(broker_jaas(tmp_path)),
            "zookeeper.set.acl": "true",
            "zookeeper.session.timeout.ms": "6000",
        }
    )
    options = config.store.options
    assert options["security"] == BROKER
    assert (options["session_timeout"], options["request_timeout"]) == (6.0, 6.0)
    assert SECURE_ZOOKEEPER_USERS["kafka"] not in repr(config)
    login_only = EndpointConfig.from_properties(
        {**base, "scram.zookeeper.jaas.file": str(broker_jaas(tmp_path))}
    ).store.options["security"]
    assert login_only is not None and not login_only.secure_acls


def test_cli_zookeeper_path_logs_in_from_kafka_opts(
    secure_hosts: str, broker_zk: KazooClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.sasl_scram.cli.test_configs import run

    add = ("--alter", "--add-config", "SCRAM-SHA-256=[password=alice-secret]")
    user = ("--entity-type", "users", "--entity-name", "alice")
    # The brokers made the layout, with Kafka's secure ACLs.
    ZooKeeperCredentialStore(secure_hosts, security=BROKER).close()
    monkeypatch.delenv("KAFKA_OPTS", raising=False)
    code, _, err = run("--zookeeper", secure_hosts, *add, *user)
    assert code == 1 and "denied access to an anonymous client" in err
    monkeypatch.setenv(
        "KAFKA_OPTS", f"-Djava.security.auth.login.config={broker_jaas(tmp_path, 'wrong')}"
    )
    code, _, err = run("--zookeeper", secure_hosts, *add, *user)
    assert code == 1 and "rejected the SASL login of 'kafka'" in err
    monkeypatch.setenv("KAFKA_OPTS", f"-Djava.security.auth.login.config={broker_jaas(tmp_path)}")
    code, out, err = run("--zookeeper", secure_hosts, *add, *user)
    assert code == 0, err
    assert acls(broker_zk, "/config/users/alice") == CREATOR_ONLY
    code, out, _ = run("--zookeeper", secure_hosts, "--describe", *user)
    assert code == 0 and "SCRAM-SHA-256" in out


def test_serve_on_a_secured_zookeeper(
    secure_hosts: str, broker_zk: KazooClient, tmp_path: Path
) -> None:
    import signal

    from tests.sasl_scram.endpoint.test_serve_cli import describe_users
    from tests.sasl_scram.endpoint.test_serve_cli import start
    from tests.support.zookeeper_server import free_port

    port = free_port()
    config = tmp_path / "server.properties"
    config.write_text(
        f"listeners=SASL_PLAINTEXT://127.0.0.1:{port}\n"
        f"zookeeper.connect={secure_hosts}\n"
        "zookeeper.set.acl=true\n"
        f"scram.zookeeper.jaas.file={broker_jaas(tmp_path)}\n"
        "super.users=User:admin\n"
        "scram.bootstrap.user=admin\n"
        f"scram.bootstrap.client.properties={tmp_path}/admin.properties\n"
        "delegation.token.secret.key=token-secret\n"
    )
    proc = start(config)
    try:
        assert proc.stdout is not None
        banner = "".join(proc.stdout.readline() for _ in range(3))
        assert "Bootstrap super user 'admin' created" in banner
        # The bootstrap user and the token paths were written with Kafka's secure ACLs.
        assert acls(broker_zk, "/config/users/admin") == CREATOR_ONLY
        assert acls(broker_zk, "/delegation_token/tokens") == CREATOR_ONLY
        code, described = describe_users(port, tmp_path / "admin.properties")
        assert code == 0 and "user-principal 'admin'" in described
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=15)
    assert proc.returncode == 0, stderr
    assert SECURE_ZOOKEEPER_USERS["kafka"] not in stderr
