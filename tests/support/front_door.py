"""What the front-door tests share: the edge user in a store of its own, and the
``upstream.`` keys that log in to a suite broker as its super user.

The suite's shared brokers allow everyone everything on a resource without
ACLs (``allow.everyone.if.no.acl.found``), the Cluster included: every login
there is a cluster administrator, which ``serve`` refuses in
``upstream.identity=service`` mode unless ``upstream.allow.cluster.admin=true``
(tests/frontdoor/test_cluster_admin.py tests that refusal on a broker that
grants only what ACLs say)."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli_process import kafka_scram
from tests.support.kafka_broker import ADMIN_PASSWORD
from tests.support.kafka_broker import ADMIN_USER
from tests.support.zookeeper_server import free_port_base

__all__ = [
    "SCRAM_JAAS",
    "admin_login",
    "edge_store",
    "front_door_keys",
    "python_client_login",
    "upstream_keys",
]

SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule"


def upstream_keys(
    bootstrap: str, password: str = ADMIN_PASSWORD, user: str = ADMIN_USER
) -> dict[str, str]:
    """The ``upstream.`` keys logging in as ``user``, a cluster administrator on the
    shared brokers (the module's docstring)."""
    return {
        "upstream.bootstrap.servers": bootstrap,
        "upstream.allow.cluster.admin": "true",
        "upstream.security.protocol": "SASL_PLAINTEXT",
        "upstream.sasl.mechanism": "SCRAM-SHA-256",
        "upstream.sasl.jaas.config": (
            f'{SCRAM_JAAS} required username="{user}" password="{password}";'
        ),
    }


def front_door_keys(
    tmp_path: Path,
    bootstrap: str,
    user: str = ADMIN_USER,
    password: str = ADMIN_PASSWORD,
    **more: str,
) -> dict[str, str]:
    """serve's keys in front of ``bootstrap``, logged in there as ``user``, with
    :func:`edge_store`'s store and node ports of their own."""
    edge_store(tmp_path)
    return {
        **upstream_keys(bootstrap, password, user),
        "scram.credential.store.path": str(tmp_path / "edge.db"),
        "upstream.node.port.base": str(free_port_base()),
        **more,
    }


def edge_store(tmp_path: Path) -> Path:
    """A store holding only the edge user alice."""
    store = tmp_path / "edge.db"
    result = kafka_scram(
        "configs",
        "--store",
        f"sqlite:{store}",
        "--alter",
        "--add-config",
        "SCRAM-SHA-512=[password=alice-secret]",
        "--entity-type",
        "users",
        "--entity-name",
        "alice",
    )
    assert result.returncode == 0, result.stderr
    return store


def python_client_login(
    bootstrap: str, user: str, password: str, mechanism: str = "SCRAM-SHA-512"
) -> dict[str, str]:
    """The keyword arguments kafka-python and aiokafka log in with, their own SCRAM."""
    return {
        "bootstrap_servers": bootstrap,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": mechanism,
        "sasl_plain_username": user,
        "sasl_plain_password": password,
    }


def admin_login(bootstrap: str) -> dict[str, str]:
    """:func:`python_client_login` as a suite broker's super user."""
    return python_client_login(bootstrap, ADMIN_USER, ADMIN_PASSWORD)
