"""``kafka-scram acls``: kafka-acls' options, checks and texts, on a SQLite store.

The same command against Kafka's own ``AclCommand`` on a real ZooKeeper is in
``test_acls_vs_kafka.py``.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from sasl_scram.authz import ResourceType
from sasl_scram.cli._main import main
from sasl_scram.store import SQLiteAclStore
from tests.sasl_scram.authz.helpers import CLUSTER
from tests.sasl_scram.authz.helpers import GROUP
from tests.sasl_scram.authz.helpers import PREFIXED
from tests.sasl_scram.authz.helpers import Op
from tests.sasl_scram.authz.helpers import allow
from tests.sasl_scram.authz.helpers import deny

USAGE, FAILURE = 2, 1
TRANSACTIONAL_ID = ResourceType.TRANSACTIONAL_ID
ORDERS = "ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)"


def run(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["acls", *argv], stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "creds.db"


@pytest.fixture
def store(path: Path) -> list[str]:
    return ["--store", f"sqlite:{path}"]


def stored(path: Path) -> set[object]:
    acls = SQLiteAclStore(path, poll_interval=0, create=False)
    try:
        return set(acls.describe_acls())
    finally:
        acls.close()


def test_add_prints_kafkas_block_and_stores_the_acls(store: list[str], path: Path) -> None:
    code, out, err = run(
        *store, "--add", "--allow-principal", "User:alice", "--allow-principal", "User:bob",
        "--operation", "Read", "--operation", "describe", "--topic", "orders",
    )  # fmt: skip
    assert (code, err) == (0, "")
    assert out == (
        f"Adding ACLs for resource `{ORDERS}`: \n"
        " \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)\n"
        "\t(principal=User:alice, host=*, operation=DESCRIBE, permissionType=ALLOW)\n"
        "\t(principal=User:bob, host=*, operation=READ, permissionType=ALLOW)\n"
        "\t(principal=User:bob, host=*, operation=DESCRIBE, permissionType=ALLOW) \n\n"
    )
    assert stored(path) == {
        allow("orders", op, who)
        for op in (Op.READ, Op.DESCRIBE)
        for who in ("User:alice", "User:bob")
    }


def test_list_prints_every_resource_in_kafkas_order(store: list[str]) -> None:
    run(
        *store,
        "--add",
        "--allow-principal",
        "User:alice",
        "--operation",
        "Read",
        "--topic",
        "orders",
    )
    run(
        *store, "--add", "--deny-principal", "User:eve", "--deny-host", "10.0.0.9",
        "--group", "app-", "--resource-pattern-type", "prefixed",
    )  # fmt: skip
    code, out, err = run(*store, "--list")
    assert (code, err) == (0, "")
    assert out == (
        f"Current ACLs for resource `{ORDERS}`: \n"
        " \t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW) \n\n"
        "Current ACLs for resource `ResourcePattern(resourceType=GROUP, name=app-, "
        "patternType=PREFIXED)`: \n"
        " \t(principal=User:eve, host=10.0.0.9, operation=ALL, permissionType=DENY) \n\n"
    )
    # A resource given lists its own; MATCH also what applies to it.
    assert run(*store, "--list", "--group", "app-x")[1] == ""
    assert (
        "name=app-"
        in run(*store, "--list", "--group", "app-x", "--resource-pattern-type", "match")[1]
    )


def test_list_by_principal_has_kafkas_heading(store: list[str]) -> None:
    run(
        *store,
        "--add",
        "--allow-principal",
        "User:alice",
        "--allow-principal",
        "User:bob",
        "--topic",
        "orders",
    )
    code, out, _ = run(*store, "--list", "--principal", "User:bob", "--principal", "User:carol")
    assert code == 0
    assert out == (
        "ACLs for principal `User:bob`\n"
        f"Current ACLs for resource `{ORDERS}`: \n"
        " \t(principal=User:bob, host=*, operation=ALL, permissionType=ALLOW) \n\n"
        "ACLs for principal `User:carol`\n"
    )


@pytest.mark.parametrize(
    ("answer", "removed"), [("y\n", True), ("Y\n", True), ("n\n", False), ("", False)]
)
def test_remove_asks_first(store: list[str], path: Path, answer: str, removed: bool) -> None:
    run(*store, "--add", "--allow-principal", "User:alice", "--topic", "orders")
    code, out, err = run(*store, "--remove", "--topic", "orders", stdin=answer)
    assert (code, err) == (0, "")
    assert (
        out == f"Are you sure you want to delete all ACLs for resource filter `{ORDERS}`? (y/n)\n"
    )
    assert stored(path) == (set() if removed else {allow("orders", Op.ALL)})


def test_remove_of_named_acls_asks_with_them_and_keeps_the_others(
    store: list[str], path: Path
) -> None:
    run(
        *store,
        "--add",
        "--allow-principal",
        "User:alice",
        "--operation",
        "Read",
        "--operation",
        "Write",
        "--topic",
        "orders",
    )
    code, out, _ = run(
        *store, "--remove", "--allow-principal", "User:alice", "--operation", "Write",
        "--topic", "orders", stdin="y\n",
    )  # fmt: skip
    assert code == 0
    assert out == (
        "Are you sure you want to remove ACLs: \n"
        " \t(principal=User:alice, host=*, operation=WRITE, permissionType=ALLOW) \n"
        f" from resource filter `{ORDERS}`? (y/n)\n"
    )
    assert stored(path) == {allow("orders", Op.READ)}
    # --force asks nothing; a MATCH filter removes what applies to the name.
    run(
        *store,
        "--add",
        "--allow-principal",
        "User:bob",
        "--topic",
        "ord",
        "--resource-pattern-type",
        "prefixed",
    )
    assert run(
        *store, "--remove", "--force", "--topic", "orders", "--resource-pattern-type", "match"
    ) == (0, "", "")
    assert stored(path) == set()


def test_producer_and_consumer_stand_for_kafkas_acls(store: list[str], path: Path) -> None:
    code, _, err = run(
        *store, "--add", "--allow-principal", "User:app", "--producer", "--consumer",
        "--idempotent", "--topic", "t", "--group", "g", "--transactional-id", "tx",
    )  # fmt: skip
    assert (code, err) == (0, "")
    assert stored(path) == {
        *(allow("t", op, "User:app") for op in (Op.WRITE, Op.DESCRIBE, Op.CREATE, Op.READ)),
        allow("g", Op.READ, "User:app", rtype=GROUP),
        *(allow("tx", op, "User:app", rtype=TRANSACTIONAL_ID) for op in (Op.WRITE, Op.DESCRIBE)),
        allow("kafka-cluster", Op.IDEMPOTENT_WRITE, "User:app", rtype=CLUSTER),
    }


def test_deny_hosts_and_prefixed_patterns(store: list[str], path: Path) -> None:
    code, _, _ = run(
        *store, "--add", "--deny-principal", "User:eve", "--deny-host", "10.0.0.1",
        "--deny-host", "10.0.0.2", "--topic", "pay", "--resource-pattern-type", "PREFIXED",
    )  # fmt: skip
    assert code == 0
    assert stored(path) == {
        deny("pay", Op.ALL, "User:eve", host=h, pattern=PREFIXED) for h in ("10.0.0.1", "10.0.0.2")
    }


def test_what_the_store_refuses_is_one_error_after_the_rest_is_added(
    store: list[str], path: Path
) -> None:
    code, out, err = run(
        *store, "--add", "--allow-principal", "User:a", "--topic", "a/b", "--topic", "ok"
    )
    assert code == FAILURE
    assert out.count("Adding ACLs for resource") == 2
    assert err == "kafka-scram acls: error: Error while adding ACLs: Failed to create ACL\n"
    assert stored(path) == {allow("ok", Op.ALL, "User:a")}
    code, _, err = run(*store, "--add", "--allow-principal", "User:a", "--topic", "")
    assert (code, err) == (
        FAILURE,
        "kafka-scram acls: error: Error while adding ACLs: Invalid empty resource name\n",
    )


def test_list_on_no_store_is_one_error_and_creates_nothing(store: list[str], path: Path) -> None:
    code, out, err = run(*store, "--list")
    assert (code, out) == (FAILURE, "")
    assert err == (
        f"kafka-scram acls: error: no SQLite ACL store at {path}: no such file "
        "(a read creates nothing); --add creates it\n"
    )
    assert run(*store, "--remove", "--force", "--topic", "orders") == (0, "", "")
    assert not path.exists()


ONE_ACTION = "Command must include exactly one action: --list, --add, --remove. "
TOPIC_OPS = "Read, Write, Create, Describe, Delete, Alter, DescribeConfigs, AlterConfigs, All"
GROUP_OPS = "Read, Describe, Delete, DescribeConfigs, AlterConfigs, All"
ADD_A = ("--add", "--allow-principal", "User:a")
REFUSED = [
    ((), ONE_ACTION),
    (("--add", "--list"), ONE_ACTION),
    (
        ("--list", "--allow-principal", "User:a"),
        'Option "[list]" can\'t be used with option "[allow-principal]"',
    ),
    (
        ("--add", "--producer", "--topic", "t", "--operation", "Read"),
        'Option "[producer]" can\'t be used with option "[operation]"',
    ),
    (
        ("--add", "--principal", "User:a", "--topic", "t"),
        "The --principal option is only available if --list is set",
    ),
    ((*ADD_A, "--producer"), "With --producer you must specify a --topic"),
    (
        ("--add", "--idempotent", "--topic", "t"),
        "The --idempotent option is only available if --producer is set",
    ),
    (
        (*ADD_A, "--consumer", "--topic", "t"),
        "With --consumer you must specify a --topic and a --group and no --cluster or "
        "--transactional-id option should be specified.",
    ),
    (
        ADD_A,
        "You must provide at least one resource: --topic <topic> or --cluster or --group "
        "<group> or --delegation-token <Delegation Token ID>",
    ),
    (
        ("--add", "--topic", "t"),
        "You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.",
    ),
    (
        (*ADD_A, "--topic", "t", "--resource-pattern-type", "match"),
        "A '--resource-pattern-type' value of 'MATCH' is not valid when adding acls.",
    ),
    (
        ("--add", "--allow-principal", "alice", "--topic", "t"),
        "expected a string in format principalType:principalName but got alice (e.g. User:alice)",
    ),
    (
        (*ADD_A, "--group", "g", "--operation", "Write"),
        f"ResourceType GROUP only supports operations {GROUP_OPS}",
    ),
    (
        (*ADD_A, "--topic", "t", "--operation", "Fly"),
        f"ResourceType TOPIC only supports operations {TOPIC_OPS}",
    ),
    (
        ("--remove", "--topic", "t", "--allow-principal", "User:a", "--operation", "Fly"),
        f"ResourceType TOPIC only supports operations {TOPIC_OPS}",
    ),
    (
        ("--list", "--resource-pattern-type", "unknown"),
        "Unknown resource-pattern-type: unknown (give any, match, literal, prefixed)",
    ),
]


@pytest.mark.parametrize(("args", "message"), REFUSED)
def test_what_kafka_acls_refuses_is_a_usage_error_in_its_words(
    store: list[str], path: Path, args: tuple[str, ...], message: str
) -> None:
    code, out, err = run(*store, *args)
    assert (code, out) == (USAGE, ""), err
    assert err.endswith(f"{message}\n"), err
    assert err.count("\n") == 1
    assert not path.exists()


WHERE = "exactly one of --store, --zookeeper, --authorizer-properties zookeeper.connect="
PLACES = [
    (("--list",), WHERE),
    (("--list", "--store", "sqlite:x", "--zookeeper", "h:1"), WHERE),
    (
        ("--list", "--bootstrap-server", "h:9092"),
        "--bootstrap-server is not supported: this command edits the ACLs in their store",
    ),
    (
        ("--list", "--authorizer-properties", "zookeeper.connect"),
        "--authorizer-properties expects KEY=VALUE, got 'zookeeper.connect'",
    ),
    (
        ("--list", "--authorizer-properties", "zookeeper.set.acl=true"),
        "--authorizer-properties: zookeeper.set.acl is not read here",
    ),
    (("--list", "--zookeeper", "h:port"), "--zookeeper: 'h:port' is not host:port"),
    (("--list", "--store", "nosuch:x"), "--store: unknown ACL store scheme 'nosuch'"),
]


@pytest.mark.parametrize(("args", "message"), PLACES)
def test_where_the_acls_are_is_checked_first(args: tuple[str, ...], message: str) -> None:
    code, out, err = run(*args)
    assert (code, out) == (USAGE, ""), err
    assert message in err and err.count("\n") == 1, err


def test_list_on_a_chroot_without_acls_is_one_error_and_creates_nothing(
    zookeeper_hosts: str,
) -> None:
    from kazoo.client import KazooClient

    code, out, err = run("--zookeeper", zookeeper_hosts, "--zookeeper-timeout", "5", "--list")
    assert (code, out) == (FAILURE, "")
    assert err.startswith("kafka-scram acls: error: nothing to read at ZooKeeper "), err
    assert err.endswith("; --add creates it\n") and err.count("\n") == 1
    removal = ("--remove", "--force", "--topic", "t")
    assert run("--authorizer-properties", f"zookeeper.connect={zookeeper_hosts}", *removal) == (
        0,
        "",
        "",
    )
    hosts, chroot = zookeeper_hosts.split("/", 1)
    client = KazooClient(hosts=hosts)
    client.start(timeout=10)
    try:
        assert client.exists(f"/{chroot}") is None
    finally:
        client.stop()
        client.close()


@pytest.mark.slow
def test_the_installed_command_adds_and_lists(tmp_path: Path) -> None:
    from tests.support.cli_process import kafka_scram

    where = ("--store", f"sqlite:{tmp_path / 'creds.db'}")
    added = kafka_scram("acls", *where, "--add", "--allow-principal", "User:a", "--topic", "t")
    assert (added.returncode, added.stderr) == (0, ""), added
    listed = kafka_scram("acls", *where, "--list")
    assert listed.stdout.startswith("Current ACLs for resource `ResourcePattern(resourceType=TOPIC")


@pytest.mark.parametrize(
    "args",
    [
        ("--add", "--allow-principal", "User:alice", "--operation", "Read", "--topic", "orders"),
        ("--remove", "--force", "--topic", "orders"),
        ("--list",),
    ],
)
def test_a_memory_store_is_refused_as_it_would_lose_what_it_reports_done(
    args: tuple[str, ...],
) -> None:
    # A memory: store lives only as long as the command: "Adding ACLs" would
    # report ACLs that are gone when the command exits.
    code, out, err = run("--store", "memory:", *args)
    assert (code, out) == (USAGE, ""), err
    assert err.startswith("kafka-scram acls: error: --store: memory: ") and err.count("\n") == 1
    assert "sqlite:PATH" in err, err
