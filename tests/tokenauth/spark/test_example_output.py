"""The Spark example, run as users run it, prints no ERROR line from start to exit.

A rotation stops the query, and Spark keeps the stopped run's Kafka clients in
its pools (``KafkaDataConsumer``'s consumer pool, ``InternalKafkaProducerPool``)
until they idle out or the JVM's shutdown hook closes them. A Kafka consumer's
close sends one last request per broker to end its fetch session (KIP-227),
which logs in again first when the broker ended the session at the token's
expiry (KIP-368): with a token already expired by the supervisor that login is
refused, and the JVM prints ``ERROR ... SaslAuthenticationException`` lines and
stack traces after Python has exited. Only the whole process's output (the
JVM's included, up to its exit) shows it, so the example runs in its own
process and its own JVM, against the suite's KRaft broker.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tools.fetch_spark_connector import ivy_dir

from .example_user import example_user

pytestmark = pytest.mark.jvm

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "spark_structured_streaming.py"
PASSWORD = "example-output-secret"
# A log line at ERROR, from log4j's console layout (`yy/MM/dd HH:mm:ss ERROR ...`)
# or from Python's logging (`... ERROR ...`), or a Java stack trace.
ERROR_LINE = re.compile(r"\bERROR\b|^\s+at [\w$.]+\(|Exception\b")


def test_example_with_two_rotations_prints_no_error(
    kraft_broker: KafkaBroker, tmp_path: Path
) -> None:
    user, topic = unique_name("example-output"), unique_name("example-output-in")
    props, producer = example_user(kraft_broker, user, PASSWORD, tmp_path)
    # Records keep coming, as in a real stream: every run reads some, so every
    # run leaves consumers in Spark's pool.
    stop_producing = threading.Event()

    def produce() -> None:
        i = 0
        while not stop_producing.wait(0.05):
            producer.produce(topic, value=f"event-{i}".encode())
            producer.poll(0)
            i += 1
        producer.flush(30)

    producing = threading.Thread(target=produce, daemon=True)
    producing.start()
    refused_before = _refused_reauthentications(kraft_broker)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
        "SPARK_LOCAL_IP": "127.0.0.1",
    }
    # Both streams into one pipe, read to its end: the JVM holds the pipe until
    # it exits, so what its shutdown hook prints after Python is gone is here too.
    done = subprocess.run(
        [
            sys.executable, str(EXAMPLE),
            "--client-properties", str(props),
            "--topic", topic,
            "--checkpoint", str(tmp_path / "ckpt"),
            "--output", str(tmp_path / "out"),
            "--ivy", str(ivy_dir()),
            "--seconds", "20",
            "--trigger-ms", "2000",
            "--max-lifetime-ms", "20000",
            "--rotate-ratio", "0.4",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )  # fmt: skip
    stop_producing.set()
    producing.join(60)
    output = done.stdout
    assert done.returncode == 0, output
    rotations = re.search(r"stopped after (\d+) rotations", output)
    assert rotations is not None and int(rotations.group(1)) >= 2, output
    errors = [line for line in output.splitlines() if ERROR_LINE.search(line)]
    assert errors == [], output
    assert PASSWORD not in output
    # What the JVM logs in its shutdown hook may be lost with its logging,
    # which shuts down at the same time; the broker saw every refused login.
    assert _refused_reauthentications(kraft_broker) == refused_before


def _refused_reauthentications(broker: KafkaBroker) -> int:
    """Re-authentications the broker refused so far (Kafka's ``Selector`` logs each)."""
    return broker.log_path.read_text(errors="replace").count("Failed re-authentication")
