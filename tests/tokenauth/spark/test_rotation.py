"""A real checkpointed streaming query through token rotations on our endpoint.

Short-lived tokens (renewal every ~2 s, replacement every ~4.5 s) make the
supervisor renew, replace and expire tokens with real token RPCs while Spark
restarts a ``rate-micro-batch`` -> JSON file sink query from its checkpoint.
The file sink is exactly-once across restarts, so its content shows any lost
or duplicated batch; ``rate-micro-batch`` numbers rows ``batch * rows + i``.
"""

from __future__ import annotations

import base64
import logging
import time
from pathlib import Path
from typing import Any

import pytest

from sasl_scram.kafka import ErrorCode
from tests.support.endpoint_harness import ALICE
from tests.support.endpoint_harness import RunningEndpoint
from tests.support.endpoint_harness import token_extension
from tokenauth import DelegationTokenClient
from tokenauth import TokenRequestError
from tokenauth.spark import JAAS_OPTION
from tokenauth.spark import KafkaOptions
from tokenauth.spark import SupervisorPolicy
from tokenauth.spark import SupervisorState
from tokenauth.spark import TokenSupervisor
from tokenauth.spark import apply_kafka_options
from tokenauth.spark import existing_option
from tokenauth.spark import secret_login

pytestmark = pytest.mark.jvm

ROWS = 5
# The first query start alone takes ~2 s on this machine; keep tokens longer.
EXPIRY_MS = 3_000
MAX_LIFETIME_MS = 6_000
# Renew at 75% of the time to expiry, replace at 75% of the lifetime, look often.
FAST_POLICY = SupervisorPolicy(
    renew_ratio=0.75,
    rotate_ratio=0.75,
    initial_backoff_ms=200,
    max_backoff_ms=1_000,
    check_interval_ms=200,
)


