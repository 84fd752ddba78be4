"""The upstream. key family, typed."""

from __future__ import annotations

from pathlib import Path

import pytest

from sasl_scram import ScramConfigError
from sasl_scram.config import KafkaPrincipal
from sasl_scram.config import read_properties
from sasl_scram.endpoint import EndpointConfig
from sasl_scram.frontdoor import UpstreamConfig
from sasl_scram.frontdoor import UpstreamConfigError
from sasl_scram.frontdoor import UpstreamIdentity
from sasl_scram.frontdoor import read_upstream

JAAS = (
    "org.apache.kafka.common.security.scram.ScramLoginModule required "
    'username="svc" password="svc-secret";'
)
SASL = {
    "upstream.bootstrap.servers": "k1:9092, k2:9093",
    "upstream.security.protocol": "SASL_PLAINTEXT",
    "upstream.sasl.mechanism": "SCRAM-SHA-512",
    "upstream.sasl.jaas.config": JAAS,
}


def test_off_without_keys() -> None:
    assert read_upstream({}, 9092) is None


def test_defaults_and_client_properties() -> None:
    config = read_upstream(SASL, 9092)
    assert isinstance(config, UpstreamConfig)
    assert config.bootstrap == (("k1", 9092), ("k2", 9093))
    assert config.identity is UpstreamIdentity.SERVICE
    assert config.node_port_base == 9093
    assert config.client.username == "svc" and config.client.mechanism_name == "SCRAM-SHA-512"
    # Our own client side (the owner tokens' RPCs) reaches the same cluster.
    assert config.client.bootstrap_servers == "k1:9092,k2:9093"
    assert "svc-secret" not in repr(config)


def test_identity_and_port_base() -> None:
    config = read_upstream(
        {**SASL, "upstream.identity": "owner-token", "upstream.node.port.base": " 20000 "}, 9092
    )
    assert config is not None
    assert config.identity is UpstreamIdentity.OWNER_TOKEN
    assert config.node_port_base == 20000
    assert "identity" not in config.client.properties
    assert config.request_timeout_ms == 30000


@pytest.mark.parametrize(
    ("family", "message"),
    [
        (
            {"upstream.security.protocol": "SSL"},
            "upstream.bootstrap.servers: required to use upstream.security.protocol",
        ),
        ({"upstream.bootstrap.servers": "k1"}, "upstream.bootstrap.servers: "),
        (
            {**SASL, "upstream.identity": "user"},
            "upstream.identity: 'user' is not service or owner-token",
        ),
        ({**SASL, "upstream.node.port.base": "x"}, "upstream.node.port.base: expected an integer"),
        ({**SASL, "upstream.node.port.base": "70000"}, "upstream.node.port.base: at most 65535"),
        ({**SASL, "upstream.request.timeout.ms": "0"}, "upstream.request.timeout.ms: must be"),
        (
            {**SASL, "upstream.allow.cluster.admin": "yes"},
            "upstream.allow.cluster.admin: expected true or false, got 'yes'",
        ),
        (
            {**SASL, "upstream.owner.admins": "User:admin,admin"},
            "upstream.owner.admins: 'admin' is not a User principal such as User:admin",
        ),
        (
            {**SASL, "upstream.owner.admins": "Group:ops"},
            "upstream.owner.admins: 'Group:ops' is not a User principal",
        ),
        ({**SASL, "upstream.owner.admins": "User:"}, "upstream.owner.admins: 'User:' is not"),
        ({**SASL, "upstream.sasl.mechanism": "PLAIN"}, "upstream.sasl.mechanism: 'PLAIN'"),
        ({**SASL, "upstream.security.protocol": "TLS"}, "upstream.security.protocol: 'TLS'"),
        (
            {**SASL, "upstream.sasl.jaas.config": JAAS.replace("password", "passwrod")},
            "upstream.sasl.jaas.config: ScramLoginModule ignores option 'passwrod'",
        ),
        (
            {**SASL, "upstream.sasl.jaas.config": JAAS.rstrip(";")},
            "upstream.sasl.jaas.config: <sasl.jaas.config>:1:",
        ),
        (
            {**SASL, "upstream.sasl.jaas.config": 'garbage "svc-secret"'},
            "upstream.sasl.jaas.config: <sasl.jaas.config>:1:9: expected a control flag "
            '(required, requisite, sufficient or optional), got quoted string "********"',
        ),
    ],
)
def test_one_line_errors_name_the_key(family: dict[str, str], message: str) -> None:
    with pytest.raises(UpstreamConfigError) as caught:
        read_upstream(family, 9092)
    text = str(caught.value)
    assert text.startswith(message) and "\n" not in text
    assert "svc-secret" not in text


