"""ACLs shared, both ways, with Kafka 3.9's own ``AclAuthorizer`` on a real ZooKeeper.

Kafka's ``kafka-acls`` with ``--authorizer-properties zookeeper.connect=...``
(``kafka.admin.AclCommand`` from the 3.9.2 jars, which configures an
``AclAuthorizer`` on the chroot) lists what our store wrote, and our store,
left running, follows what Kafka's tool adds and removes. A real 3.9.2 broker in
ZooKeeper mode enforcing our ACLs is in ``test_acls_with_kafka_broker.py``.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from collections.abc import Iterator

import pytest

from sasl_scram.authz import CLUSTER_NAME
from sasl_scram.authz import AclBinding
from sasl_scram.authz import acls_listing
from sasl_scram.store import ZooKeeperAclStore
from tests.sasl_scram.authz.helpers import CLUSTER
from tests.sasl_scram.authz.helpers import GROUP
from tests.sasl_scram.authz.helpers import PREFIXED
from tests.sasl_scram.authz.helpers import Op
from tests.sasl_scram.authz.helpers import allow
from tests.sasl_scram.authz.helpers import deny
from tests.support.javaharness import JavaHarness
from tests.support.javaharness import b64
from tests.support.javaharness import unb64
from tests.support.kafka_broker import KAFKA_VERSIONS
from tests.support.polling import wait_until
from tools.fetch_kafka_broker import libs_dir

pytestmark = pytest.mark.jvm

ACL_COMMAND = "kafka.admin.AclCommand"
#: How long our running store may take to follow Kafka's tool.
WITHIN = 1.0
_BLOCK = re.compile(r"(?:Current|Adding) ACLs for resource `(.*?)`: \n (.*?) \n\n", re.DOTALL)

Run = subprocess.CompletedProcess[str]
AclCommand = Callable[..., Run]


@pytest.fixture(scope="module")
def acl_command() -> Iterator[AclCommand]:
    """Kafka 3.9.2's ``kafka-acls`` (``AclCommand``), run in one JVM for the module."""
    version = KAFKA_VERSIONS["zookeeper"]
    harness = JavaHarness(
        "ToolHarness",
        str(libs_dir(version) / "*"),
        ("-XX:TieredStopAtLevel=1", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"),
    )

    def run(*args: str) -> Run:
        fields = harness.call("run", ACL_COMMAND, *(b64(a) for a in args))
        assert fields[0] == "ok", unb64(fields[1]).decode()
        return subprocess.CompletedProcess(
            [ACL_COMMAND, *args],
            int(fields[1]),
            unb64(fields[2]).decode(),
            unb64(fields[3]).decode(),
        )

    yield run
    harness.close()


def kafka_acls(acl_command: AclCommand, hosts: str, *args: str) -> Run:
    """``kafka-acls.sh --authorizer-properties zookeeper.connect=HOSTS ARGS``."""
    result = acl_command("--authorizer-properties", f"zookeeper.connect={hosts}", *args)
    assert result.returncode == 0, result
    return result


def listed(output: str) -> set[tuple[str, frozenset[str]]]:
    """``--list``'s (or ``--add``'s) blocks as (pattern, entries), whatever order Kafka's
    hash maps and sets gave them."""
    return {
        (pattern, frozenset(line.strip() for line in entries.split("\n")))
        for pattern, entries in _BLOCK.findall(output)
    }


def expected(bindings: list[AclBinding]) -> set[tuple[str, frozenset[str]]]:
    """What ``--list`` prints for ``bindings``: each pattern with its entries."""
    by_pattern: dict[str, set[str]] = {}
    for binding in bindings:
        by_pattern.setdefault(str(binding.pattern), set()).add(str(binding.entry))
    return {(pattern, frozenset(entries)) for pattern, entries in by_pattern.items()}


def test_kafkas_tool_lists_what_our_store_wrote(
    acl_command: AclCommand, zookeeper_hosts: str
) -> None:
    ours = [
        allow("orders", Op.READ),
        allow("orders", Op.WRITE, "User:bob", host="10.0.0.7"),
        deny("*", Op.DELETE, "User:*"),
        allow("pay", Op.DESCRIBE, pattern=PREFIXED),
        deny("app-", Op.READ, "User:eve", rtype=GROUP, pattern=PREFIXED),
        allow(CLUSTER_NAME, Op.IDEMPOTENT_WRITE, rtype=CLUSTER),
        allow("tx ü", Op.WRITE, rtype=GROUP),
    ]
    store = ZooKeeperAclStore(zookeeper_hosts)
    try:
        assert all(r.error.name == "NONE" for r in store.create_acls(ours))
    finally:
        store.close()
    result = kafka_acls(acl_command, zookeeper_hosts, "--list")
    assert listed(result.stdout) == expected(ours), result.stdout
    # A pattern with one entry is one block, byte for byte the engine's text of it.
    single = allow(CLUSTER_NAME, Op.IDEMPOTENT_WRITE, rtype=CLUSTER)
    assert acls_listing(single.pattern, [single.entry]) + "\n" in result.stdout
    # A MATCH filter of Kafka's own reads our prefixed node and our '*' too.
    result = kafka_acls(
        acl_command,
        zookeeper_hosts,
        "--list",
        "--topic",
        "payments",
        "--resource-pattern-type",
        "match",
    )
    assert listed(result.stdout) == expected(
        [allow("pay", Op.DESCRIBE, pattern=PREFIXED), deny("*", Op.DELETE, "User:*")]
    )


def test_our_store_follows_what_kafkas_tool_adds_and_removes(
    acl_command: AclCommand, zookeeper_hosts: str
) -> None:
    store = ZooKeeperAclStore(zookeeper_hosts)
    try:
        kafka_acls(
            acl_command,
            zookeeper_hosts,
            "--add",
            "--allow-principal",
            "User:alice",
            "--operation",
            "Read",
            "--operation",
            "Describe",
            "--topic",
            "orders",
        )
        topic = {allow("orders", Op.READ), allow("orders", Op.DESCRIBE)}
        assert wait_until(lambda: store.acls().bindings == topic, WITHIN) is not None
        kafka_acls(
            acl_command,
            zookeeper_hosts,
            "--add",
            "--deny-principal",
            "User:eve",
            "--deny-host",
            "10.0.0.9",
            "--group",
            "app-",
            "--resource-pattern-type",
            "prefixed",
        )
        group = deny("app-", Op.ALL, "User:eve", host="10.0.0.9", rtype=GROUP, pattern=PREFIXED)
        assert wait_until(lambda: store.acls().bindings == topic | {group}, WITHIN) is not None
        kafka_acls(acl_command, zookeeper_hosts, "--remove", "--force", "--topic", "orders")
        assert wait_until(lambda: store.acls().bindings == {group}, WITHIN) is not None
        # And what we remove, Kafka's tool no longer lists.
        store.delete_acls([group.to_filter()])
        assert kafka_acls(acl_command, zookeeper_hosts, "--list").stdout.count("Current ACLs") == 0
    finally:
        store.close()