def test_supervisor_rotates_tokens_under_a_checkpointed_query(
    spark: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="tokenauth")
    ext, _ = token_extension(
        ("rotation-secret",), expiry_time_ms=EXPIRY_MS, max_lifetime_ms=MAX_LIFETIME_MS
    )
    endpoint = RunningEndpoint(extensions=[ext])
    login = secret_login(endpoint.bootstrap, *ALICE, security_protocol="SASL_PLAINTEXT")
    out, checkpoint = str(tmp_path / "out"), str(tmp_path / "checkpoint")
    runs: list[dict[str, Any]] = []

    def start_query(options: KafkaOptions) -> Any:
        reader = apply_kafka_options(
            spark.readStream.format("rate-micro-batch").option("rowsPerBatch", ROWS), options
        )
        writer = (
            reader.load()
            .writeStream.format("json")
            .option("path", out)
            .option("checkpointLocation", checkpoint)
            .queryName("rotation")
            .trigger(processingTime="200 milliseconds")
        )
        writer = apply_kafka_options(writer, options)
        runs.append(
            {
                "token_id": options.token_id,
                "hmac": options[JAAS_OPTION].split('password="')[1].rstrip('";'),
                # The restart really carries the new login, on both builders.
                "reader_login": existing_option(reader, JAAS_OPTION),
                "writer_login": existing_option(writer, JAAS_OPTION),
                "login": options[JAAS_OPTION],
            }
        )
        query = writer.start()
        runs[-1]["query"] = query
        return query

    from pyspark.sql.streaming import StreamingQueryListener

    progress_events: list[tuple[str, int, str]] = []  # (run id, batch id, progress json)

    class Progress(StreamingQueryListener):
        def onQueryStarted(self, event: Any) -> None:
            pass

        def onQueryProgress(self, event: Any) -> None:
            p = event.progress
            progress_events.append((str(p.runId), int(p.batchId), p.json))

        def onQueryIdle(self, event: Any) -> None:
            pass

        def onQueryTerminated(self, event: Any) -> None:
            pass

    listener = Progress()
    spark.streams.addListener(listener)
    supervisor = TokenSupervisor(login, start_query, policy=FAST_POLICY)
    try:
        supervisor.start()
        deadline = time.monotonic() + 60
        while supervisor.rotations < 2 and time.monotonic() < deadline:
            assert supervisor.state is not SupervisorState.FAILED, supervisor.last_error
            time.sleep(0.1)
        assert supervisor.rotations >= 2, supervisor.history
        # Let the current run commit a few batches of its own (it may still be
        # replaced meanwhile: the supervisor keeps rotating).
        while True:
            current = runs[-1].get("query")  # absent while a restart is under way
            if current and sum(1 for e in progress_events if e[0] == str(current.runId)) >= 2:
                break
            assert time.monotonic() < deadline + 30
            time.sleep(0.1)
        explained = current._jsq.explainInternal(True)
    finally:
        supervisor.stop()
        spark.streams.removeListener(listener)
    progress = "".join(e[2] for e in progress_events)

    try:
        assert supervisor.state is SupervisorState.STOPPED
        assert len(runs) >= 3 and supervisor.renewals >= 1
        # Each run had its own token, set on the reader and the writer.
        token_ids = [r["token_id"] for r in runs]
        assert len(set(token_ids)) == len(runs)
        for r in runs:
            assert r["reader_login"] == r["writer_login"] == r["login"]
            assert f'username="{r["token_id"]}"' in r["login"]

        # Every run resumed the same checkpoint: one query id, new run ids.
        queries = [r["query"] for r in runs]
        assert len({q.id for q in queries}) == 1
        assert len({q.runId for q in queries}) == len(queries)
        assert not any(q.isActive for q in queries)

        # Batches continue across restarts: none repeated, none before the
        # previous run's last completed batch.
        batch_ids = [[b for run, b, _ in progress_events if run == str(q.runId)] for q in queries]
        flat = [b for ids in batch_ids for b in ids]
        assert flat == sorted(set(flat)), batch_ids
        # Every run but possibly the last (stopped at any moment) committed
        # batches; the second run started where the first stopped, not at 0.
        assert all(ids for ids in batch_ids[:-1]), batch_ids
        assert batch_ids[1][0] > 0

        # The sink: committed batches are 0..N, each exactly once.
        committed = sorted(
            int(p.name) for p in (tmp_path / "checkpoint" / "commits").iterdir() if p.name.isdigit()
        )
        assert committed == list(range(len(committed)))
        values = sorted(row.value for row in spark.read.json(out).collect())
        assert values == list(range(len(values)))
        # The file sink logs a batch before the checkpoint commits it, so a
        # stop between the two leaves one batch in the sink that the commit
        # log lacks (a restart would re-run it and the sink would skip it).
        sink_log = (tmp_path / "out" / "_spark_metadata").iterdir()
        sink_batches = 1 + max(int(p.name.split(".")[0]) for p in sink_log if p.name[0].isdigit())
        assert sink_batches in (len(committed), len(committed) + 1)
        assert len(values) == ROWS * sink_batches

        # The replaced tokens and, after stop, the last one are expired.
        with DelegationTokenClient.connect(login) as client:
            described = {t.token_id for t in client.describe_tokens()}
            assert described.isdisjoint(token_ids)
            for r in runs:
                with pytest.raises(TokenRequestError) as info:
                    client.renew_token(base64.b64decode(r["hmac"]))
                assert info.value.error_code in (
                    ErrorCode.DELEGATION_TOKEN_NOT_FOUND,
                    ErrorCode.DELEGATION_TOKEN_EXPIRED,
                )

        # Every transition was logged; no secret reached a log, the plan or progress.
        states = [t.target for t in supervisor.history]
        for state in (
            SupervisorState.RENEWING,
            SupervisorState.ROTATING,
            SupervisorState.RESTARTING,
            SupervisorState.EXPIRING,
            SupervisorState.STOPPED,
        ):
            assert state in states
        assert "spark token supervisor: restarting -> starting" in caplog.text
        assert "kafka.sasl.jaas.config=*********(redacted)" in explained
        for r in runs:
            for text in (caplog.text, explained, progress, repr(supervisor)):
                assert r["hmac"] not in text
    finally:
        endpoint.close()
