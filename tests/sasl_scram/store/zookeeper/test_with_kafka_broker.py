"""SCRAM users shared, both ways, between a real Kafka 3.9 broker in ZooKeeper mode
and a real ``kafka-scram serve`` on the same chroot.

Users we write (``kafka-scram configs --zookeeper``, the ZooKeeper store's API) log
in to the broker, which reads them through its ``/config/changes`` listener into its
own ``CredentialCache``; users the broker writes (KIP-554, Kafka's own
ConfigCommand) log in to ``serve``, and a deletion there is refused by ``serve``.
Every change must arrive within ``PROPAGATION_S``, polled with a deadline.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sasl_scram import ScramMechanism
from sasl_scram.admin import RemoteScramAdmin
from sasl_scram.kafka import ErrorCode
from sasl_scram.store import ScramDeletion
from sasl_scram.store import ScramUpsertion
from sasl_scram.store import open_store
from sasl_scram.store import sanitize
from tests.support.broker_and_serve import PROPAGATION_S
from tests.support.broker_and_serve import REFUSED
from tests.support.broker_and_serve import login_error
from tests.support.broker_and_serve import login_within
from tests.support.cli_process import kafka_scram
from tests.support.kafka_broker import MECHANISMS
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.serve_process import ServeProcess

SHA256, SHA512 = MECHANISMS


@pytest.fixture
def serve(zookeeper_broker_serve: ServeProcess) -> ServeProcess:
    """The session's serve on the broker's chroot (``tests/support/broker_and_serve.py``)."""
    return zookeeper_broker_serve


def _arrives(broker: KafkaBroker, bootstrap: str, user: str, password: str, where: str) -> None:
    """Both mechanisms log in at ``bootstrap`` within the limit, and a wrong password
    is refused there."""
    for mechanism in MECHANISMS:
        creds = broker.credentials(user, password, mechanism)
        login_within(PROPAGATION_S, bootstrap, creds, 0, f"{user} on {where}")
    wrong = broker.credentials(user, "not-" + password, SHA512)
    assert login_error(bootstrap, wrong) == REFUSED


def _refused(
    broker: KafkaBroker, bootstrap: str, user: str, password: str, mechanism: ScramMechanism
) -> None:
    creds = broker.credentials(user, password, mechanism)
    login_within(
        PROPAGATION_S, bootstrap, creds, REFUSED, f"{user} refused ({mechanism.mechanism_name})"
    )


def _broker_alter(
    broker: KafkaBroker, deletions: list[ScramDeletion], upserts: list[ScramUpsertion]
) -> None:
    """KIP-554 on the broker (as its super user); returns once the broker answered."""
    with broker.connect() as conn:
        results = RemoteScramAdmin(conn).alter(deletions, upserts)
    assert [r.error for r in results] == [ErrorCode.NONE] * len(results), results


# -- ours -> the broker -------------------------------------------------------------


def test_users_written_by_configs_zookeeper_log_in_to_the_broker(
    zookeeper_broker: KafkaBroker,
) -> None:
    # Every character the Sanitizer escapes ('*', ' ', '@') and the two SCRAM
    # escapes ('=', ','), so that the znode name, the notification's entity path
    # and the SCRAM saslname must all agree with Kafka's.
    user = unique_name("ann smith*@corp=x,y")
    password = "configs-zk-secret"
    add = f"SCRAM-SHA-256=[iterations=8192,password={password}],SCRAM-SHA-512=[password={password}]"
    done = kafka_scram(
        "configs",
        "--zookeeper",
        str(zookeeper_broker.zookeeper_connect),
        "--alter",
        "--add-config",
        add,
        "--entity-type",
        "users",
        "--entity-name",
        user,
    )
    assert done.returncode == 0, done.stderr
    assert f"Completed updating config for entity: user-principal '{user}'." in done.stdout
    _arrives(zookeeper_broker, zookeeper_broker.bootstrap, user, password, "the broker")
    # The broker's config listener named the same znode (ZkConfigManager's line).
    override = f"Processing override for entityPath: users/{sanitize(user)} with config"
    assert override in zookeeper_broker.log_path.read_text(errors="replace")


def test_users_written_through_the_store_api_log_in_to_the_broker(
    zookeeper_broker: KafkaBroker,
) -> None:
    user = unique_name("store-api")
    store = open_store(f"zookeeper:{zookeeper_broker.zookeeper_connect}")
    try:
        upserts = [ScramUpsertion.from_password(user, m, "store-secret", 4096) for m in MECHANISMS]
        assert [r.error for r in store.alter([], upserts)] == [ErrorCode.NONE]
        _arrives(zookeeper_broker, zookeeper_broker.bootstrap, user, "store-secret", "the broker")
        # A new password replaces the old one in the broker's cache.
        upserts = [ScramUpsertion.from_password(user, SHA256, "store-secret-2", 8192)]
        assert [r.error for r in store.alter([], upserts)] == [ErrorCode.NONE]
        creds = zookeeper_broker.credentials(user, "store-secret-2", SHA256)
        login_within(PROPAGATION_S, zookeeper_broker.bootstrap, creds, 0, f"{user} changed")
        _refused(zookeeper_broker, zookeeper_broker.bootstrap, user, "store-secret", SHA256)
        # Deleting one mechanism, then the last one (the znode goes): refused by the broker.
        assert [r.error for r in store.alter([ScramDeletion(user, SHA512.type_byte)], [])] == [
            ErrorCode.NONE
        ]
        _refused(zookeeper_broker, zookeeper_broker.bootstrap, user, "store-secret", SHA512)
        creds = zookeeper_broker.credentials(user, "store-secret-2", SHA256)
        assert login_error(zookeeper_broker.bootstrap, creds) == 0
        assert [r.error for r in store.alter([ScramDeletion(user, SHA256.type_byte)], [])] == [
            ErrorCode.NONE
        ]
        _refused(zookeeper_broker, zookeeper_broker.bootstrap, user, "store-secret-2", SHA256)
    finally:
        store.close()


# -- the broker -> serve ------------------------------------------------------------


def test_users_the_broker_writes_with_kip_554_log_in_to_serve(
    zookeeper_broker: KafkaBroker, serve: ServeProcess
) -> None:
    user = unique_name("kip554")
    upserts = [ScramUpsertion.from_password(user, m, "broker-secret", 4096) for m in MECHANISMS]
    _broker_alter(zookeeper_broker, [], upserts)
    _arrives(zookeeper_broker, serve.bootstrap, user, "broker-secret", "serve")
    # A password change on the broker: the new one logs in to serve, the old one not.
    _broker_alter(
        zookeeper_broker, [], [ScramUpsertion.from_password(user, SHA512, "broker-secret-2", 8192)]
    )
    creds = zookeeper_broker.credentials(user, "broker-secret-2", SHA512)
    login_within(PROPAGATION_S, serve.bootstrap, creds, 0, f"{user} changed")
    _refused(zookeeper_broker, serve.bootstrap, user, "broker-secret", SHA512)
    # Deleted on the broker (Kafka keeps the znode with an empty config): refused by serve.
    _broker_alter(zookeeper_broker, [ScramDeletion(user, m.type_byte) for m in MECHANISMS], [])
    _refused(zookeeper_broker, serve.bootstrap, user, "broker-secret", SHA256)
    _refused(zookeeper_broker, serve.bootstrap, user, "broker-secret-2", SHA512)


def test_users_kafkas_config_command_writes_log_in_to_serve(
    zookeeper_broker: KafkaBroker, serve: ServeProcess, tmp_path: Path
) -> None:
    user = unique_name("config-command")
    result = zookeeper_broker.run_class(
        zookeeper_broker.config_command,
        "--bootstrap-server",
        zookeeper_broker.bootstrap,
        "--command-config",
        str(zookeeper_broker.client_properties(tmp_path / "admin.properties")),
        "--alter",
        "--add-config",
        "SCRAM-SHA-256=[password=tool-secret],SCRAM-SHA-512=[password=tool-secret]",
        "--entity-type",
        "users",
        "--entity-name",
        user,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    _arrives(zookeeper_broker, serve.bootstrap, user, "tool-secret", "serve")
