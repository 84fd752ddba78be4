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
(``delegation.token.secret.key``), or ``kafka-scram serve`` as the front door
of one (``upstream.bootstrap.servers``, docs/front-door.md; tokens on at
serve). A serve without a front door takes logins and token requests but
holds no topics: the example says so before Spark starts. Run (in the source tree,
``pip install -e '.[spark]'``; kafka-scram is on no package index)::

    python examples/spark_structured_streaming.py --client-properties client.properties \\
        --topic events --output /tmp/events-out --checkpoint /tmp/events-ckpt --seconds 60

The client properties are read and checked before Spark starts. Any error is
one line ``spark_structured_streaming.py: error: ...``, exit status 2 for a
usage error and 1 for a failure; ``--debug`` adds the traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sasl_scram.integrations import check_holds_topics
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


class SparkStartError(RuntimeError):
    """Spark did not start; the message says what to check."""


def _ratio(text: str) -> float:
    """A fraction strictly between 0 and 1, as :class:`SupervisorPolicy` requires."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be strictly between 0 and 1, got {text}")
    return value


def parse_args(
    argv: Sequence[str] | None, parser: type[argparse.ArgumentParser] = argparse.ArgumentParser
) -> argparse.Namespace:
    """The options; ``parser`` is ``_example.OneLineParser`` when run as a script."""
    p = parser(description=__doc__.split("\n")[0])
    p.add_argument(
        "--client-properties",
        required=True,
        help="the user's SCRAM login, a client.properties file",
    )
    p.add_argument("--bootstrap-servers", help="brokers of the query (default: the login's)")
    p.add_argument(
        "--mechanism",
        default="SCRAM-SHA-512",
        type=str.upper,
        choices=("SCRAM-SHA-256", "SCRAM-SHA-512"),
        help="the query's token mechanism",
    )
    p.add_argument("--topic", required=True, help="the Kafka topic to read")
    p.add_argument("--starting-offsets", default="earliest", help="for a new checkpoint")
    p.add_argument("--output", required=True, help="directory of the JSON file sink")
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--query-name", default="token_supervised")
    p.add_argument("--trigger-ms", type=int, default=500)
    p.add_argument("--seconds", type=float, default=60.0, help="how long to run")
    p.add_argument("--max-lifetime-ms", type=int, default=-1, help="tokens' (-1: broker's)")
    p.add_argument("--renew-ratio", type=_ratio, default=0.75)
    p.add_argument("--rotate-ratio", type=_ratio, default=0.75)
    p.add_argument("--master", default="local[2]")
    p.add_argument("--ivy", help="Spark's Ivy directory for the connector (spark.jars.ivy)")
    p.add_argument("--debug", action="store_true", help="print the traceback of an error")
    return p.parse_args(argv)


def session_builder(args: argparse.Namespace) -> Any:
    """A session builder with Spark's Kafka connector of the installed Spark's version."""
    import pyspark  # an optional extra: imported when used
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(args.master)
        .appName(args.query_name)
        .config("spark.jars.packages", f"{CONNECTOR}:{pyspark.__version__}")
    )
    if args.ivy:
        builder = builder.config("spark.jars.ivy", args.ivy)
    return builder


def start_spark(builder: Any) -> Any:
    """The session, or :class:`SparkStartError` in one line (Spark's own text can be a
    Java stack trace)."""
    try:
        return builder.getOrCreate()
    except Exception as exc:
        lines = str(exc).strip().splitlines()
        raise SparkStartError(
            f"Spark did not start ({lines[0] if lines else type(exc).__name__}); check that a "
            "JDK 17 or later is installed (java on PATH, or JAVA_HOME) and that Maven Central "
            f"is reachable for {CONNECTOR} (or that --ivy holds it)"
        ) from exc


# What Spark logs at ERROR when a stop interrupts a running micro-batch (a
# restart's, when the batch outlasts the supervisor's wait for its end): the
# aborted write job and task; and Hadoop's WARN, with the InterruptedException's
# stack trace, when the interrupt lands while the local file system sets an
# output file's permissions (a forked chmod). The checkpoint re-runs that
# batch, so these lines are not failures; a real failure fails the query, and
# the supervisor reports it (this script's error line).
INTERRUPTED_BATCH_LOGGERS = (
    "org.apache.spark.sql.execution.datasources.FileFormatWriter",
    "org.apache.spark.util.Utils",
    "org.apache.hadoop.util.Shell",
)


def quiet_interrupted_batches(spark: Any) -> None:
    """Keep the lines of an interrupted batch (above) out of the output: its loggers at FATAL."""
    jvm = spark.sparkContext._jvm
    fatal = jvm.org.apache.logging.log4j.Level.FATAL
    for name in INTERRUPTED_BATCH_LOGGERS:
        jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(name, fatal)


def main(argv: Sequence[str] | None = None, spark: Any = None) -> TokenSupervisor:
    """Run the supervised query for ``--seconds``, then stop it cleanly.

    Returns:
        The stopped supervisor (its ``history`` shows every transition).
    """
    return supervise(parse_args(argv), spark)


def supervise(args: argparse.Namespace, spark: Any = None) -> TokenSupervisor:
    """:func:`main` after parsing; starts a session unless given ``spark``."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if not args.debug:
        # py4j logs "Closing down clientserver connection" at INFO when Python
        # exits: after the error line, which must be the last one.
        logging.getLogger("py4j").setLevel(logging.WARNING)
    # pyspark first, as the other examples import their client library first:
    # a missing extra is named before anything else.
    builder = session_builder(args) if spark is None else None
    # The login is read and checked before Spark starts (seconds, and a download
    # of the connector on first use), so that a wrong client.properties is
    # reported at once. The query reads `spark` when the supervisor starts it.
    login = client_properties_login(args.client_properties)
    # A kafka-scram serve without a front door takes the login and creates
    # tokens, then the query would find no topic: say so now.
    check_holds_topics(login, bootstrap_servers=args.bootstrap_servers)
    supervisor = TokenSupervisor(
        login,
        lambda options: build_query(spark, args, options),
        bootstrap_servers=args.bootstrap_servers,
        mechanism=args.mechanism,
        policy=SupervisorPolicy(
            renew_ratio=args.renew_ratio,
            rotate_ratio=args.rotate_ratio,
            max_lifetime_ms=args.max_lifetime_ms,
        ),
    )
    if builder is None:
        run_for(supervisor, args.seconds)
        return supervisor
    spark = start_spark(builder)
    quiet_interrupted_batches(spark)
    try:
        run_for(supervisor, args.seconds)
    finally:
        # Spark stops before an error is printed: its shutdown's lines (and
        # the JVM's) come before the error line, not after it. A failure to
        # stop (a JVM already gone) must not replace the error that ended the run.
        with contextlib.suppress(Exception):
            spark.stop()
    return supervisor


