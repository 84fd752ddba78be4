"""``kafka-scram acls`` beside Kafka 3.9.2's own ``kafka-acls`` (``AclCommand`` with
``--authorizer-properties zookeeper.connect=...``) on a real ZooKeeper.

The same arguments print the same ``Adding ACLs`` blocks and write the same nodes;
each tool lists and removes what the other wrote; what Kafka's tool refuses, ours
refuses in the same words (ours exits 2, a usage error, where Kafka exits 1).
Kafka's tool orders the entries of a block, and the blocks, as its hash sets and
maps happen to (``AclCommand.getAcl`` collects entries in a ``HashSet``): blocks
are compared byte for byte where there is one entry, as sets otherwise.
"""

from __future__ import annotations

import io
import subprocess
from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient

from sasl_scram.cli._main import main
from tests.sasl_scram.cli.test_acls import REFUSED
from tests.sasl_scram.store.zookeeper.test_acls_with_kafka import AclCommand
from tests.sasl_scram.store.zookeeper.test_acls_with_kafka import acl_command  # noqa: F401
from tests.sasl_scram.store.zookeeper.test_acls_with_kafka import listed
from tests.support.zookeeper_server import ZooKeeperServer
from tests.support.zookeeper_server import create_chroot

pytestmark = pytest.mark.jvm

Run = subprocess.CompletedProcess[str]
DEPRECATION = (
    "Warning: support for ACL configuration directly through the authorizer is deprecated and "
    "will be removed in a future release. Please use --bootstrap-server instead to set ACLs "
    "through the admin client."
)


