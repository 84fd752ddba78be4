"""ZooKeeper over TLS (Kafka's ``zookeeper.ssl.*`` keys), against a real TLS port.

The ensemble wants client certificates and names ACL principals by their
x509 DN, as a Kafka 3.x cluster with ``zookeeper.ssl.client.enable`` and
``zookeeper.set.acl`` has it.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kazoo.security import ACL
from kazoo.security import Id
from kazoo.security import Permissions

from sasl_scram.store import CredentialStoreUnavailable
from sasl_scram.store import ZooKeeperCredentialStore
from sasl_scram.store import ZooKeeperSecurity
from sasl_scram.store import ZooKeeperTls
from tests.sasl_scram.store.test_contract import ok
from tests.sasl_scram.store.test_contract import ups
from tests.support.tls import self_signed
from tests.support.zookeeper_server import ZooKeeperServer

TlsServer = tuple[ZooKeeperServer, Path, Path]
X509_ONLY = [ACL(Permissions.ALL, Id("x509", "CN=localhost"))]


def hosts(server: TlsServer) -> str:
    return f"127.0.0.1:{server[0].tls_port}/t{uuid.uuid4().hex[:12]}"


def tls_props(server: TlsServer, **extra: str) -> dict[str, str]:
    _, ca, keystore = server
    return {
        "zookeeper.ssl.client.enable": "true",
        "zookeeper.clientCnxnSocket": "org.apache.zookeeper.ClientCnxnSocketNetty",
        "zookeeper.ssl.truststore.location": str(ca),
        "zookeeper.ssl.truststore.type": "PEM",
        "zookeeper.ssl.keystore.location": str(keystore),
        "zookeeper.ssl.keystore.type": "PEM",
        **extra,
    }


def test_store_over_tls_with_kafkas_secure_acls(tls_zookeeper_server: TlsServer) -> None:
    tls = ZooKeeperTls.from_properties(tls_props(tls_zookeeper_server))
    assert tls is not None and tls.check_hostname  # HTTPS is Kafka's default
    security = ZooKeeperSecurity(tls=tls)  # the certificate is the login
    where = hosts(tls_zookeeper_server)
    store = ZooKeeperCredentialStore(where, security=security)
    other = ZooKeeperCredentialStore(where, security=security)
    raw = KazooClient(hosts=where, **security.kazoo_options())
    try:
        assert store.alter([], [ups("alice")]) == [ok("alice")]
        raw.start(timeout=10)
        assert list(raw.get_acls("/config/users/alice")[0]) == X509_ONLY
        (change,) = raw.get_children("/config/changes")
        world_read = ACL(Permissions.READ, Id("world", "anyone"))
        assert list(raw.get_acls(f"/config/changes/{change}")[0]) == [*X509_ONLY, world_read]
        assert other.describe(["alice"]).results[0].credentials
    finally:
        raw.stop()
        raw.close()
        store.close()
        other.close()


def test_an_untrusted_server_is_refused(tls_zookeeper_server: TlsServer, tmp_path: Path) -> None:
    stranger_ca, _ = self_signed(tmp_path, "stranger")
    props = tls_props(
        tls_zookeeper_server, **{"zookeeper.ssl.truststore.location": str(stranger_ca)}
    )
    tls = ZooKeeperTls.from_properties(props)
    with pytest.raises(CredentialStoreUnavailable) as info:
        ZooKeeperCredentialStore(
            hosts(tls_zookeeper_server), security=ZooKeeperSecurity(tls=tls), request_timeout=3
        )
    # The TLS reason kazoo only logs reaches the error.
    assert "could not connect to ZooKeeper at" in str(info.value)
    assert "CERTIFICATE_VERIFY_FAILED" in str(info.value)


def test_serve_and_configs_read_kafkas_tls_keys(
    tls_zookeeper_server: TlsServer, tmp_path: Path
) -> None:
    from sasl_scram.endpoint import EndpointConfig
    from tests.sasl_scram.cli.test_configs import run

    where = hosts(tls_zookeeper_server)
    config = EndpointConfig.from_properties(
        {
            "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
            "zookeeper.connect": where,
            "zookeeper.set.acl": "true",
            "zookeeper.ssl.keystore.password": "not-a-real-password",
            **tls_props(tls_zookeeper_server),
        }
    )
    security = config.store.options["security"]
    assert security.tls is not None and security.secure_acls and security.username is None
    assert "not-a-real-password" not in repr(config)

    tls_file = tmp_path / "zk-tls.properties"
    tls_file.write_text("".join(f"{k}={v}\n" for k, v in tls_props(tls_zookeeper_server).items()))
    code, _, err = run(
        "--zookeeper",
        where,
        "--zk-tls-config-file",
        str(tls_file),
        "--alter",
        "--add-config",
        "SCRAM-SHA-256=[password=alice-secret]",
        "--user",
        "alice",
    )
    assert code == 0, err
    raw = KazooClient(hosts=where, **security.kazoo_options())
    raw.start(timeout=10)
    try:
        assert list(raw.get_acls("/config/users/alice")[0]) == X509_ONLY
    finally:
        raw.stop()
        raw.close()

    plain = tmp_path / "plain.properties"
    plain.write_text(f"zookeeper.ssl.truststore.location={tls_zookeeper_server[1]}\n")
    code, _, err = run(
        "--zookeeper", where, "--zk-tls-config-file", str(plain), "--describe", "--user", "alice"
    )
    assert code == 1 and "does not set zookeeper.ssl.client.enable=true" in err


@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"zookeeper.ssl.keystore.type": "JKS"}, "JKS is not supported, only PEM"),
        ({"zookeeper.ssl.truststore.location": "/nonexistent.pem"}, "no such file"),
        ({"zookeeper.ssl.endpoint.identification.algorithm": "LDAPS"}, "expected HTTPS or empty"),
        ({"zookeeper.ssl.client.enable": "yes"}, "expected true or false"),
    ],
)
def test_bad_tls_settings_name_the_key(
    tls_zookeeper_server: TlsServer, props: dict[str, str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        ZooKeeperTls.from_properties(tls_props(tls_zookeeper_server, **props))


def test_tls_options_and_repr() -> None:
    tls = ZooKeeperTls(Path("/ca.pem"), Path("/me.pem"), "key-pw", check_hostname=False)
    assert "key-pw" not in repr(tls) and "key-pw" not in repr(ZooKeeperSecurity(tls=tls))
    assert tls.kazoo_options() == {
        "use_ssl": True,
        "verify_certs": True,
        "check_hostname": False,
        "ca": "/ca.pem",
        "certfile": "/me.pem",
        "keyfile": "/me.pem",
        "keyfile_password": "key-pw",
    }
    assert ZooKeeperTls.from_properties({"zookeeper.ssl.truststore.location": "/x"}) is None
    with pytest.raises(ValueError, match="needs a SASL user, TLS, or both"):
        ZooKeeperSecurity()
