"""Spark's Kafka source and sink on a real Kafka, through token rotations.

Spark's own connector (``spark-sql-kafka-0-10``, loaded by
``spark.jars.packages``) reads a topic of Apache Kafka 4.x in KRaft mode in
two queries: one writes a parquet file sink, the other a second topic through
the Kafka sink. Each query has its own :class:`TokenSupervisor`, which creates
delegation tokens on that broker (logged in as an ordinary SCRAM user: Kafka
refuses token requests over token logins) with a ~10 s maximum lifetime, and
before the end of each token's life creates the next one, restarts the query
from its checkpoint with the new ``kafka.sasl.jaas.config`` and expires the
old token. That is the whole of what ``docs/spark.md`` claims, shown here:

- the query keeps its id (the checkpoint's) and gets a new run per token;
- the file sink holds every record produced during the run exactly once;
- the Kafka sink's topic holds every record (at least once, as any restart);
- once the supervisors stop, none of their tokens logs in any more, well
  before the tokens would have lapsed by themselves.

The queries use the broker's re-authenticating listener (KIP-368,
``connections.max.reauth.ms`` = ``REAUTH_MS``, 3 s): every connection logs in
again every 3 s with the token its client was built with. A Kafka client of
the query (the driver's admin, an executor's consumer or producer) still on a
replaced token would fail there once that token is expired, and fail the
query; the queries running on show that every restart moved all their
clients onto the new token.
"""

from __future__ import annotations

import collections
import json
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING
from confluent_kafka import Consumer
from confluent_kafka import Producer
from confluent_kafka import TopicPartition

from sasl_scram import ScramMechanism
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import KafkaConnectionError
from sasl_scram.admin import SaslCredentials
from sasl_scram.config import ClientConfig
from sasl_scram.kafka import ErrorCode
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.tokenauth.spark.fakes import FakeQuery
from tests.tokenauth.spark.fakes import FakeSpark
from tokenauth import DelegationTokenClient
from tokenauth import TokenRequestError
from tokenauth.spark import JAAS_OPTION
from tokenauth.spark import KafkaOptions
from tokenauth.spark import SupervisorPolicy
from tokenauth.spark import SupervisorState
from tokenauth.spark import TokenSupervisor
from tokenauth.spark import apply_kafka_options
from tokenauth.spark import secret_login

pytestmark = pytest.mark.jvm

TOKEN_LIFETIME_MS = 10_000
# Replace each token at 40% of its life: a restart (stop, then start from the
# checkpoint) takes seconds on a busy machine, all of them out of the new
# token's life.
POLICY = SupervisorPolicy(
    rotate_ratio=0.4,
    max_lifetime_ms=TOKEN_LIFETIME_MS,
    initial_backoff_ms=200,
    max_backoff_ms=1_000,
    check_interval_ms=200,
)
TRIGGER = "500 milliseconds"
CREATED = re.compile(r"created token (?P<id>\S+); expires in \d+ ms, max lifetime (?P<max>\d+) ms")
ROTATIONS = 2
PASSWORD = "spark-user-secret"


@dataclass
class Run:
    """One start of a query: the token it logged in with, and the query."""

    token_id: str
    hmac: str = field(repr=False)
    query: Any = None


@dataclass
class Supervised:
    """A supervised query and every run of it."""

    name: str
    runs: list[Run] = field(default_factory=list)
    supervisor: TokenSupervisor | None = None

    @property
    def sup(self) -> TokenSupervisor:
        assert self.supervisor is not None
        return self.supervisor

    def stop(self) -> None:
        if self.supervisor is not None:
            self.supervisor.stop()


def user_config(broker: KafkaBroker, user: str) -> dict[str, Any]:
    """confluent-kafka's login as the test's SCRAM user (data in and out)."""
    return {
        "bootstrap.servers": broker.bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": user,
        "sasl.password": PASSWORD,
    }