def ours(*argv: str, stdin: str = "") -> Run:
    out, err = io.StringIO(), io.StringIO()
    code = main(["acls", *argv], stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return subprocess.CompletedProcess(argv, code, out.getvalue(), err.getvalue())


@pytest.fixture
def chroots(zookeeper_server: ZooKeeperServer) -> Iterator[tuple[str, str]]:
    """Two fresh chroots: one for Kafka's tool, one for ours."""
    import uuid

    pair = tuple(f"{zookeeper_server.hosts}/acls-{uuid.uuid4().hex[:10]}" for _ in range(2))
    for hosts in pair:
        create_chroot(hosts)
    yield pair[0], pair[1]


def where(hosts: str) -> tuple[str, str]:
    return ("--authorizer-properties", f"zookeeper.connect={hosts}")


def node(hosts: str, path: str) -> bytes:
    client = KazooClient(hosts=hosts)
    client.start(timeout=10)
    try:
        data: bytes = client.get(path)[0]
        return data
    finally:
        client.stop()
        client.close()


ADD = (
    "--add", "--allow-principal", "User:alice", "--allow-principal", "User:bob",
    "--operation", "Read", "--operation", "Describe", "--topic", "orders", "--group", "app",
)  # fmt: skip


def test_the_same_add_prints_the_same_blocks_and_writes_the_same_nodes(
    acl_command: AclCommand,  # noqa: F811
    chroots: tuple[str, str],
) -> None:
    theirs_at, ours_at = chroots
    kafka = acl_command(*where(theirs_at), *ADD)
    mine = ours(*where(ours_at), *ADD)
    assert (kafka.returncode, mine.returncode) == (0, 0), (kafka, mine)
    assert listed(mine.stdout) == listed(kafka.stdout) and len(listed(kafka.stdout)) == 2
    assert (kafka.stderr, mine.stderr) == (DEPRECATION + "\n", "")
    single = ("--add", "--deny-principal", "User:eve", "--deny-host", "10.0.0.9", "--cluster")
    kafka, mine = acl_command(*where(theirs_at), *single), ours(*where(ours_at), *single)
    assert mine.stdout == kafka.stdout
    assert node(ours_at, "/kafka-acl/Cluster/kafka-cluster") == node(
        theirs_at, "/kafka-acl/Cluster/kafka-cluster"
    )
    # Each lists the other's ACLs as its own.
    theirs_listed = acl_command(*where(theirs_at), "--list").stdout
    ours_listed = ours("--zookeeper", ours_at, "--list").stdout
    assert (
        listed(ours_listed)
        == listed(theirs_listed)
        == listed(acl_command(*where(ours_at), "--list").stdout)
    )
    assert listed(ours("--store", f"zookeeper:{theirs_at}", "--list").stdout) == listed(
        theirs_listed
    )


def test_each_tool_removes_what_the_other_added(
    acl_command: AclCommand,  # noqa: F811
    chroots: tuple[str, str],
) -> None:
    hosts = chroots[0]
    assert acl_command(*where(hosts), *ADD).returncode == 0
    removal = (
        "--remove",
        "--allow-principal",
        "User:bob",
        "--operation",
        "Read",
        "--topic",
        "orders",
    )
    result = ours(*where(hosts), *removal, stdin="y\n")
    assert result.returncode == 0, result
    after = listed(acl_command(*where(hosts), "--list", "--topic", "orders").stdout)
    [(_, entries)] = after
    assert "(principal=User:bob, host=*, operation=READ, permissionType=ALLOW)" not in entries
    assert len(entries) == 3
    assert (
        ours(*where(hosts), "--add", "--allow-principal", "User:c", "--topic", "x").returncode == 0
    )
    kafka = acl_command(*where(hosts), "--remove", "--force", "--topic", "x")
    assert kafka.returncode == 0, kafka
    assert ours(*where(hosts), "--list", "--topic", "x").stdout == ""


# What Kafka's AclCommand refuses as it parses and checks (printUsageAndExit); a
# principal or a pattern type is refused later, inside the command ("Error while
# executing ACL command: ..." on stdout).
_LATER = ("principalType", "resource-pattern-type:")
_CHECKED = [(args, m) for args, m in REFUSED if not any(later in m for later in _LATER)]
#: The operations 4.x supports on groups beside 3.9's (KIP-848's group configs).
_GROUP_CONFIGS = {"DescribeConfigs", "AlterConfigs"}


@pytest.mark.parametrize(("args", "message"), _CHECKED)
def test_what_kafkas_tool_refuses_ours_refuses_in_its_words(
    acl_command: AclCommand,  # noqa: F811
    zookeeper_hosts: str,
    args: tuple[str, ...],
    message: str,
) -> None:
    kafka = acl_command(*where(zookeeper_hosts), *args)
    mine = ours(*where(zookeeper_hosts), *args)
    assert (kafka.returncode, mine.returncode) == (1, 2), (kafka, mine)
    said = kafka.stderr.split("\n")
    assert said[0] == DEPRECATION, kafka.stderr
    if message.startswith("ResourceType"):
        # Kafka lists the operations in its hash set's order, we in its declaration's;
        # 3.9's tool does not know a group's configs operations, which 4.x supports.
        name, _, operations = said[1].partition(" only supports operations ")
        our_name, _, our_operations = message.partition(" only supports operations ")
        theirs = set(operations.split(", "))
        if name.endswith("GROUP"):
            theirs |= _GROUP_CONFIGS
        assert (name, theirs) == (our_name, set(our_operations.split(", ")))
    else:
        assert said[1] == message, kafka.stderr
    assert mine.stderr == f"kafka-scram acls: error: {message}\n"


@pytest.mark.parametrize(("args", "message"), [c for c in REFUSED if c not in _CHECKED])
def test_what_kafkas_tool_refuses_later_ours_refuses_first_in_its_words(
    acl_command: AclCommand,  # noqa: F811
    zookeeper_hosts: str,
    args: tuple[str, ...],
    message: str,
) -> None:
    kafka = acl_command(*where(zookeeper_hosts), *args)
    mine = ours(*where(zookeeper_hosts), *args)
    assert (kafka.returncode, mine.returncode) == (1, 2), (kafka, mine)
    # Ours adds how to fix it in parentheses; Kafka's words come first.
    kafka_words = message.split(" (")[0]
    assert kafka.stdout.startswith("Error while executing ACL command: "), kafka.stdout
    assert kafka_words in kafka.stdout, kafka.stdout
    assert mine.stderr.startswith("kafka-scram acls: error: ")
    assert mine.stderr.endswith(f"{message}\n") and mine.stderr.count("\n") == 1
