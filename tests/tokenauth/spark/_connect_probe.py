"""Run by test_connect.py in its own process: our option helpers on real Spark
Connect builders (a local Connect server from pyspark).

It is a separate process because ``SparkSession.builder.remote`` switches the
whole process to Connect mode, and the other Spark tests need a classic session.
It prints one JSON object with what it observed; the test judges it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any


def main() -> None:
    from tests.support.clock import FakeClock
    from tokenauth.spark import JAAS_OPTION
    from tokenauth.spark import JaasConflictError
    from tokenauth.spark import apply_kafka_options
    from tokenauth.spark import existing_option
    from tokenauth.spark import kafka_options

    from .fakes import FakeBroker

    server, spark = local_connect_session()
    token = FakeBroker(FakeClock.epoch_ms()).connect().create_token()
    options = kafka_options(token, "b1:9093", security_protocol="SASL_PLAINTEXT")
    other_login = 'x.LoginModule required username="bob" password="bob-pw";'
    seen: dict[str, Any] = {
        "session": type(spark).__module__,
        "token_id": token.token_id,
        "hmac": token.hmac_base64,
        "login": options[JAAS_OPTION],
    }

    builders: dict[str, Callable[[], Any]] = {
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
    seen["rotation"] = rotation(spark)
    spark.stop()
    server.stop()
    print(json.dumps(seen))


def local_connect_session() -> tuple[Any, Any]:
    """A local Spark Connect server on a free port, and a Connect session on it.

    ``SparkSession.builder.remote("local[1]")`` would do both, but its server
    binds the fixed port 15002 (``spark.connect.grpc.binding.port``), so two
    runs on one machine collide; pyspark only picks a free port under
    ``SPARK_TESTING``, which changes Spark's behaviour elsewhere. So start the
    server the way pyspark does (``SparkConnectPlugin`` on a classic session),
    on port 0, and connect to the port it got.
    """
    from pyspark.sql import SparkSession
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    server = (
        SparkSession.builder.master("local[1]")
        .config("spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin")
        .config("spark.connect.grpc.binding.address", "127.0.0.1")
        .config("spark.connect.grpc.binding.port", "0")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    service = getattr(server._jvm, "org.apache.spark.sql.connect.service.SparkConnectService$")
    port = int(getattr(service, "MODULE$").localPort())
    return server, ConnectSession.builder.remote(f"sc://127.0.0.1:{port}").getOrCreate()


def rotation(spark: Any) -> dict[str, Any]:
    """The token supervisor replacing tokens under a checkpointed Connect query,
    with real token RPCs against our endpoint (short lifetimes, as in
    test_rotation.py)."""
    import tempfile
    from pathlib import Path

    from tests.support.endpoint_harness import ALICE
    from tests.support.endpoint_harness import RunningEndpoint
    from tests.support.endpoint_harness import token_extension
    from tokenauth import DelegationTokenClient
    from tokenauth.spark import TokenSupervisor
    from tokenauth.spark import apply_kafka_options
    from tokenauth.spark import secret_login

    from .test_rotation import EXPIRY_MS
    from .test_rotation import FAST_POLICY
    from .test_rotation import MAX_LIFETIME_MS

    rows_per_batch = 5
    ext, _ = token_extension(
        ("connect-secret",), expiry_time_ms=EXPIRY_MS, max_lifetime_ms=MAX_LIFETIME_MS
    )
    endpoint = RunningEndpoint(extensions=[ext])
    login = secret_login(endpoint.bootstrap, *ALICE, security_protocol="SASL_PLAINTEXT")
    work = Path(tempfile.mkdtemp())
    out, checkpoint = str(work / "out"), str(work / "checkpoint")
    runs: list[dict[str, Any]] = []

    def start_query(options: Any) -> Any:
        source = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows_per_batch)
        reader = apply_kafka_options(source, options)
        writer = apply_kafka_options(
            reader.load()
            .writeStream.format("json")
            .option("path", out)
            .option("checkpointLocation", checkpoint)
            .trigger(processingTime="200 milliseconds"),
            options,
        )
        query = writer.start()
        runs.append({"token_id": options.token_id, "id": str(query.id), "run": str(query.runId)})
        return query

    supervisor = TokenSupervisor(login, start_query, policy=FAST_POLICY)
    try:
        supervisor.start()
        deadline = time.monotonic() + 90
        while supervisor.rotations < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)  # let the last run commit a batch or two
    finally:
        supervisor.stop()
    try:
        with DelegationTokenClient.connect(login) as client:
            live = {t.token_id for t in client.describe_tokens()}
    finally:
        endpoint.close()
    values = sorted(row.value for row in spark.read.json(out).collect())
    committed = sorted(
        int(p.name) for p in (work / "checkpoint" / "commits").iterdir() if p.name.isdigit()
    )
    return {
        "state": supervisor.state.name,
        "rotations": supervisor.rotations,
        "renewals": supervisor.renewals,
        "runs": runs,
        "values": values,
        "rows_per_batch": rows_per_batch,
        "committed": committed,
        "live_tokens": sorted(live),
    }


if __name__ == "__main__":
    main()