def test_a_listener_on_the_last_port_needs_a_base() -> None:
    with pytest.raises(UpstreamConfigError, match="is 65536: not a TCP port"):
        read_upstream(SASL, 65535)


def test_the_cluster_administrator_keys_are_typed() -> None:
    """Off and empty by default; neither is a client property."""
    config = read_upstream(SASL, 9092)
    assert config is not None
    assert config.allow_cluster_admin is False and config.owner_admins == frozenset()
    config = read_upstream(
        {
            **SASL,
            "upstream.allow.cluster.admin": " TRUE ",
            "upstream.owner.admins": " User:admin, ,User:ops:team,User:admin ",
        },
        9092,
    )
    assert config is not None and config.allow_cluster_admin is True
    # Split at the first ':' as Kafka's SecurityUtils.parseKafkaPrincipal does.
    assert config.owner_admins == {KafkaPrincipal.user("admin"), KafkaPrincipal.user("ops:team")}
    assert not {"allow.cluster.admin", "owner.admins"} & config.client.properties.keys()


def test_the_timeout_key_is_typed() -> None:
    config = read_upstream({**SASL, "upstream.request.timeout.ms": "1500"}, 9092)
    assert config is not None and config.request_timeout_ms == 1500


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("upstream.identity=user", "upstream.identity: 'user' is not service or owner-token"),
        ("upstream.node.port.base=x", "upstream.node.port.base: expected an integer"),
        ("upstream.request.timeout.ms=-1", "upstream.request.timeout.ms: must be at least 1"),
        ("upstream.sasl.mechanism=FOO", "upstream.sasl.mechanism: 'FOO'"),
    ],
)
def test_errors_in_a_file_name_its_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    """serve reads server.properties with its one reader: each upstream. error
    names the file and the line of the key at fault."""
    bad_key = line.split("=")[0]
    kept = {key: value for key, value in SASL.items() if "jaas" not in key and key != bad_key}
    lines = [f"{key}={value}" for key, value in kept.items()]
    lines.append(f"upstream.sasl.jaas.config={JAAS}")
    lines.insert(2, line)  # line 3 of the file
    path = tmp_path / "server.properties"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(UpstreamConfigError) as caught:
        read_upstream(read_properties(path), 9092)
    assert str(caught.value).startswith(f"{path}:3: {message}"), str(caught.value)


def test_serve_names_the_file_and_line_of_an_upstream_error(tmp_path: Path) -> None:
    path = tmp_path / "server.properties"
    path.write_text(
        "listeners=SASL_PLAINTEXT://127.0.0.1:9092\n"
        f"scram.credential.store.path={tmp_path / 'c.db'}\n"
        "upstream.bootstrap.servers=k1:9092\n"
        "upstream.identity=everyone\n"
    )
    with pytest.raises(ScramConfigError) as caught:
        EndpointConfig.from_properties(read_properties(path))
    assert str(caught.value).startswith(f"{path}:4: upstream.identity: 'everyone'")


@pytest.mark.parametrize(
    ("port", "message"),
    [
        (0, "upstream.node.port.base: required when the listener's port is 0"),
        (65535, "upstream.node.port.base: the default, the listener's port + 1, is 65536"),
    ],
)
def test_a_missing_port_base_names_the_line_that_turns_the_front_door_on(
    tmp_path: Path, port: int, message: str
) -> None:
    """The key at fault is absent: the error names the line of
    upstream.bootstrap.servers, the one that asked for a front door."""
    path = tmp_path / "server.properties"
    path.write_text("# the front door\nupstream.bootstrap.servers=k1:9092\n")
    with pytest.raises(UpstreamConfigError) as caught:
        read_upstream(read_properties(path), port)
    assert str(caught.value).startswith(f"{path}:2: {message}"), str(caught.value)
