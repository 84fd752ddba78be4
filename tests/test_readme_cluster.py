"""The README's "Use it with your existing cluster", run as written against a real broker.

The section's shell blocks are extracted from README.md (as in
``tests/test_readme.py``) and run in order by ``sh`` in a copy of the tree's
user-facing files, against the suite's Kafka 4.x KRaft broker. Only names
are mapped, never commands: the README's ``broker1:9093`` becomes the
broker's address, its super user and password the broker's, alice and the
topic ``events`` names of their own on the shared broker, and Kafka's
``kafka-topics.sh`` and ``kafka-acls.sh`` (in ``bin/`` of Kafka's download,
which the suite does not have) scripts that run the same tool classes from
the broker's jars. The install block is checked against pyproject.toml's
extras, not run (it would install into the suite's venv); the Spark block's
command is parsed by the example's own argument parser.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import subprocess
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

from sasl_scram import ScramMechanism
from tests.support.cli_process import ROOT
from tests.support.cli_process import child_env
from tests.support.kafka_broker import ADMIN_PASSWORD
from tests.support.kafka_broker import ADMIN_USER
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.test_readme import RUN_SECTIONS
from tests.test_readme import section_blocks
from tests.test_readme import user_tree

SECTION = RUN_SECTIONS[1]
#: What the README writes for the reader's own cluster.
README_BROKER = "broker1:9093"
README_ADMIN = 'username="admin" password="admin-secret"'
#: Kafka's shell scripts and the class each runs (kafka-run-class.sh) in Kafka 4.x.
KAFKA_SCRIPTS = {
    "kafka-topics.sh": "org.apache.kafka.tools.TopicCommand",
    "kafka-acls.sh": "org.apache.kafka.tools.AclCommand",
}
SPARK_EXAMPLE = "examples/spark_structured_streaming.py"
_INSTALL = re.compile(
    r"^(?:python3 -m venv \.venv && )?\.venv/bin/pip install -e '\.\[([^\]]*)\]'$"
)


def cluster_blocks() -> list[str]:
    return section_blocks(SECTION)


def install_extras(block: str) -> list[str]:
    """The extras the block's install lines name; fails on any other line."""
    extras: list[str] = []
    for line in block.strip().splitlines():
        match = _INSTALL.match(line.strip())
        assert match, line
        extras += match[1].split(",")
    return extras


def test_the_section_installs_extras_that_exist() -> None:
    optional = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    installs = [b for b in cluster_blocks() if "pip install" in b and SPARK_EXAMPLE not in b]
    assert len(installs) == 1
    extras = install_extras(installs[0])
    # The client side only: both client libraries of step 6, nothing of serve.
    assert sorted(extras) == ["aiokafka", "kafka-python"]
    assert set(extras) <= set(optional)


def load_spark_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("spark_example", ROOT / SPARK_EXAMPLE)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return example


def spark_command(block: str) -> list[str]:
    """The Spark block's example arguments, after checking its install line."""
    install, _, command = block.partition("\n")
    assert install_extras(install) == ["spark"]
    words = shlex.split(command.replace("\\\n", " "))  # the shell's line continuations
    assert words[:2] == [".venv/bin/python", SPARK_EXAMPLE], words
    return words[2:]


def test_the_spark_command_parses_with_the_examples_options() -> None:
    """The real parser of the example: a renamed or dropped option fails here."""
    spark = [b for b in cluster_blocks() if SPARK_EXAMPLE in b]
    assert len(spark) == 1
    args = load_spark_example().parse_args(spark_command(spark[0]))
    # The user's own login (a token cannot create tokens), the topic of step 4.
    assert args.client_properties == ".kafka-scram/cluster/alice.properties"
    assert args.topic == "events"
    assert args.seconds > 0 and args.output != args.checkpoint


class Mapping:
    """The README's names for the reader's cluster, and the test broker's."""

    def __init__(self, broker: KafkaBroker) -> None:
        self.user = unique_name("alice")
        self.password = f"{self.user}-secret"  # "alice-secret", the password the guide types
        self.topic = unique_name("events")
        self.pairs = {
            README_BROKER: broker.bootstrap,
            README_ADMIN: f'username="{ADMIN_USER}" password="{ADMIN_PASSWORD}"',
            "alice": self.user,
            "events": self.topic,
        }

    def apply(self, block: str) -> str:
        for readme, ours in self.pairs.items():
            block = block.replace(readme, ours)
        return block


def kafka_scripts(bin_dir: Path, broker: KafkaBroker) -> Path:
    """``kafka-topics.sh`` and ``kafka-acls.sh`` that run Kafka's tool classes."""
    bin_dir.mkdir()
    for script, main_class in KAFKA_SCRIPTS.items():
        path = bin_dir / script
        path.write_text(
            "#!/bin/sh\nexec java -Xshare:auto -XX:TieredStopAtLevel=1 "
            f'-cp {shlex.quote(broker.classpath)} {main_class} "$@"\n'
        )
        path.chmod(0o755)
    return bin_dir


def run_block(block: str, cwd: Path, bin_dir: Path, password: str) -> str:
    env = child_env()
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    done = subprocess.run(
        ["sh", "-ec", block],
        cwd=cwd,
        env=env,
        input=f"{password}\n",  # what the guide types at the password prompt
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, (block, done.stdout, done.stderr)
    return done.stdout


def token_of(output: Path) -> tuple[str, str]:
    """The id and HMAC on the last line of ``--create``'s output, as step 6 reads them."""
    fields = output.read_text().splitlines()[-1].split()
    return fields[0], fields[1]


@pytest.mark.slow
def test_existing_cluster_runs_as_written(kraft_broker: KafkaBroker, tmp_path: Path) -> None:
    cwd = user_tree(tmp_path / "tree")
    bin_dir = kafka_scripts(tmp_path / "kafka-bin", kraft_broker)
    names = Mapping(kraft_broker)
    sha512 = ScramMechanism.SCRAM_SHA_512
    outputs: list[str] = []
    for readme_block in cluster_blocks():
        if "pip install" in readme_block:
            continue  # the install and Spark blocks: checked by the tests above
        block = names.apply(readme_block)
        outputs.append(run_block(block, cwd, bin_dir, names.password))
        # Credentials and tokens reach the broker's authenticator through the
        # metadata log, asynchronously: what the next block needs, once there.
        if "--entity-name" in block:
            kraft_broker.wait_login(kraft_broker.credentials(names.user, names.password, sha512))
        if "--create --max-life-time-period" in block:
            token_id, hmac = token_of(cwd / names.apply(".kafka-scram/cluster/alice-token.txt"))
            kraft_broker.wait_login(kraft_broker.credentials(token_id, hmac, sha512, True))
    setup, user, topic, _token, clients = outputs
    assert setup == ""
    assert f"Completed updating config for user {names.user}." in user
    assert f"Created topic {names.topic}." in topic
    token_id, hmac = token_of(cwd / names.apply(".kafka-scram/cluster/alice-token.txt"))
    properties = (cwd / names.apply(".kafka-scram/cluster/alice-token.properties")).read_text()
    assert f'username="{token_id}" password="{hmac}" tokenauth=true;' in properties
    kafka_python, aiokafka = clients.strip().splitlines()[-2:]
    assert kafka_python.startswith("topics: [") and repr(names.topic) in kafka_python
    assert aiokafka.startswith("topics: [") and repr(names.topic) in aiokafka
    assert "brokers: [" in clients
