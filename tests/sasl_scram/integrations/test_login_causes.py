"""A failed login names its cause: a closed port, a KRaft controller, a
listener without SASL or SCRAM, an expired token.

kafka-python said nothing for its 30 s bootstrap timeout and then blamed the
password; aiokafka blamed the password for a controller's IllegalSaslState;
an expired token read like a wrong password. The broker is a real Kafka 4.x in
KRaft mode (``kraft_broker``), whose controller listener is PLAINTEXT; the
clients are the real libraries, run through the examples and, for the causes
the integrations name themselves, called directly.
"""

from __future__ import annotations

import asyncio
import pickle
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import jaas
from sasl_scram.cli import LOGIN_FIXES as CLI_FIXES
from sasl_scram.integrations import LOGIN_FIXES
from sasl_scram.integrations import ListenerError
from sasl_scram.integrations import check_listener
from sasl_scram.integrations import kafka_python
from tests.sasl_scram.endpoint.serve_process import Serve
from tests.sasl_scram.endpoint.serve_process import seed
from tests.support.kafka_broker import ADMIN_PASSWORD
from tests.support.kafka_broker import ADMIN_USER
from tests.support.kafka_broker import KafkaBroker
from tests.support.zookeeper_server import free_port

from .conftest import write_properties
from .real_clients import owner_on
from .test_examples import run as run_example
from .test_fail_fast import LOGINS

#: The clients whose examples log in with SCRAM through our integrations.
EXAMPLES = ["kafka_python_client", "aiokafka_client", "confluent_kafka_client"]
#: Well below any client's bootstrap timeout (kafka-python's is 30 s).
AT_ONCE = 5.0


def properties(
    bootstrap: str, line: str | None = None, mechanism: str = "SCRAM-SHA-256"
) -> dict[str, str]:
    return {
        "bootstrap.servers": bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": mechanism,
        "sasl.jaas.config": line or str(jaas.scram_login_line(ADMIN_USER, ADMIN_PASSWORD)),
    }


def closed_port() -> str:
    """An address where nothing listens: a port bound, then closed."""
    return f"127.0.0.1:{free_port()}"


def run(example: str, path: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    """The example's result and how long it took, start-up included."""
    started = time.monotonic()
    result = run_example(example, path)
    return result, time.monotonic() - started


def error_line(result: subprocess.CompletedProcess[str], example: str, bootstrap: str) -> str:
    """The one error line, after ``connecting to <bootstrap> ...``."""
    assert result.returncode == 1, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines[0] == f"connecting to {bootstrap} ...", result.stderr
    assert len(lines) == 2 and lines[1].startswith(f"{example}.py: error: "), result.stderr
    return lines[1]


def test_one_fix_table_for_commands_and_integrations() -> None:
    assert CLI_FIXES is LOGIN_FIXES


def test_a_closed_port_is_named_at_once() -> None:
    address = closed_port()
    started = time.monotonic()
    with pytest.raises(ListenerError, match=f"connection refused by {address}"):
        check_listener(properties(address))
    assert time.monotonic() - started < AT_ONCE


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES)
def test_example_names_a_closed_port_at_once(tmp_path: Path, example: str) -> None:
    address = closed_port()
    path = write_properties(tmp_path / "client.properties", properties(address))
    result, took = run(example, path)
    error = error_line(result, example, address)
    assert f"connection refused by {address}" in error, error
    assert "password" not in error, error
    # The example's own Python start-up and imports included.
    assert took < 15.0, f"{example} took {took:.1f} s"


def test_the_brokers_sasl_listener_passes(kraft_broker: KafkaBroker) -> None:
    for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        check_listener(properties(kraft_broker.bootstrap, mechanism=mechanism))


def test_a_controller_port_is_named(kraft_broker: KafkaBroker) -> None:
    address = f"127.0.0.1:{kraft_broker.controller_port}"
    with pytest.raises(ListenerError) as info:
        check_listener(properties(address))
    assert f"{address} is a KRaft controller's listener" in str(info.value)
    assert "BrokerRegistration" in str(info.value)


def test_the_first_good_address_wins(kraft_broker: KafkaBroker) -> None:
    check_listener(properties(f"{closed_port()},{kraft_broker.bootstrap}"))


def test_every_bad_address_is_named(kraft_broker: KafkaBroker) -> None:
    refused, controller = closed_port(), f"127.0.0.1:{kraft_broker.controller_port}"
    with pytest.raises(ListenerError) as info:
        check_listener(properties(f"{refused},{controller}"))
    assert f"connection refused by {refused}" in str(info.value)
    assert f"{controller} is a KRaft controller's" in str(info.value)


