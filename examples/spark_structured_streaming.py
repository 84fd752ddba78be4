"""A PySpark streaming query that stays logged in to Kafka with delegation tokens.

The driver logs in once with the user's SCRAM credentials (a Kafka
``client.properties``), and :class:`tokenauth.spark.TokenSupervisor` does the
rest: it creates a delegation token, starts the query with the token's
``kafka.*`` options, renews the token, and before its maximum lifetime creates
a new one, restarts the query from its checkpoint and expires the old one.

With ``--topic`` the query reads that Kafka topic (needs Spark's Kafka
connector, ``spark-sql-kafka-0-10``). Without it, it reads Spark's
``rate-micro-batch`` source, so the example runs anywhere; the token options
are still set on the reader and the writer, exactly as for Kafka.

Run (in the source tree, ``pip install '.[spark]'``; kafka-scram is on no package index)::

    python examples/spark_structured_streaming.py --client-properties client.properties \\
        --checkpoint /tmp/ckpt --output /tmp/out --seconds 60
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tokenauth.spark import (
    KafkaOptions,
    SupervisorPolicy,
    TokenSupervisor,
    apply_kafka_options,
    client_properties_login,
)


def build_query(spark: Any, args: argparse.Namespace, options: KafkaOptions) -> Any:
    """Define and start the query. Called again, with new options, on every rotation.

    The checkpoint location never changes, so each restart resumes where the
    previous run stopped.
    """
    reader = spark.readStream
    if args.topic:
        reader = reader.format("kafka").option("subscribe", args.topic)
    else:
        reader = reader.format("rate-micro-batch").option("rowsPerBatch", args.rows_per_batch)
    source = apply_kafka_options(reader, options).load()
    writer = (
        source.writeStream.format("json")
        .option("path", args.output)
        .option("checkpointLocation", args.checkpoint)
        .queryName(args.query_name)
        .trigger(processingTime=f"{args.trigger_ms} milliseconds")
    )
    return apply_kafka_options(writer, options).start()


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "--client-properties",
        required=True,
        help="the user's SCRAM login, a client.properties file",
    )
    p.add_argument("--bootstrap-servers", help="brokers of the query (default: the login's)")
    p.add_argument("--mechanism", default="SCRAM-SHA-512")
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--topic", help="Kafka topic to read (needs Spark's Kafka connector)")
    p.add_argument("--query-name", default="token_supervised")
    p.add_argument("--rows-per-batch", type=int, default=10)
    p.add_argument("--trigger-ms", type=int, default=500)
    p.add_argument("--seconds", type=float, default=60.0, help="how long to run")
    p.add_argument("--renew-ratio", type=float, default=0.75)
    p.add_argument("--rotate-ratio", type=float, default=0.75)
    p.add_argument("--master", default="local[1]")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None, spark: Any = None) -> TokenSupervisor:
    """Run the supervised query for ``--seconds``, then stop it cleanly.

    Returns:
        The stopped supervisor (its ``history`` shows every transition).
    """
    args = parse_args(argv)  # first: --help needs no pyspark
    from pyspark.sql import SparkSession  # an optional extra: imported when used

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if spark is None:
        spark = SparkSession.builder.master(args.master).appName(args.query_name).getOrCreate()

    supervisor = TokenSupervisor(
        client_properties_login(args.client_properties),
        lambda options: build_query(spark, args, options),
        bootstrap_servers=args.bootstrap_servers,
        mechanism=args.mechanism,
        policy=SupervisorPolicy(renew_ratio=args.renew_ratio, rotate_ratio=args.rotate_ratio),
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
