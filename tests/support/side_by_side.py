"""Kafka's own command-line tools and ``kafka-scram`` side by side.

Both run with the same arguments against the same real broker
(``tests/support/kafka_broker.py``); the tests compare exit status, stdout and the
error text. Kafka's tool runs from the broker's own jars, ours through
``tests/support/cli_process.py``.

A JVM start with a broker's hundred jars costs 2-6 s on this machine, so
Kafka's tools run in one JVM per broker, ``tests/java/ToolHarness.java``,
which calls the tool's ``main`` as Kafka's own tool tests do: the exit status
through Kafka's ``Exit`` procedure, stdout and stderr captured per run.
``tests/test_side_by_side.py`` checks that a run there prints what the tool
prints as its own process (``KafkaBroker.run_class``).

Kafka's tools report an admin-client failure as a Java stack trace; the line
that names the failure is the ``ExecutionException`` line,
``java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.<Name>: <message>``.
:func:`kafka_failure` reads it back as ``(Name, message)``.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.cli_process import kafka_scram
from tests.support.javaharness import JavaHarness
from tests.support.javaharness import b64
from tests.support.javaharness import unb64
from tests.support.kafka_broker import KafkaBroker

__all__ = [
    "KAFKA_ERRORS",
    "KafkaTools",
    "Pair",
    "Run",
    "connection",
    "kafka_failure",
    "kafka_tools",
    "ours",
]

#: The package of every exception Kafka maps an error code to (``Errors.java``).
KAFKA_ERRORS = "org.apache.kafka.common.errors."
_EXECUTION_EXCEPTION = re.compile(
    r"^java\.util\.concurrent\.ExecutionException: " + re.escape(KAFKA_ERRORS) + r"(\w+): (.*)$",
    re.MULTILINE,
)
# The flags KafkaBroker.run_class gives a tool's JVM, so both print the same logs.
_JVM_FLAGS = ("-XX:TieredStopAtLevel=1", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")

Run = subprocess.CompletedProcess[str]


class KafkaTools:
    """Kafka's command-line tools from one broker's jars, in one JVM."""

    def __init__(self, broker: KafkaBroker) -> None:
        self.broker = broker
        self._harness = JavaHarness("ToolHarness", broker.classpath, _JVM_FLAGS)

    def main(self, main_class: str, *args: str) -> Run:
        """``main_class``'s main with ``args``: its exit status and output."""
        fields = self._harness.call("run", main_class, *(b64(a) for a in args))
        if fields[0] != "ok":
            raise RuntimeError(f"ToolHarness: {unb64(fields[1]).decode()}")
        return subprocess.CompletedProcess(
            [main_class, *args],
            int(fields[1]),
            unb64(fields[2]).decode(),
            unb64(fields[3]).decode(),
        )

    def run(self, main_class: str, config: Path, *args: str) -> Run:
        """The tool with ``--bootstrap-server`` and ``--command-config``."""
        return self.main(main_class, *connection(self.broker, config), *args)

    def close(self) -> None:
        self._harness.close()


def connection(broker: KafkaBroker, config: Path) -> tuple[str, ...]:
    return ("--bootstrap-server", broker.bootstrap, "--command-config", str(config))


def ours(command: str, broker: KafkaBroker, config: Path, *args: str) -> Run:
    """``kafka-scram COMMAND`` with the same two connection options."""
    return kafka_scram(command, *connection(broker, config), *args)


@pytest.fixture(scope="session")
def _tool_harnesses() -> Iterator[dict[str, KafkaTools]]:
    started: dict[str, KafkaTools] = {}
    yield started
    for tools in started.values():
        tools.close()


@pytest.fixture
def kafka_tools(kafka_broker: KafkaBroker, _tool_harnesses: dict[str, KafkaTools]) -> KafkaTools:
    """Kafka's tools for ``kafka_broker``, one JVM per broker and session."""
    if kafka_broker.mode not in _tool_harnesses:
        _tool_harnesses[kafka_broker.mode] = KafkaTools(kafka_broker)
    return _tool_harnesses[kafka_broker.mode]


@dataclass(frozen=True)
class Pair:
    """One command run by Kafka's tool and by ours."""

    kafka: Run
    ours: Run

    def __str__(self) -> str:
        # What a failing assertion shows: both runs in full.
        return "\n".join(
            f"--- {who}: exit {r.returncode}\nstdout: {r.stdout!r}\nstderr:\n{r.stderr}"
            for who, r in (("Kafka", self.kafka), ("kafka-scram", self.ours))
        )

    @classmethod
    def run(cls, kafka: Callable[[], Run], ours: Callable[[], Run]) -> Pair:
        """Both at once. Only for runs that cannot affect each other."""
        with ThreadPoolExecutor(1) as pool:
            our_run = pool.submit(ours)
            return cls(kafka(), our_run.result())

    @classmethod
    def same(
        cls, tools: KafkaTools, main_class: str, command: str, config: Path, *args: str
    ) -> Pair:
        """The same arguments to Kafka's ``main_class`` and to ``kafka-scram COMMAND``."""
        return cls.run(
            lambda: tools.run(main_class, config, *args),
            lambda: ours(command, tools.broker, config, *args),
        )


def kafka_failure(result: Run) -> tuple[str, str]:
    """The exception's simple name and message from Kafka's ExecutionException line."""
    found = _EXECUTION_EXCEPTION.findall(result.stderr)
    assert len(found) == 1, result.stderr
    name, message = found[0]
    return str(name), str(message)
