"""A Spark query through kafka-scram serve as the front door, with the edge's tokens.

The supervisor logs in at serve as the edge user (in serve's store only) and
creates its delegation tokens there: serve answers CreateDelegationToken from
its own token store, and the query's Kafka clients log in at serve with them,
on the bootstrap port and on the node ports serve forwards to the suite's
broker. Through two rotations the parquet file sink holds each record of the
topic exactly once.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sasl_scram.admin import KafkaConnection
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.serve_process import ServeProcess
from tokenauth.spark import SupervisorState
from tokenauth.spark import secret_login

from .conftest import EDGE_USER
from .test_kafka_source import ROTATIONS
from .test_kafka_source import Supervised
from .test_kafka_source import consumed_offset
from .test_kafka_source import parquet_sink
from .test_kafka_source import start_supervised
from .test_kafka_source import token_credentials
from .test_kafka_source import user_producer
from .test_kafka_source import wait_for

pytestmark = pytest.mark.jvm


@pytest.mark.usefixtures("warm_kafka_connector")
def test_a_query_reads_through_the_front_door_with_edge_tokens(
    spark: Any,
    kraft_broker: KafkaBroker,
    front_door: ServeProcess,
    tmp_path: Path,
    token_log: pytest.LogCaptureFixture,
    cleanup: list[Callable[[], object]],
) -> None:
    # The records go in at the broker, as the cluster's other clients write them.
    topic = unique_name("front-door-in")
    producer = user_producer(kraft_broker, unique_name("front-door"), topic, cleanup)

    login = secret_login(front_door.bootstrap, *EDGE_USER, security_protocol="SASL_PLAINTEXT")
    job = Supervised("through_front_door")
    cleanup.append(job.stop)
    start_supervised(spark, front_door.bootstrap, login, job, topic, parquet_sink(tmp_path))
    producer.start()
    wait_for("rotations", lambda: job.sup.rotations >= ROTATIONS, [job], 120)
    # The token is the edge's: serve takes it, the broker never issued it.
    current = token_credentials(job.runs[-1])
    KafkaConnection(front_door.bootstrap, current, timeout=10).close()
    kraft_broker.wait_refused(current, timeout=5.0)
    produced = producer.stop()
    wait_for(
        f"{len(produced)} records through the front door",
        lambda: consumed_offset(job, topic) >= len(produced),
        [job],
        60,
    )
    job.stop()

    assert job.sup.state is SupervisorState.STOPPED, job.sup.history
    assert job.sup.rotations >= ROTATIONS and len(job.runs) == job.sup.rotations + 1
    assert len({r.token_id for r in job.runs}) == len(job.runs)
    assert len({str(r.query.id) for r in job.runs}) == 1
    stored = [row.value for row in spark.read.parquet(str(tmp_path / "out")).collect()]
    assert collections.Counter(stored) == collections.Counter(produced)
    for run in job.runs:
        assert run.hmac not in token_log.text and run.hmac not in front_door.log_text()
