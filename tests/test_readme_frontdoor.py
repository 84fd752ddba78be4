"""The README's "Put `serve` in front of your cluster", run as written.

Its one command (the front door's properties, then ``serve``) runs in a copy
of the tree's user-facing files in front of the suite's Kafka 4.x broker that
grants only what ACLs say (``strict_kraft_broker``), where its ``upstream.``
login ``frontdoor`` exists with the ACLs the section names; only names are
mapped: the README's ``broker1:9093`` becomes the broker's address, its topic
``events`` the test's own and its ports free ones. Then, as the section says,
the kafka-python example logs in through it with the bootstrap user's
properties and lists the cluster's topics and, as brokers, only the front
door's own ports.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from pathlib import Path

from tests.support.cli_process import child_env
from tests.support.cluster_acls import add_acls
from tests.support.cluster_acls import create_topic
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.serve_process import READY
from tests.support.zookeeper_server import free_port
from tests.support.zookeeper_server import free_port_base
from tests.test_readme import README
from tests.test_readme import section_blocks
from tests.test_readme import user_tree

SECTION = "Put `serve` in front of your cluster"


def test_the_section_installs_the_server_extra_then_is_one_command_naming_the_upstream_keys() -> (
    None
):
    """The existing-cluster install before it has no ``[server]``: the section
    adds it, from the checkout (the package is on no index)."""
    install, block = section_blocks(SECTION)
    assert install.strip() == ".venv/bin/pip install -e '.[server]'"
    assert block.splitlines()[0].endswith(
        "kafka-scram serve --config .kafka-scram/frontdoor.properties"
    )
    for key in (
        "upstream.bootstrap.servers=",
        "upstream.sasl.jaas.config=",
        "upstream.node.port.base=",
    ):
        assert key in block
    # A least-privilege login, never the cluster's super user, and no override.
    assert 'username="frontdoor" password="frontdoor-secret"' in block
    assert 'username="admin"' not in block and "upstream.allow.cluster.admin" not in block


#: The ACLs the section gives its ``upstream.`` login ``frontdoor``, as its text says.
ACLS = (
    "--add --allow-principal User:frontdoor --operation Describe --cluster",
    "--producer --consumer --topic events --group '*'",
)


def test_the_section_names_the_acls_the_test_grants() -> None:
    text = " ".join(README.read_text(encoding="utf-8").split())
    section = text.split(f"## {SECTION}", 1)[1].split("## ", 1)[0]
    for acl in ACLS:
        assert acl in section


def test_the_front_door_runs_as_written(strict_kraft_broker: KafkaBroker, tmp_path: Path) -> None:
    broker = strict_kraft_broker
    topic = unique_name("frontdoor-readme")
    create_topic(broker, topic)
    broker.add_user("frontdoor", "frontdoor-secret")
    add_acls(broker, tmp_path, "frontdoor", ["Describe"], "--cluster")
    roles = ("--producer", "--consumer", "--topic", topic, "--group", "*")
    add_acls(broker, tmp_path, "frontdoor", [], *roles)
    cwd = user_tree(tmp_path / "tree")
    port, base = free_port(), free_port_base()
    # The section's first block installs [server]; this venv has it (the tests' extras).
    _, block = section_blocks(SECTION)
    block = (
        block.replace("broker1:9093", broker.bootstrap)
        .replace("127.0.0.1:9192", f"127.0.0.1:{port}")
        .replace("upstream.node.port.base=9200", f"upstream.node.port.base={base}")
    )
    serve = subprocess.Popen(
        ["sh", "-ec", block],
        cwd=cwd,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert serve.stdout is not None
        first: list[str] = []
        reader = threading.Thread(target=lambda: first.append(serve.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(60)
        assert first and READY in first[0], first
        example = subprocess.run(
            [
                ".venv/bin/python",
                "examples/kafka_python_client.py",
                ".kafka-scram/frontdoor/alice.properties",
            ],
            cwd=cwd,
            env=child_env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.killpg(serve.pid, signal.SIGTERM)
        serve.wait(timeout=30)
    assert example.returncode == 0, (example.stdout, example.stderr)
    assert topic in example.stdout
    assert f"brokers: [('127.0.0.1', {base + 1})]" in example.stdout
