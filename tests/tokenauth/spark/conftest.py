"""One local SparkSession for every Spark test, with Spark's Kafka connector.

The connector (``spark-sql-kafka-0-10``, which brings its own kafka-clients)
is loaded as users load it, through ``spark.jars.packages``; Spark's Ivy
resolves it into the cache ``make spark`` filled (tools/fetch_spark_connector.py),
so the session starts without the network.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from collections.abc import Iterator
from typing import Any

import pytest

import jaas
from tests.support.endpoint_harness import RunningEndpoint
from tests.support.endpoint_harness import token_extension
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.serve_process import ServeProcess
from tests.support.zookeeper_server import free_port_base
from tools.fetch_spark_connector import connector_conf

#: The edge user of :func:`front_door`, in serve's store only (the broker does not know it).
EDGE_USER = ("alice", "alice-secret")


@pytest.fixture
def token_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """caplog with tokenauth's INFO lines, where no token's HMAC may appear."""
    caplog.set_level(logging.INFO, logger="tokenauth")
    return caplog


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    import pyspark
    from pyspark.sql import SparkSession

    # Loopback only, no UI, little memory, two cores (the machine has two):
    # the Kafka tests run two streaming queries side by side.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("tokenauth-spark-tests")
        .config("spark.driver.memory", "512m")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.log.level", "ERROR")
    )
    for key, value in connector_conf(pyspark.__version__).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    # Stopping a query interrupts its running task, which Spark logs at ERROR.
    session.sparkContext.setLogLevel("FATAL")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def warm_kafka_connector(spark: Any, kraft_broker: KafkaBroker, tmp_path_factory: Any) -> None:
    """One batch read from Kafka into parquet and one batch write to Kafka,
    logged in as a user: the JVM loads the connector's classes here, not in
    the first start of a token-supervised query, which on a busy machine
    could otherwise outlast the tests' 10 s tokens."""
    user, topic = unique_name("warm-up"), unique_name("warm-up")
    kraft_broker.add_user(user, "warm-up-secret")
    options = {
        "kafka.bootstrap.servers": kraft_broker.bootstrap,
        "kafka.security.protocol": "SASL_PLAINTEXT",
        "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": jaas.scram_login_line(user, "warm-up-secret"),
    }
    rows = spark.createDataFrame([("a",), ("b",)], "value STRING")
    rows.write.format("kafka").options(**options).option("topic", topic).save()
    read = spark.read.format("kafka").options(**options).option("subscribe", topic).load()
    out = str(tmp_path_factory.mktemp("warm-up") / "out")
    read.select("value").write.parquet(out)
    assert spark.read.parquet(out).count() == 2


@pytest.fixture
def cleanup(spark: Any) -> Iterator[list[Callable[[], object]]]:
    """Supervisors, queries and the producer are stopped even when the test
    fails half-way (before the broker stops at the session's end)."""
    steps: list[Callable[[], object]] = []
    yield steps
    for step in reversed(steps):
        step()
    for query in spark.streams.active:
        query.stop()


@pytest.fixture
def token_endpoint() -> Iterator[tuple[RunningEndpoint, Any]]:
    """An endpoint serving token RPCs with long-lived tokens: ``(endpoint, manager)``."""
    ext, manager = token_extension(("spark-test-secret",))
    endpoint = RunningEndpoint(extensions=[ext])
    try:
        yield endpoint, manager
    finally:
        endpoint.close()


@pytest.fixture(scope="session")
def front_door(kraft_broker: KafkaBroker, tmp_path_factory: Any) -> Iterator[ServeProcess]:
    """``kafka-scram serve`` in front of the suite's broker, with :data:`EDGE_USER` in its
    own store and delegation tokens on: tokens created through it are serve's own."""
    from tests.support.front_door import edge_store
    from tests.support.front_door import upstream_keys

    base = tmp_path_factory.mktemp("front-door")
    keys = {
        **upstream_keys(kraft_broker.bootstrap),
        "scram.credential.store.path": str(edge_store(base)),
        "upstream.node.port.base": str(free_port_base()),
        "delegation.token.secret.key": "front-door-token-secret",
    }
    with ServeProcess(base, keys) as serve:
        yield serve