def test_a_port_that_is_not_kafka_is_named() -> None:
    """A port that accepts but answers no ApiVersions is named, not the password."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        address = f"127.0.0.1:{server.getsockname()[1]}"
        server.settimeout(0.1)  # accepted by the kernel, closed unanswered below
        with pytest.raises(ListenerError, match=f"{address} answered no Kafka ApiVersions"):
            check_listener(properties(address), timeout=0.5)


@pytest.fixture(scope="module")
def sha256_only(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    """A real ``kafka-scram serve`` with SCRAM-SHA-256 only."""
    base = tmp_path_factory.mktemp("sha256-only")
    db = base / "creds.db"
    seed(db)
    with Serve(base, db, {"sasl.enabled.mechanisms": "SCRAM-SHA-256"}) as serve:
        yield serve


def test_a_listener_without_the_mechanism_names_what_it_offers(sha256_only: Serve) -> None:
    check_listener(properties(sha256_only.bootstrap, mechanism="SCRAM-SHA-256"))
    with pytest.raises(ListenerError) as info:
        check_listener(properties(sha256_only.bootstrap, mechanism="SCRAM-SHA-512"))
    assert f"{sha256_only.bootstrap} does not enable SCRAM-SHA-512; it offers SCRAM-SHA-256" in str(
        info.value
    )


def aiokafka_start_fails(props: dict[str, str]) -> Exception:
    """What aiokafka's ``start()`` raises through the integration, within ``AT_ONCE``."""
    started = time.monotonic()
    with pytest.raises(Exception) as info:
        LOGINS["aiokafka"](props)
    assert time.monotonic() - started < AT_ONCE
    return info.value


def test_aiokafka_names_a_controller_port(kraft_broker: KafkaBroker) -> None:
    """aiokafka gets ILLEGAL_SASL_STATE from a controller and said "Unable to
    bootstrap"; the integration asks the port and says what it is."""
    from aiokafka.errors import KafkaConnectionError

    address = f"127.0.0.1:{kraft_broker.controller_port}"
    error = aiokafka_start_fails(properties(address))
    assert isinstance(error, ListenerError), repr(error)
    # Still aiokafka's error for a failed bootstrap, for handlers written for it.
    assert isinstance(error, KafkaConnectionError), repr(error)
    message = str(error)
    assert message.startswith(f"{address} is a KRaft controller's listener"), message
    assert "BrokerRegistration" in message and "put a broker's SASL listener" in message
    assert "password" not in message and ADMIN_PASSWORD not in message, message


def test_aiokafka_names_the_mechanisms_a_listener_offers(sha256_only: Serve) -> None:
    """aiokafka's UnsupportedSaslMechanism is named as check_listener names it."""
    error = aiokafka_start_fails(properties(sha256_only.bootstrap, mechanism="SCRAM-SHA-512"))
    assert isinstance(error, ListenerError), repr(error)
    assert str(error) == (
        f"{sha256_only.bootstrap} does not enable SCRAM-SHA-512; it offers SCRAM-SHA-256; "
        "set sasl.mechanism to one of them, or add SCRAM-SHA-512 to the broker's "
        "sasl.enabled.mechanisms"
    )


def test_aiokafka_names_every_address_it_could_not_use(kraft_broker: KafkaBroker) -> None:
    refused, controller = closed_port(), f"127.0.0.1:{kraft_broker.controller_port}"
    error = aiokafka_start_fails(properties(f"{refused},{controller}"))
    assert isinstance(error, ListenerError), repr(error)
    assert f"connection refused by {refused}" in str(error), error
    assert f"{controller} is a KRaft controller's" in str(error), error


def kafka_python_start_fails(props: dict[str, str], **kwargs: Any) -> Exception:
    """What a kafka-python client's constructor raises through the integration."""
    from kafka import KafkaAdminClient

    started = time.monotonic()
    with pytest.raises(Exception) as info, kafka_python.installed():
        KafkaAdminClient(**kafka_python.client_kwargs(props), **kwargs).close()
    assert time.monotonic() - started < AT_ONCE
    return info.value


