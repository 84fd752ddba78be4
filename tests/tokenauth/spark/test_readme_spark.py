"""The README's Spark command of "Use it with your existing cluster", run for real.

``tests/test_readme_cluster.py`` runs the section's other blocks against the
KRaft broker and parses this one; here the example runs in-process on the
tests' SparkSession (as in ``test_example.py``) with the README's own
arguments. Only names are mapped: alice's ``client.properties`` to a new
user's, the topic ``events`` to a topic of its own, ``/tmp`` to the test's
folder; and 15 s instead of two minutes, with the broker's longest tokens
(the README asks for no lifetime).
"""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from sasl_scram.integrations import confluent
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.test_readme_cluster import SPARK_EXAMPLE
from tests.test_readme_cluster import cluster_blocks
from tests.test_readme_cluster import load_spark_example
from tests.test_readme_cluster import spark_command
from tokenauth.spark import SupervisorState

pytestmark = pytest.mark.jvm

RECORDS = [f"readme-{i}" for i in range(50)]


@pytest.mark.usefixtures("warm_kafka_connector")
def test_readme_spark_command_reads_the_topic(
    spark: Any, kraft_broker: KafkaBroker, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user, topic = unique_name("readme-alice"), unique_name("readme-events")
    password = f"{user}-secret"
    kraft_broker.add_user(user, password)
    props = tmp_path / "alice.properties"
    kraft_broker.client_properties(props, user, password, "SCRAM-SHA-512")
    props.write_text(f"bootstrap.servers={kraft_broker.bootstrap}\n{props.read_text()}")
    producer = Producer(confluent.client_config(props))  # a user login: librdkafka can
    for value in RECORDS:
        producer.produce(topic, value=value.encode())
    assert producer.flush(30) == 0

    (block,) = [b for b in cluster_blocks() if SPARK_EXAMPLE in b]
    names = {".kafka-scram/cluster/alice.properties": str(props), "events": topic}
    argv = [names.get(w) or w.replace("/tmp/", f"{tmp_path}/") for w in spark_command(block)]
    supervisor = load_spark_example().main([*argv, "--seconds", "15"], spark=spark)

    assert supervisor.state is SupervisorState.STOPPED
    assert supervisor.rotations == 0 and supervisor.history  # one token, the query ran
    out = capsys.readouterr().out
    assert "stopped after 0 rotations" in out and password not in out
    rows = spark.read.json(str(tmp_path / "events-out")).collect()
    assert collections.Counter(r.value for r in rows) == collections.Counter(RECORDS)
    assert {r.topic for r in rows} == {topic}
