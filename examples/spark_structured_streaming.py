"""A PySpark streaming query on Kafka that stays logged in with delegation tokens.

The driver logs in once with the user's SCRAM credentials (a Kafka
``client.properties``), and :class:`tokenauth.spark.TokenSupervisor` does the
rest: it creates a delegation token, starts the query with the token's
``kafka.*`` options, renews the token, and before its maximum lifetime creates
a new one, restarts the query from its checkpoint and expires the old one.

The query reads ``--topic`` with Spark's Kafka source, logged in with the
token, into JSON files (``--output``; the file sink is exactly once across
restarts). A Kafka sink takes the same options: ``apply_kafka_options`` on
its ``writeStream.format("kafka")`` writer. Spark's Kafka connector
(``spark-sql-kafka-0-10``) is not part of pyspark: the session loads it with
``spark.jars.packages``, which Spark resolves from Maven Central into its Ivy
cache on first use.

It needs a real Kafka broker with delegation tokens on
(``delegation.token.secret.key``); ``kafka-scram serve`` takes logins and
token requests but holds no topics. Run (in the source tree,
``pip install -e '.[spark]'``; kafka-scram is on no package index)::

    python examples/spark_structured_streaming.py --client-properties client.properties \\
        --topic events --output /tmp/events-out --checkpoint /tmp/events-ckpt --seconds 60
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tokenauth.spark import KafkaOptions
from tokenauth.spark import SupervisorPolicy
from tokenauth.spark import TokenSupervisor
from tokenauth.spark import apply_kafka_options
from tokenauth.spark import client_properties_login

# Spark 4 is built for Scala 2.13 only; the connector's version is Spark's.
CONNECTOR = "org.apache.spark:spark-sql-kafka-0-10_2.13"


def build_query(spark: Any, args: argparse.Namespace, options: KafkaOptions) -> Any:
    """Define and start the query. Called again, with new options, on every rotation.

    The checkpoint location never changes, so each restart resumes where the
    previous run stopped.
    """
    reader = (
        spark.readStream.format("kafka")
        .option("subscribe", args.topic)
        .option("startingOffsets", args.starting_offsets)
    )
    records = apply_kafka_options(reader, options).load()
    return (
        records.selectExpr("CAST(value AS STRING) AS value", "topic", "partition", "offset")
        .writeStream.format("json")
        .option("path", args.output)
        .option("checkpointLocation", args.checkpoint)
        .queryName(args.query_name)
        .trigger(processingTime=f"{args.trigger_ms} milliseconds")
        .start()
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "--client-properties",
        required=True,
        help="the user's SCRAM login, a client.properties file",
    )
    p.add_argument("--bootstrap-servers", help="brokers of the query (default: the login's)")
    p.add_argument("--mechanism", default="SCRAM-SHA-512", help="the query's token mechanism")
    p.add_argument("--topic", required=True, help="the Kafka topic to read")
    p.add_argument("--starting-offsets", default="earliest", help="for a new checkpoint")
    p.add_argument("--output", required=True, help="directory of the JSON file sink")
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--query-name", default="token_supervised")
    p.add_argument("--trigger-ms", type=int, default=500)
    p.add_argument("--seconds", type=float, default=60.0, help="how long to run")
    p.add_argument("--max-lifetime-ms", type=int, default=-1, help="tokens' (-1: broker's)")
    p.add_argument("--renew-ratio", type=float, default=0.75)
    p.add_argument("--rotate-ratio", type=float, default=0.75)
    p.add_argument("--master", default="local[2]")
    p.add_argument("--ivy", help="Spark's Ivy directory for the connector (spark.jars.ivy)")
    return p.parse_args(argv)


def spark_session(args: argparse.Namespace) -> Any:
    """A session with Spark's Kafka connector of the installed Spark's version."""
    import pyspark  # an optional extra: imported when used
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(args.master)
        .appName(args.query_name)
        .config("spark.jars.packages", f"{CONNECTOR}:{pyspark.__version__}")
    )
    if args.ivy:
        builder = builder.config("spark.jars.ivy", args.ivy)
    return builder.getOrCreate()


def main(argv: Sequence[str] | None = None, spark: Any = None) -> TokenSupervisor:
    """Run the supervised query for ``--seconds``, then stop it cleanly.

    Returns:
        The stopped supervisor (its ``history`` shows every transition).
    """
    args = parse_args(argv)  # first: --help needs no pyspark
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if spark is None:
        spark = spark_session(args)

    supervisor = TokenSupervisor(
        client_properties_login(args.client_properties),
        lambda options: build_query(spark, args, options),
        bootstrap_servers=args.bootstrap_servers,
        mechanism=args.mechanism,
        policy=SupervisorPolicy(
            renew_ratio=args.renew_ratio,
            rotate_ratio=args.rotate_ratio,
            max_lifetime_ms=args.max_lifetime_ms,
        ),
    )
    with supervisor.start():
        deadline = time.monotonic() + args.seconds
        while time.monotonic() < deadline and not supervisor.await_termination(timeout=0.5):
            pass
        print(f"supervisor: {supervisor!r}")  # the repr never shows a secret
    print(f"stopped after {supervisor.rotations} rotations and {supervisor.renewals} renewals")
    return supervisor


if __name__ == "__main__":
    from _example import missing_library

    try:
        main()
    except ModuleNotFoundError as exc:
        sys.exit(missing_library(Path(sys.argv[0]).name, exc))
