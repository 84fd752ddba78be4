"""The README's "Put `serve` in front of your cluster", run as written.

Its one command (the front door's properties, then ``serve``) runs in a copy
of the tree's user-facing files in front of the suite's Kafka 4.x broker;
only names are mapped: the README's ``broker1:9093`` becomes the broker's
address, and its ports free ones. Then, as the section says, the kafka-python
example logs in through it with the bootstrap user's properties and lists
the cluster's topics and, as brokers, only the front door's own ports.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from pathlib import Path

from tests.support.cli_process import child_env
from tests.support.cluster_acls import create_topic
from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tests.support.serve_process import READY
from tests.support.zookeeper_server import free_port
from tests.support.zookeeper_server import free_port_base
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


def test_the_front_door_runs_as_written(kraft_broker: KafkaBroker, tmp_path: Path) -> None:
    topic = unique_name("frontdoor-readme")
    create_topic(kraft_broker, topic)
    cwd = user_tree(tmp_path / "tree")
    port, base = free_port(), free_port_base()
    # The section's first block installs [server]; this venv has it (the tests' extras).
    _, block = section_blocks(SECTION)
    block = (
        block.replace("broker1:9093", kraft_broker.bootstrap)
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
