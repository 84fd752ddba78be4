"""A real Kafka 3.9 broker in ZooKeeper mode and a real ``kafka-scram serve`` on the
same ZooKeeper chroot: the serve process (the session fixture
``zookeeper_broker_serve``; this module is a pytest plugin of ``tests/conftest.py``),
a login that answers with Kafka's error code, and a poll with a deadline that says
how long a change took to reach the other side.

Both sides only meet in ZooKeeper: the broker follows ``/config/changes`` and
``/delegation_token/token_changes`` with its ``ZkNodeChangeNotificationListener``s
and serves from its own caches; ``serve`` follows the same notifications with its
stores. So "it logs in over there" proves the layout and the notifications, not
one side's cache.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import pytest

from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import KafkaConnectionError
from sasl_scram.admin import SaslCredentials
from sasl_scram.kafka import ErrorCode
from tests.support.kafka_broker import ADMIN_USER
from tests.support.kafka_broker import SECRET_KEY
from tests.support.kafka_broker import KafkaBroker
from tests.support.polling import wait_until
from tests.support.serve_process import ServeProcess

__all__ = [
    "PROPAGATION_S",
    "REFUSED",
    "login_error",
    "login_within",
    "serve_beside",
    "within",
    "zookeeper_broker_serve",
]

#: How fast a change made on one side must be seen on the other (the deadline
#: docs/compatibility.md and docs/stores.md report the changes arriving within).
PROPAGATION_S = 2.0
#: What both the broker and serve answer to a refused login (SASL_AUTHENTICATION_FAILED).
REFUSED = int(ErrorCode.SASL_AUTHENTICATION_FAILED)


def serve_beside(broker: KafkaBroker, base_dir: Path) -> ServeProcess:
    """``kafka-scram serve`` (not started) with the broker's ZooKeeper chroot as both
    its credential store and its token store, the broker's token secret, super user
    and expiry sweep interval."""
    assert broker.zookeeper_connect, "the broker is not in ZooKeeper mode"
    return ServeProcess(
        base_dir,
        {
            "zookeeper.connect": broker.zookeeper_connect,
            "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
            "super.users": f"User:{ADMIN_USER}",
            "delegation.token.secret.key": SECRET_KEY,
            "delegation.token.expiry.check.interval.ms": "1000",
        },
        name="serve-beside-kafka39",
    )


@pytest.fixture(scope="session")
def zookeeper_broker_serve(
    zookeeper_broker: KafkaBroker, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServeProcess]:
    """:func:`serve_beside` the session's ``zookeeper_broker``, running."""
    with serve_beside(zookeeper_broker, tmp_path_factory.mktemp("serve-beside")) as proc:
        yield proc


def login_error(bootstrap: str, credentials: SaslCredentials) -> int:
    """0 when ``credentials`` log in at ``bootstrap``, else the Kafka error code of the
    refusal (-1 when there was none: the connection failed)."""
    try:
        KafkaConnection(bootstrap, credentials, timeout=5.0).close()
    except KafkaConnectionError as exc:
        return -1 if exc.error_code is None else exc.error_code
    return 0


def within(limit: float, condition: Callable[[], bool], what: str) -> float:
    """Poll ``condition`` until it holds; fail unless it held within ``limit`` seconds
    of the call. Returns the seconds it took (measured when it first held)."""
    elapsed = wait_until(condition, limit, interval=0.02)
    if elapsed is None:
        raise AssertionError(f"{what}: not within {limit} s")
    assert elapsed <= limit, f"{what}: took {elapsed:.2f} s, more than {limit} s"
    return elapsed


def login_within(
    limit: float, bootstrap: str, credentials: SaslCredentials, expect: int, what: str
) -> float:
    """:func:`within`: ``credentials`` get ``expect`` at ``bootstrap`` (0: they log in;
    :data:`REFUSED`: Kafka's authentication failure). Returns the seconds it took."""
    return within(limit, lambda: login_error(bootstrap, credentials) == expect, what)