class RecordProducer:
    """Produces ``rec-000000``, ``rec-000001``, ... in a thread until stopped;
    idempotent, so a retried send cannot put a record in the topic twice."""

    def __init__(self, config: dict[str, Any], topic: str) -> None:
        self._producer = Producer({**config, "enable.idempotence": True, "linger.ms": 5})
        self._topic = topic
        self.sent: list[str] = []
        self.failed: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="records", daemon=True)

    def flush(self) -> None:
        assert self._producer.flush(30) == 0, "records left unacknowledged"
        assert not self.failed, self.failed[:3]

    def close(self) -> None:
        """Stop producing and drop what is not sent (after a failure)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(10)
        self._producer.purge()
        self._producer.flush(0)
        del self._producer  # librdkafka's handle goes with it, before the broker does

    def send(self, count: int) -> None:
        for _ in range(count):
            value = f"rec-{len(self.sent):06d}"
            self.sent.append(value)
            self._producer.produce(self._topic, value=value.encode(), on_delivery=self._delivered)
        self._producer.poll(0)

    def _delivered(self, err: Any, msg: Any) -> None:
        if err is not None:
            self.failed.append(str(err))

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self.send(5)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> list[str]:
        """Stop, wait for every acknowledgement, return the records produced."""
        self._stop.set()
        self._thread.join(10)
        self.flush()
        return self.sent


def user_producer(
    broker: KafkaBroker, user: str, topic: str, cleanup: list[Callable[[], object]]
) -> RecordProducer:
    """A new SCRAM user's :class:`RecordProducer` on ``topic``, closed at cleanup;
    its first 20 records create the topic before a query subscribes to it."""
    broker.add_user(user, PASSWORD)
    producer = RecordProducer(user_config(broker, user), topic)
    cleanup.append(producer.close)
    producer.send(20)
    producer.flush()
    return producer


def start_supervised(
    spark: Any,
    bootstrap: str,
    login: ClientConfig,
    job: Supervised,
    topic: str,
    sink: Callable[[Any, KafkaOptions], Any],
) -> None:
    """Supervise a query reading ``topic`` at ``bootstrap`` into ``sink(dataframe,
    options)`` (which returns the writer, checkpoint set)."""

    def start_query(options: KafkaOptions) -> Any:
        reader = spark.readStream.format("kafka").option("subscribe", topic)
        reader = apply_kafka_options(reader.option("startingOffsets", "earliest"), options)
        writer = sink(reader.load(), options).queryName(job.name).trigger(processingTime=TRIGGER)
        run = run_of(options)
        job.runs.append(run)
        run.query = writer.start()
        return run.query

    job.supervisor = TokenSupervisor(login, start_query, bootstrap_servers=bootstrap, policy=POLICY)
    job.sup.start()


def parquet_sink(folder: Path) -> Callable[[Any, KafkaOptions], Any]:
    """A parquet file sink in ``folder/out``, its checkpoint in ``folder/chk-files``."""

    def sink(df: Any, options: KafkaOptions) -> Any:
        rows = df.selectExpr("CAST(value AS STRING) AS value", "partition", "offset")
        return (
            rows.writeStream.format("parquet")
            .option("path", str(folder / "out"))
            .option("checkpointLocation", str(folder / "chk-files"))
        )

    return sink


def consumed_offset(job: Supervised, topic: str) -> int:
    """The highest end offset of ``topic`` any run of the query has processed."""
    done = 0
    for run in job.runs:
        for progress in (run.query.recentProgress if run.query is not None else []) or []:
            for source in json.loads(progress.json)["sources"]:
                ends = source.get("endOffset") or {}
                if isinstance(ends, dict) and topic in ends:
                    done = max(done, sum(int(v) for v in ends[topic].values()))
    return done


def wait_for(what: str, ready: Callable[[], bool], jobs: list[Supervised], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        for job in jobs:
            assert job.sup.state is not SupervisorState.FAILED, (job.name, job.sup.history[-8:])
        assert time.monotonic() < deadline, f"timed out waiting for {what}: {jobs}"
        time.sleep(0.2)


def read_topic(config: dict[str, Any], topic: str) -> list[str]:
    """Every record of ``topic``, from the beginning to the high watermark."""
    consumer = Consumer({**config, "group.id": unique_name("reader"), "enable.auto.commit": False})
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        high = {
            p: consumer.get_watermark_offsets(TopicPartition(topic, p), 10)[1] for p in partitions
        }
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        reached = dict.fromkeys(partitions, 0)
        values: list[str] = []
        deadline = time.monotonic() + 60
        while any(reached[p] < high[p] for p in partitions):
            assert time.monotonic() < deadline, f"read {len(values)}: {reached} of {high}"
            msg = consumer.poll(1.0)
            if msg is None or msg.error() is not None:
                continue
            values.append(bytes(msg.value() or b"").decode())
            reached[msg.partition()] = int(msg.offset() or 0) + 1
        return values
    finally:
        consumer.close()


def token_credentials(run: Run) -> SaslCredentials:
    return SaslCredentials(ScramMechanism.SCRAM_SHA_512, run.token_id, run.hmac, token_auth=True)


def natural_ends_ms(records: list[logging.LogRecord]) -> dict[str, float]:
    """Local time at which each token would lapse by itself, from the
    supervisor's log line written as the broker answered CreateDelegationToken."""
    ends = {}
    for record in records:
        found = CREATED.match(record.getMessage())
        if found:
            ends[found["id"]] = record.created * 1000 + int(found["max"])
    return ends


