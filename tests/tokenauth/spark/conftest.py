"""One local SparkSession for every Spark test, with Kafka's client jars on the
driver classpath (Spark's Kafka connector is not installable here, but the
kafka-clients jar is what it would load)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.endpoint_harness import RunningEndpoint, token_extension
from tests.javaharness import jar_dir


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from pyspark.sql import SparkSession

    # Loopback only, no UI, little memory, one core: the machine has two.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    classpath = os.pathsep.join(str(p) for p in sorted(jar_dir().glob("*.jar")))
    session = (
        SparkSession.builder.master("local[1]")
        .appName("tokenauth-spark-tests")
        .config("spark.driver.extraClassPath", classpath)
        .config("spark.driver.memory", "512m")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.log.level", "ERROR")
        .getOrCreate()
    )
    # Stopping a query interrupts its running task, which Spark logs at ERROR.
    session.sparkContext.setLogLevel("FATAL")
    yield session
    session.stop()


@pytest.fixture
def token_endpoint() -> Iterator[tuple[RunningEndpoint, Any]]:
    """An endpoint serving token RPCs with long-lived tokens: ``(endpoint, manager)``."""
    ext, manager = token_extension(("spark-test-secret",))
    endpoint = RunningEndpoint(extensions=[ext])
    try:
        yield endpoint, manager
    finally:
        endpoint.close()
