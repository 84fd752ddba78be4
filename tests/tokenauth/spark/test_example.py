"""examples/spark_structured_streaming.py reads a real Kafka topic, rotating tokens.

The example runs in-process on the tests' SparkSession (which has Spark's
Kafka connector), against the KRaft broker: the supervisor logs in as a SCRAM
user from a ``client.properties``, the query reads a topic with 10 s tokens,
and the JSON file sink holds each record of the topic exactly once.
"""

from __future__ import annotations

import collections
import importlib.util
from pathlib import Path
from typing import Any

import pytest

import jaas
from sasl_scram.config import format_properties
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.serve_process import client_properties
from tokenauth.spark import SupervisorState

from .conftest import EDGE_USER
from .example_user import example_user

pytestmark = pytest.mark.jvm

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "spark_structured_streaming.py"
PASSWORD = "example-secret"


@pytest.mark.usefixtures("warm_kafka_connector")
@pytest.mark.parametrize("through", ["broker", "front door"])
def test_example_reads_kafka_and_rotates(
    spark: Any,
    kraft_broker: KafkaBroker,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
    through: str,
) -> None:
    """Unchanged through kafka-scram serve as the front door: the login is the edge
    user's, in serve's store only, and the tokens are serve's own."""
    spec = importlib.util.spec_from_file_location("spark_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)

    user, topic = unique_name("example"), unique_name("example-in")
    props, producer = example_user(kraft_broker, user, PASSWORD, tmp_path)
    if through == "front door":
        serve = request.getfixturevalue("front_door")
        edge_login = client_properties(serve.bootstrap, jaas.scram_login_line(*EDGE_USER))
        props.write_text(format_properties(edge_login))
    produced = [f"event-{i}" for i in range(200)]
    for value in produced:
        producer.produce(topic, value=value.encode())
    assert producer.flush(30) == 0
    del producer

    supervisor = example.main(
        [
            "--client-properties", str(props),
            "--topic", topic,
            "--checkpoint", str(tmp_path / "ckpt"),
            "--output", str(tmp_path / "out"),
            "--seconds", "12",
            "--trigger-ms", "500",
            "--max-lifetime-ms", "10000",
            "--rotate-ratio", "0.6",
        ],
        spark=spark,
    )  # fmt: skip
    assert supervisor.state is SupervisorState.STOPPED
    assert supervisor.rotations >= 1
    out = capsys.readouterr().out
    assert "stopped after" in out and PASSWORD not in out
    rows = spark.read.json(str(tmp_path / "out")).collect()
    assert collections.Counter(r.value for r in rows) == collections.Counter(produced)
    assert {r.topic for r in rows} == {topic}
    # Spark kept no consumer of any run, each logged in with a token now
    # expired: closing one later (at the latest in the JVM's shutdown hook)
    # would log in again, be refused and print ERROR lines and stack traces.
    assert idle_pooled_consumers(spark, topic) == 0


def idle_pooled_consumers(spark: Any, topic: str) -> int:
    """The idle consumers of ``topic`` in Spark's Kafka consumer pool of this JVM.

    The pool is private to Spark's connector (``KafkaDataConsumer``), read
    here by Java reflection.
    """
    jvm = spark.sparkContext._jvm
    loader = jvm.Thread.currentThread().getContextClassLoader()
    owner = loader.loadClass("org.apache.spark.sql.kafka010.consumer.KafkaDataConsumer$")
    field = owner.getDeclaredField("consumerPool")
    field.setAccessible(True)
    pool = field.get(owner.getField("MODULE$").get(None))
    inner_field = loader.loadClass(
        "org.apache.spark.sql.kafka010.consumer.InternalKafkaConsumerPool"
    ).getDeclaredField("pool")
    inner_field.setAccessible(True)
    inner = inner_field.get(pool)
    return sum(
        inner.getNumIdle(key) for key in inner.getKeys() if key.topicPartition().topic() == topic
    )
