"""Resolve Spark's Kafka connector into an Ivy cache outside the repository.

Structured Streaming's Kafka source and sink (``format("kafka")``) are not in
pyspark: they are ``org.apache.spark:spark-sql-kafka-0-10_2.13`` on Maven
Central, with its dependencies (kafka-clients, commons-pool2, ...). The tests
load it as users do, through ``spark.jars.packages``: Spark's own Ivy
resolves it into ``~/.cache/kafka-scram/ivy`` (``spark.jars.ivy``;
``$KAFKA_SCRAM_CACHE`` overrides the root). Once there, a session resolves it
from that cache without the network.

    python -m tools.fetch_spark_connector    # `make spark` runs it

It starts (and stops) one local SparkSession with those settings, which is
what makes Spark's Ivy download; a no-op once the connector is cached.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tools.fetch_kafka_broker import cache_root

# Spark 4 is built for Scala 2.13 only; the connector's version is Spark's own.
CONNECTOR = "org.apache.spark:spark-sql-kafka-0-10_2.13"


def connector_package(spark_version: str) -> str:
    """The ``spark.jars.packages`` coordinate for a Spark version."""
    return f"{CONNECTOR}:{spark_version}"


def ivy_dir() -> Path:
    """Spark's Ivy home for the tests (``spark.jars.ivy``): ``cache/`` and ``jars/``."""
    return cache_root() / "ivy"


def connector_conf(spark_version: str) -> dict[str, str]:
    """The SparkSession settings that load the connector from the Ivy cache."""
    return {
        "spark.jars.packages": connector_package(spark_version),
        "spark.jars.ivy": str(ivy_dir()),
    }


def connector_jar(spark_version: str) -> Path:
    """Where Spark's Ivy puts the connector's jar (``<ivy>/jars/<org>_<name>-<rev>.jar``)."""
    group, artifact = CONNECTOR.split(":")
    return ivy_dir() / "jars" / f"{group}_{artifact}-{spark_version}.jar"


def fetch() -> Path:
    """Resolve the connector for the installed pyspark; a no-op once cached."""
    import pyspark
    from pyspark.sql import SparkSession

    version = pyspark.__version__
    jar = connector_jar(version)
    if jar.is_file():
        return jar
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.master("local[1]").appName("fetch-spark-connector")
    for key, value in {**connector_conf(version), "spark.ui.enabled": "false"}.items():
        builder = builder.config(key, value)
    builder.getOrCreate().stop()
    if not jar.is_file():
        raise SystemExit(
            f"fetch_spark_connector: error: Spark's Ivy did not put {jar.name} in {jar.parent}; "
            "is Maven Central reachable?"
        )
    return jar


if __name__ == "__main__":
    print(f"fetch_spark_connector: {fetch()}", file=sys.stderr)