def stop_after_a_rotation(broker: KafkaBroker, job: Supervised, log: Any) -> None:
    """Stop ``job`` just after it replaced its token, so that the last token
    has most of its life left; check that it logged in before the stop (but
    could not ask for tokens) and is refused right after, long before it
    would have lapsed by itself."""
    rotations = job.sup.rotations
    wait_for(
        f"{job.name}'s next rotation",
        lambda: job.sup.rotations > rotations and job.sup.state is SupervisorState.RUNNING,
        [job],
        30,
    )
    last = job.runs[-1]
    with KafkaConnection(broker.bootstrap, token_credentials(last)) as conn:
        # Kafka refuses token requests over a token login: the reason the
        # supervisor logs in as the user.
        with pytest.raises(TokenRequestError) as refused:
            DelegationTokenClient(conn).create_token()
        assert refused.value.error_code == ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    job.sup.stop()
    broker.wait_refused(token_credentials(last), timeout=5.0)
    lapses_at = natural_ends_ms(log.records)[last.token_id]
    assert time.time() * 1000 < lapses_at, f"{job.name}: refused only as the token lapsed"


def run_of(options: KafkaOptions) -> Run:
    """The token a query is started with, from its options."""
    assert options.token_id is not None
    return Run(options.token_id, options[JAAS_OPTION].split('password="')[1].rstrip('";'))


def test_a_query_is_started_only_with_a_token_the_broker_accepts(
    kraft_broker: KafkaBroker,
) -> None:
    # CreateDelegationToken answers once the controller committed the token;
    # brokers learn it from the metadata log a moment later. A query's Kafka
    # clients connect as soon as it starts, and fail for good on a refused
    # login (SaslAuthenticationException is not retried), so the supervisor
    # must hand over a token only once the broker takes it.
    user = unique_name("ready")
    kraft_broker.add_user(user, PASSWORD)
    # A bootstrap broker that is down is skipped by the wait, not waited for.
    login = secret_login(
        f"127.0.0.1:1,{kraft_broker.bootstrap}", user, PASSWORD, security_protocol="SASL_PLAINTEXT"
    )
    spark = FakeSpark()
    logins: list[bool] = []

    def start_query(options: KafkaOptions) -> FakeQuery:
        try:  # what the query's first Kafka client does, at once
            with KafkaConnection(kraft_broker.bootstrap, token_credentials(run_of(options))):
                logins.append(True)
        except KafkaConnectionError:
            logins.append(False)
        return spark.start(options)

    policy = SupervisorPolicy(max_lifetime_ms=2_000, rotate_ratio=0.1, check_interval_ms=50)
    supervisor = TokenSupervisor(login, start_query, policy=policy).start()
    try:
        wait_for(
            "rotations",
            lambda: supervisor.rotations >= 3 or supervisor.state is SupervisorState.FAILED,
            [],
            30,
        )
    finally:
        supervisor.stop()
    assert supervisor.state is SupervisorState.STOPPED, supervisor.last_error
    assert len(logins) >= 4 and all(logins), logins


