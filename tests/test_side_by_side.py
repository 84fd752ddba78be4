"""``tests/support/side_by_side.py`` runs Kafka's tools in one JVM per broker
(``ToolHarness.java``); here each tool, on each broker, runs once that way and
once as its own process (``KafkaBroker.run_class``, as ``kafka-configs.sh``
and ``kafka-delegation-tokens.sh`` start it), and both runs must exit and
print alike: on success (3.9's Scala ConfigCommand prints through Scala's
Console and returns; 4.x's is Java) and on failure (``Exit.exit(1)`` after a
stack trace, from each tool)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.side_by_side import KafkaTools
from tests.support.side_by_side import Run
from tests.support.side_by_side import connection

# Stack frames: the harness calls main through reflection, which adds some.
_FRAMES = re.compile(r"^\s+(at |\.\.\. \d+ more$).*\n", re.MULTILINE)
# The admin client's log lines name its client id, numbered per JVM.
_CLIENT_ID = re.compile(r"adminclient-\d+")


def _comparable(run: Run) -> tuple[int, str, str]:
    return run.returncode, run.stdout, _CLIENT_ID.sub("adminclient-N", _FRAMES.sub("", run.stderr))


def test_the_harness_runs_kafkas_tools_as_their_own_process(
    kafka_tools: KafkaTools, kafka_broker: KafkaBroker, tmp_path: Path
) -> None:
    config = kafka_broker.client_properties(tmp_path / "admin.properties")
    user = unique_name("harness")
    unknown_hmac = "A" * 86 + "=="
    runs = [
        (
            kafka_broker.config_command,
            "--describe",
            "--entity-type",
            "users",
            "--entity-name",
            "admin",
        ),
        (
            kafka_broker.config_command,
            "--alter",
            "--add-config",
            "SCRAM-SHA-256=[iterations=16385,password=pw]",
            "--entity-type",
            "users",
            "--entity-name",
            user,
        ),
        (
            kafka_broker.delegation_token_command,
            "--renew",
            "--hmac",
            unknown_hmac,
            "--renew-time-period",
            "-1",
        ),
    ]
    statuses = []
    for main_class, *args in runs:
        in_harness = kafka_tools.run(main_class, config, *args)
        alone = kafka_broker.run_class(main_class, *connection(kafka_broker, config), *args)
        assert _comparable(in_harness) == _comparable(alone), (in_harness, alone)
        statuses.append(alone.returncode)
    assert statuses == [0, 1, 1]
