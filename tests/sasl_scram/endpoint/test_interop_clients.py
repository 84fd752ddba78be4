"""Real Kafka clients against the endpoint on loopback, both mechanisms.

Each client: its normal operations succeed; a wrong password and an unknown
user fail with Kafka's generic authentication error; a user deleted through
the admin API cannot open a new connection afterwards.
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import logging
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from sasl_scram import ScramMechanism
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import RemoteScramAdmin
from sasl_scram.admin import SaslCredentials
from sasl_scram.store import ScramDeletion
from tests.support.endpoint_harness import ADMIN
from tests.support.endpoint_harness import ALICE
from tests.support.endpoint_harness import RunningEndpoint
from tests.support.javaharness import JavaHarness
from tests.support.javaharness import b64
from tests.support.javaharness import unb64
from tests.support.kcat import kcat_metadata

MECHS = ["SCRAM-SHA-256", "SCRAM-SHA-512"]
GENERIC = (
    "Authentication failed during authentication due to invalid credentials with SASL mechanism {}"
)
BAD_LOGINS = [("alice", "wrong-password"), ("nobody", "whatever")]
# The same, plus alice after the admin API deleted her (see bad_login).
BAD_LOGINS_AND_DELETED = [*BAD_LOGINS, ("deleted", "alice-secret")]
_ids = itertools.count()


class Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def capture() -> Iterator[Capture]:
    handler = Capture()
    loggers = [logging.getLogger(n) for n in ("kafka", "aiokafka", "ck")]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.DEBUG)
    yield handler
    for lg in loggers:
        lg.removeHandler(handler)


def bad_login(ep: RunningEndpoint, user: str) -> str:
    """The user name a bad-login case uses; for "deleted", alice is deleted first."""
    if user != "deleted":
        return user
    delete_user(ep, "alice")
    return "alice"


def delete_user(ep: RunningEndpoint, user: str) -> None:
    """Through the admin API over the wire (our client), both mechanisms."""
    creds = SaslCredentials(ScramMechanism.from_name("SCRAM-SHA-512"), *ADMIN)
    with KafkaConnection(ep.bootstrap, creds) as conn:
        results = RemoteScramAdmin(conn).alter([ScramDeletion(user, 1), ScramDeletion(user, 2)], [])
    assert [r.error for r in results] == [0]


# -- confluent-kafka (librdkafka 2.16) -------------------------------------------------


def ck_admin(
    ep: RunningEndpoint, mech: str, user: str, password: str, errors: list[str] | None = None
) -> Any:
    from confluent_kafka.admin import AdminClient

    conf: dict[str, Any] = {
        "bootstrap.servers": ep.bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": mech,
        "sasl.username": user,
        "sasl.password": password,
        "logger": logging.getLogger("ck"),
    }
    if errors is not None:
        conf["error_cb"] = lambda e: errors.append(str(e))
    return AdminClient(conf)


@pytest.mark.slow
@pytest.mark.parametrize("mech", MECHS)
def test_confluent_kafka(endpoint: RunningEndpoint, mech: str) -> None:
    from confluent_kafka.admin import ScramCredentialInfo
    from confluent_kafka.admin import ScramMechanism as CkMech
    from confluent_kafka.admin import UserScramCredentialDeletion
    from confluent_kafka.admin import UserScramCredentialUpsertion

    admin = ck_admin(endpoint, mech, *ADMIN)
    md = admin.list_topics(timeout=15)
    assert list(md.brokers) == [1] and md.controller_id == 1 and md.topics == {}
    described = admin.describe_user_scram_credentials(["alice"])["alice"].result(timeout=15)
    assert sorted((i.mechanism.value, i.iterations) for i in described.scram_credential_infos) == [
        (1, 4096),
        (2, 4096),
    ]
    futures = admin.alter_user_scram_credentials(
        [
            UserScramCredentialUpsertion(
                "carol", ScramCredentialInfo(CkMech.SCRAM_SHA_256, 8192), b"carol-pw", b"s" * 24
            )
        ]
    )
    assert futures["carol"].result(timeout=15) is None
    assert ck_admin(endpoint, "SCRAM-SHA-256", "carol", "carol-pw").list_topics(timeout=15).brokers
    futures = admin.alter_user_scram_credentials(
        [UserScramCredentialDeletion("carol", CkMech.SCRAM_SHA_256)]
    )
    assert futures["carol"].result(timeout=15) is None
    errors = ck_login_errors(endpoint, "SCRAM-SHA-256", "carol", "carol-pw")
    assert any(GENERIC.format("SCRAM-SHA-256") in e for e in errors), errors


def ck_login_errors(ep: RunningEndpoint, mech: str, user: str, password: str) -> list[str]:
    """The errors librdkafka reports for a login that must fail."""
    from confluent_kafka import KafkaException

    errors: list[str] = []
    admin = ck_admin(ep, mech, user, password, errors)
    with pytest.raises(KafkaException):
        admin.list_topics(timeout=3)
    admin.poll(0.5)
    return errors


@pytest.mark.slow
@pytest.mark.parametrize("mech", MECHS)
@pytest.mark.parametrize(("user", "password"), BAD_LOGINS)
def test_confluent_kafka_bad_login(
    endpoint: RunningEndpoint, mech: str, user: str, password: str
) -> None:
    errors = ck_login_errors(endpoint, mech, user, password)
    assert any(GENERIC.format(mech) in e and "_AUTHENTICATION" in e for e in errors), errors


# -- kafka-python 3.x ---------------------------------------------------------------------


def kp_kwargs(ep: RunningEndpoint, mech: str, user: str, password: str) -> dict[str, Any]:
    return {
        "bootstrap_servers": ep.bootstrap,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": mech,
        "sasl_plain_username": user,
        "sasl_plain_password": password,
        "request_timeout_ms": 5000,
        # kafka-python retries a failed bootstrap until this runs out.
        "bootstrap_timeout_ms": 3000,
    }


@pytest.mark.parametrize("mech", MECHS)
def test_kafka_python(endpoint: RunningEndpoint, mech: str) -> None:
    from kafka import KafkaAdminClient
    from kafka import KafkaConsumer
    from kafka.admin._users import UserScramCredentialUpsertion as KpUpsertion

    admin = KafkaAdminClient(**kp_kwargs(endpoint, mech, *ADMIN))
    try:
        described = admin.describe_user_scram_credentials()
        assert set(described) == {"admin", "alice"}
        admin.alter_user_scram_credentials([KpUpsertion("dave", "SCRAM-SHA-512", "dave-pw")])
        assert "dave" in admin.describe_user_scram_credentials()
    finally:
        admin.close()
    consumer = KafkaConsumer(**kp_kwargs(endpoint, "SCRAM-SHA-512", "dave", "dave-pw"))
    try:
        assert consumer.topics() == set()
    finally:
        consumer.close()


def kp_login(ep: RunningEndpoint, mech: str, user: str, password: str) -> None:
    from kafka import KafkaAdminClient

    KafkaAdminClient(**kp_kwargs(ep, mech, user, password)).close()


# -- aiokafka 0.14 ------------------------------------------------------------------------


async def aio_bootstrap(ep: RunningEndpoint, mech: str, user: str, password: str) -> Any:
    from aiokafka import AIOKafkaClient

    kwargs = kp_kwargs(ep, mech, user, password)
    del kwargs["bootstrap_timeout_ms"]
    client = AIOKafkaClient(**kwargs)
    try:
        await client.bootstrap()
        return client.cluster.brokers()
    finally:
        await client.close()


@pytest.mark.parametrize("mech", MECHS)
def test_aiokafka_metadata(endpoint: RunningEndpoint, mech: str) -> None:
    brokers = asyncio.run(aio_bootstrap(endpoint, mech, *ALICE))
    assert [(b.nodeId, b.port) for b in brokers] == [(1, endpoint.port)]


def aio_login(ep: RunningEndpoint, mech: str, user: str, password: str) -> None:
    asyncio.run(aio_bootstrap(ep, mech, user, password))


# -- kafka-python and aiokafka: bad logins -----------------------------------------------

# The Python clients' logins and the module of the KafkaError each raises (imported
# when the test runs: the clients are optional).
PYTHON_LOGINS = {
    "kafka-python": (kp_login, "kafka.errors"),
    "aiokafka": (aio_login, "aiokafka.errors"),
}


@pytest.mark.slow
@pytest.mark.parametrize("client", PYTHON_LOGINS)
@pytest.mark.parametrize("mech", MECHS)
@pytest.mark.parametrize(("user", "password"), BAD_LOGINS_AND_DELETED)
def test_python_client_bad_login(
    endpoint: RunningEndpoint, capture: Capture, client: str, mech: str, user: str, password: str
) -> None:
    login, errors = PYTHON_LOGINS[client]
    kafka_error: type[Exception] = importlib.import_module(errors).KafkaError
    user = bad_login(endpoint, user)
    with pytest.raises(kafka_error):
        login(endpoint, mech, user, password)
    assert any(GENERIC.format(mech) in m for m in capture.messages), capture.messages[-5:]


# -- kcat (Debian, librdkafka 2.0.2: repeats the client nonce in client-final) ------------


def kcat(
    ep: RunningEndpoint, mech: str, user: str, password: str, wait_s: int = 5
) -> subprocess.CompletedProcess[str]:
    return kcat_metadata(ep.bootstrap, mech, user, password, wait_s)


@pytest.mark.slow
@pytest.mark.parametrize("mech", MECHS)
def test_kcat_with_old_librdkafka_is_refused_like_kafka(
    endpoint: RunningEndpoint, mech: str
) -> None:
    # librdkafka < 2.6.1 repeats the client nonce in client-final; Kafka compares
    # nonces with equals since CVE-2024-56128 and refuses it, even with a valid proof.
    proc = kcat(endpoint, mech, *ALICE, wait_s=2)
    assert proc.returncode != 0
    assert f"SASL authentication error: {GENERIC.format(mech)}" in proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("mech", MECHS)
@pytest.mark.parametrize(("user", "password"), BAD_LOGINS_AND_DELETED)
def test_kcat_bad_login(endpoint: RunningEndpoint, mech: str, user: str, password: str) -> None:
    user = bad_login(endpoint, user)
    proc = kcat(endpoint, mech, user, password, wait_s=2)
    assert proc.returncode != 0
    assert f"SASL authentication error: {GENERIC.format(mech)}" in proc.stderr


# -- Kafka's own Java clients (kafka-clients 4.3.0) ---------------------------------------


def java_props(ep: RunningEndpoint, mech: str, user: str, password: str) -> str:
    return b64(
        f"bootstrap.servers={ep.bootstrap}\n"
        "security.protocol=SASL_PLAINTEXT\n"
        f"sasl.mechanism={mech}\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{user}" password="{password}";\n'
        "request.timeout.ms=10000\ndefault.api.timeout.ms=15000\n"
        "group.id=g\n"
    )


@pytest.mark.jvm
@pytest.mark.parametrize("mech", MECHS)
def test_java_clients(endpoint: RunningEndpoint, java_clients: JavaHarness, mech: str) -> None:
    aid = f"a{next(_ids)}"
    assert java_clients.call("admin", aid, java_props(endpoint, mech, *ADMIN)) == ["ok"]
    try:
        assert java_clients.call("describeCluster", aid) == [
            "ok",
            "1",
            "1",
            b64("kafka-scram-cluster-00"),
        ]
        status, *users = java_clients.call("describeScram", aid)
        assert status == "ok"
        assert [unb64(u).decode() for u in users] == [
            "admin=SCRAM_SHA_256:4096,SCRAM_SHA_512:4096",
            "alice=SCRAM_SHA_256:4096,SCRAM_SHA_512:4096",
        ]
        status, *results = java_clients.call(
            "alterScram",
            aid,
            "up",
            b64("erin"),
            mech,
            "8192",
            b64("erin-pw"),
            "del",
            b64("alice"),
            "SCRAM-SHA-512",
            "del",
            b64("ghost"),
            "SCRAM-SHA-256",
        )
        assert status == "ok"
        assert [unb64(r).decode() for r in results] == [
            "alice=NONE",
            "erin=NONE",
            "ghost=ResourceNotFoundException: "
            "Attempt to delete a user credential that does not exist",
        ]
        assert java_clients.call(
            "consumerTopics", java_props(endpoint, mech, "erin", "erin-pw")
        ) == ["ok", "0"]
        status, *users = java_clients.call("describeScram", aid, b64("alice,erin"))
        assert [unb64(u).decode() for u in users] == [
            "alice=SCRAM_SHA_256:4096",
            f"erin={mech.replace('-', '_')}:8192",
        ]
    finally:
        java_clients.call("close", aid)


@pytest.mark.jvm
@pytest.mark.parametrize("mech", MECHS)
@pytest.mark.parametrize(("user", "password"), BAD_LOGINS_AND_DELETED)
def test_java_bad_login(
    endpoint: RunningEndpoint, java_clients: JavaHarness, mech: str, user: str, password: str
) -> None:
    user = bad_login(endpoint, user)
    aid = f"a{next(_ids)}"
    java_clients.call("admin", aid, java_props(endpoint, mech, user, password))
    try:
        status, message = java_clients.call("describeCluster", aid)
        assert status == "err"
        assert unb64(message).decode() == f"SaslAuthenticationException: {GENERIC.format(mech)}"
    finally:
        java_clients.call("close", aid)


@pytest.mark.jvm
def test_java_non_super_user_is_refused_admin_rpcs(
    endpoint: RunningEndpoint, java_clients: JavaHarness
) -> None:
    aid = f"a{next(_ids)}"
    java_clients.call("admin", aid, java_props(endpoint, "SCRAM-SHA-256", *ALICE))
    try:
        status, message = java_clients.call("describeScram", aid)
        assert status == "err" and unb64(message).decode().startswith(
            "ClusterAuthorizationException"
        )
        status, *results = java_clients.call(
            "alterScram", aid, "del", b64("admin"), "SCRAM-SHA-256"
        )
        assert [unb64(r).decode().split(":")[0] for r in results] == [
            "admin=ClusterAuthorizationException"
        ]
    finally:
        java_clients.call("close", aid)