def test_kafka_python_names_a_refused_port_at_once() -> None:
    """kafka-python retried a refused port for its whole bootstrap timeout (30 s)."""
    from kafka.errors import KafkaTimeoutError

    first, second = closed_port(), closed_port()
    error = kafka_python_start_fails(properties(f"{first},{second}"))
    assert isinstance(error, ListenerError), repr(error)
    # What kafka-python raised at the end of its timeout, for handlers written for it.
    assert isinstance(error, KafkaTimeoutError), repr(error)
    assert str(error) == "; ".join(
        f"connection refused by {address}: nothing listens there; start the broker or "
        "correct bootstrap.servers"
        for address in (first, second)
    )
    # It crosses processes (multiprocessing, a pytest-xdist worker) as the public class.
    copy = pickle.loads(pickle.dumps(error))  # noqa: S301 - our own bytes
    assert type(copy) is ListenerError and str(copy) == str(error)


def test_kafka_python_goes_on_while_one_address_answers(kraft_broker: KafkaBroker) -> None:
    """One refused address among several is kafka-python's to skip, as before."""
    from kafka import KafkaAdminClient

    with kafka_python.installed():
        kwargs = kafka_python.client_kwargs(properties(f"{closed_port()},{kraft_broker.bootstrap}"))
        KafkaAdminClient(**kwargs).close()


def test_kafka_python_through_a_proxy_is_left_to_kafka_python() -> None:
    """Behind proxy_url the bootstrap address is the proxy's to reach, not ours."""
    from kafka.errors import KafkaTimeoutError

    error = kafka_python_start_fails(
        properties(closed_port()),
        proxy_url=f"socks5://{closed_port()}",
        bootstrap_timeout_ms=1000,
    )
    assert type(error) is KafkaTimeoutError, repr(error)


@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLES)
def test_example_names_a_controller_port(
    kraft_broker: KafkaBroker, tmp_path: Path, example: str
) -> None:
    address = f"127.0.0.1:{kraft_broker.controller_port}"
    path = write_properties(tmp_path / "client.properties", properties(address))
    result, took = run(example, path)
    error = error_line(result, example, address)
    assert "KRaft controller's listener" in error and address in error, error
    assert "password" not in error and ADMIN_PASSWORD not in error, error
    assert took < 15.0, f"{example} took {took:.1f} s"


@pytest.mark.slow
@pytest.mark.parametrize("example", ["kafka_python_client", "aiokafka_client"])
def test_example_hints_that_a_refused_token_may_have_expired(
    kraft_broker: KafkaBroker, tmp_path: Path, example: str
) -> None:
    owner = owner_on(kraft_broker)
    token = owner.create_token()
    owner.expire_token(token)
    props = owner.token_properties(token, "SCRAM-SHA-256")
    path = write_properties(tmp_path / "client.properties", props)
    result, _ = run(example, path)
    error = error_line(result, example, kraft_broker.bootstrap)
    assert "may have expired" in error, error
    assert (
        f"kafka-scram delegation-tokens --describe --bootstrap-server {kraft_broker.bootstrap}"
        in error
    ), error
    assert token.hmac_base64 not in result.stdout + result.stderr


def test_aiokafka_says_a_refused_token_may_have_expired(kraft_broker: KafkaBroker) -> None:
    from aiokafka import AIOKafkaConsumer
    from aiokafka.errors import SaslAuthenticationFailed

    from sasl_scram.integrations import aiokafka as scram_aiokafka

    owner = owner_on(kraft_broker)
    token = owner.create_token()
    owner.expire_token(token)

    async def start() -> None:
        kwargs = scram_aiokafka.client_kwargs(owner.token_properties(token, "SCRAM-SHA-512"))
        consumer = AIOKafkaConsumer(**kwargs)
        try:
            await consumer.start()
        finally:
            await consumer.stop()

    with scram_aiokafka.installed(), pytest.raises(SaslAuthenticationFailed) as refused:
        asyncio.run(start())
    message = str(refused.value)
    assert "invalid credentials" in message and "may have expired" in message, message
    assert f"--bootstrap-server {kraft_broker.bootstrap}" in message, message
    assert token.hmac_base64 not in message


@pytest.mark.slow
def test_example_wrong_password_still_names_the_password(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    line = str(jaas.scram_login_line(ADMIN_USER, "not-the-admin-secret"))
    path = write_properties(
        tmp_path / "client.properties", properties(kraft_broker.bootstrap, line)
    )
    result, _ = run("kafka_python_client", path)
    error = error_line(result, "kafka_python_client", kraft_broker.bootstrap)
    assert (
        "check the username and password in sasl.jaas.config" in error and "expired" not in error
    ), error
    assert "not-the-admin-secret" not in result.stderr
