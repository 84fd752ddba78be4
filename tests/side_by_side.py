"""Kafka's own command-line tools and ``kafka-scram`` side by side.

Both run with the same arguments against the same real broker
(``tests/kafka_broker.py``); the tests compare exit status, stdout and the
error text. Kafka's tool runs from the broker's own jars through
``KafkaBroker.run_class``, ours through ``tests/cli_process.py``.

Kafka's tools report an admin-client failure as a Java stack trace; the line
that names the failure is the ``ExecutionException`` line,
``java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.<Name>: <message>``.
:func:`kafka_failure` reads it back as ``(Name, message)``.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tests.cli_process import kafka_scram
from tests.kafka_broker import KafkaBroker

__all__ = [
    "KAFKA_ERRORS",
    "Pair",
    "kafka_failure",
    "kafka_tool",
    "ours",
    "run_both",
]

#: The package of every exception Kafka maps an error code to (``Errors.java``).
KAFKA_ERRORS = "org.apache.kafka.common.errors."
_EXECUTION_EXCEPTION = re.compile(
    r"^java\.util\.concurrent\.ExecutionException: " + re.escape(KAFKA_ERRORS) + r"(\w+): (.*)$",
    re.MULTILINE,
)


def kafka_tool(
    broker: KafkaBroker, main_class: str, config: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    """Kafka's tool ``main_class`` with ``--bootstrap-server`` and ``--command-config``."""
    return broker.run_class(
        main_class, "--bootstrap-server", broker.bootstrap, "--command-config", str(config), *args
    )


def ours(
    command: str, broker: KafkaBroker, config: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    """``kafka-scram COMMAND`` with the same two connection options."""
    return kafka_scram(
        command, "--bootstrap-server", broker.bootstrap, "--command-config", str(config), *args
    )


@dataclass(frozen=True)
class Pair:
    """One command run by Kafka's tool and by ours."""

    kafka: subprocess.CompletedProcess[str]
    ours: subprocess.CompletedProcess[str]

    def __str__(self) -> str:
        # What a failing assertion shows: both runs in full.
        return "\n".join(
            f"--- {who}: exit {r.returncode}\nstdout: {r.stdout!r}\nstderr:\n{r.stderr}"
            for who, r in (("Kafka", self.kafka), ("kafka-scram", self.ours))
        )

    @classmethod
    def run(
        cls,
        kafka: Callable[[], subprocess.CompletedProcess[str]],
        ours: Callable[[], subprocess.CompletedProcess[str]],
    ) -> Pair:
        """Both at once: ours runs while Kafka's JVM starts, which costs most of
        the time. Only for runs that cannot affect each other."""
        with ThreadPoolExecutor(1) as pool:
            our_run = pool.submit(ours)
            return cls(kafka(), our_run.result())


def run_both(broker: KafkaBroker, main_class: str, command: str, config: Path, *args: str) -> Pair:
    """The same arguments to Kafka's ``main_class`` and to ``kafka-scram COMMAND``."""
    return Pair.run(
        lambda: kafka_tool(broker, main_class, config, *args),
        lambda: ours(command, broker, config, *args),
    )


def kafka_failure(result: subprocess.CompletedProcess[str]) -> tuple[str, str]:
    """The exception's simple name and message from Kafka's ExecutionException line."""
    found = _EXECUTION_EXCEPTION.findall(result.stderr)
    assert len(found) == 1, result.stderr
    name, message = found[0]
    return str(name), str(message)
