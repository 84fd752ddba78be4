"""Run by test_connect.py in its own process: our option helpers on real Spark
Connect builders (a local Connect server from pyspark).

It is a separate process because ``SparkSession.builder.remote`` switches the
whole process to Connect mode, and the other Spark tests need a classic session.
It prints one JSON object with what it observed; the test judges it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any


def main() -> None:
    from pyspark.sql import SparkSession

    from tokenauth.spark import (
        JAAS_OPTION,
        JaasConflictError,
        apply_kafka_options,
        existing_option,
        kafka_options,
    )

    from .fakes import FakeBroker, FakeClock

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = SparkSession.builder.remote("local[1]").getOrCreate()
    token = FakeBroker(FakeClock()).connect().create_token()
    options = kafka_options(token, "b1:9093", security_protocol="SASL_PLAINTEXT")
    other_login = 'x.LoginModule required username="bob" password="bob-pw";'
    seen: dict[str, Any] = {
        "session": type(spark).__module__,
        "token_id": token.token_id,
        "hmac": token.hmac_base64,
        "login": options[JAAS_OPTION],
    }

    builders = {
        "stream_reader": lambda: spark.readStream.format("rate"),
        "stream_writer": lambda: spark.readStream.format("rate").load().writeStream,
        "reader": lambda: spark.read.format("json"),
        "writer": lambda: spark.range(1).write.format("json"),
    }
    for name, make in builders.items():
        # A login the user set, in other letter case: seen, and never overwritten.
        mine = make().option("KAFKA.Sasl.JAAS.config", other_login)
        entry: dict[str, Any] = {
            "kind": f"{type(mine).__module__}.{type(mine).__name__}",
            "existing": existing_option(mine, JAAS_OPTION),
        }
        try:
            apply_kafka_options(mine, options)
            entry["conflict"] = None
        except JaasConflictError as exc:
            entry["conflict"] = str(exc)
        apply_kafka_options(mine, options, overwrite=True)
        entry["after_overwrite"] = existing_option(mine, JAAS_OPTION)
        clean = apply_kafka_options(make(), options)
        entry["applied"] = {key: existing_option(clean, key) for key in options}
        entry["absent"] = existing_option(make(), JAAS_OPTION)
        seen[name] = entry

    # A streaming query built through the helpers runs on the Connect server.
    reader = apply_kafka_options(
        spark.readStream.format("rate").option("rowsPerSecond", 50), options
    )
    writer = apply_kafka_options(
        reader.load().writeStream.format("memory").queryName("connect_probe"), options
    )
    query = writer.trigger(processingTime="200 milliseconds").start()
    deadline = time.monotonic() + 60
    rows = 0
    while rows == 0 and time.monotonic() < deadline:
        time.sleep(0.5)
        rows = spark.sql("SELECT count(*) AS n FROM connect_probe").collect()[0]["n"]
    seen["rows"] = rows
    seen["progress"] = str(query.recentProgress)
    query.stop()
    spark.stop()
    print(json.dumps(seen))


if __name__ == "__main__":
    sys.exit(main())