def run_for(supervisor: TokenSupervisor, seconds: float) -> None:
    """Start the supervised query, stop it after ``seconds`` (or when it ends)."""
    with supervisor.start():
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not supervisor.await_termination(timeout=0.5):
            pass
        print(f"supervisor: {supervisor!r}")  # the repr never shows a secret
    print(f"stopped after {supervisor.rotations} rotations and {supervisor.renewals} renewals")


def cli(argv: list[str]) -> int:
    """The script: any error is one line, the traceback with ``--debug`` (``_example.py``)."""
    # Beside this file, _example is importable when it runs as a script, not
    # when a test loads it to call main().
    from _example import ExampleError
    from _example import OneLineParser
    from _example import report_failures

    args = parse_args(argv[1:], OneLineParser)

    def run() -> int:
        if not Path(args.client_properties).is_file():
            # A file that cannot be read is a failure (exit 1), not a usage
            # error: the project's exit-code rule, as for --command-config.
            raise ExampleError(
                f"--client-properties: {args.client_properties} is not a file; "
                "give a client.properties file"
            )
        try:
            supervise(args)
        except SparkStartError as exc:
            raise ExampleError(str(exc)) from exc  # printed as it is: no login hint
        return 0

    return report_failures(Path(argv[0]).name, args.client_properties, args.debug, run)


if __name__ == "__main__":
    sys.exit(cli(sys.argv))