@pytest.mark.usefixtures("warm_kafka_connector")
def test_kafka_source_and_sinks_across_token_rotations(
    spark: Any,
    kraft_broker: KafkaBroker,
    tmp_path: Path,
    token_log: pytest.LogCaptureFixture,
    cleanup: list[Callable[[], object]],
) -> None:
    user = unique_name("spark")
    topic_in, topic_out = unique_name("spark-in"), unique_name("spark-out")
    producer = user_producer(kraft_broker, user, topic_in, cleanup)
    data = user_config(kraft_broker, user)
    login = secret_login(kraft_broker.bootstrap, user, PASSWORD, security_protocol="SASL_PLAINTEXT")

    def kafka_sink(df: Any, options: KafkaOptions) -> Any:
        writer = (
            df.select("value")
            .writeStream.format("kafka")
            .option("topic", topic_out)
            .option("checkpointLocation", str(tmp_path / "chk-kafka"))
        )
        return apply_kafka_options(writer, options)

    files, kafka = Supervised("to_files"), Supervised("to_kafka")
    cleanup += [files.stop, kafka.stop]
    # The re-authenticating listener (the module's docstring).
    start_supervised(
        spark, kraft_broker.reauth_bootstrap, login, files, topic_in, parquet_sink(tmp_path)
    )
    start_supervised(spark, kraft_broker.reauth_bootstrap, login, kafka, topic_in, kafka_sink)
    producer.start()
    jobs = [files, kafka]
    wait_for("rotations", lambda: all(j.sup.rotations >= ROTATIONS for j in jobs), jobs, 120)
    produced = producer.stop()
    wait_for(
        f"{len(produced)} records through both queries",
        lambda: all(consumed_offset(j, topic_in) >= len(produced) for j in jobs),
        jobs,
        60,
    )
    for job in jobs:
        stop_after_a_rotation(kraft_broker, job, token_log)
    # No token any run of either query used logs in any more.
    for run in (r for job in jobs for r in job.runs):
        kraft_broker.wait_refused(token_credentials(run), timeout=5.0)

    for job in jobs:
        assert job.sup.state is SupervisorState.STOPPED, job.sup.history
        assert job.sup.rotations >= ROTATIONS and len(job.runs) == job.sup.rotations + 1
        # One token per run; every run resumed the one checkpointed query.
        assert len({r.token_id for r in job.runs}) == len(job.runs)
        assert len({str(r.query.id) for r in job.runs}) == 1, job.name
        assert len({str(r.query.runId) for r in job.runs}) == len(job.runs)
        assert not any(r.query.isActive for r in job.runs)
        # Restarted runs read records, with their own tokens (the first run
        # ended long before the last record was produced).
        reading = [r for r in job.runs if sum(p.numInputRows for p in r.query.recentProgress)]
        assert any(r is not job.runs[0] for r in reading), job.name

    # The file sink: every record exactly once, across all the restarts.
    stored = [row.value for row in spark.read.parquet(str(tmp_path / "out")).collect()]
    assert collections.Counter(stored) == collections.Counter(produced)
    # The Kafka sink: every record, read back in full by a plain consumer.
    written = read_topic({**data, "auto.offset.reset": "earliest"}, topic_out)
    assert set(written) == set(produced) and len(written) >= len(produced)

    for run in (r for job in jobs for r in job.runs):
        assert run.hmac not in token_log.text
