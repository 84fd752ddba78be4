"""``kafka-scram configs``: kafka-configs' flags and exact output lines (spec 11.1)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SCRAM_SHA_512
from sasl_scram import Grant
from sasl_scram import ScramServer
from sasl_scram.cli._main import main
from sasl_scram.store import SQLiteCredentialStore
from sasl_scram.store import ZooKeeperCredentialStore
from tests.support.javaharness import JavaHarness
from tests.support.javaharness import b64

ADD = "SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=alice-secret]"
# kafka-configs' long form of "add ADD to the user alice".
ADD_ALICE = ("--alter", "--add-config", ADD, "--entity-type", "users", "--entity-name", "alice")


def run(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["configs", *argv], stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def sqlite_store(tmp_path: Path) -> list[str]:
    return ["--store", f"sqlite:{tmp_path / 'c.db'}"]


def test_add_describe_delete_with_store(sqlite_store: list[str]) -> None:
    code, out, err = run(*sqlite_store, *ADD_ALICE)
    assert (code, out, err) == (0, "Completed updating config for user alice.\n", "")
    code, out, _ = run(
        *sqlite_store, "--describe", "--entity-type", "users", "--entity-name", "alice"
    )
    assert out == (
        "SCRAM credential configs for user-principal 'alice' are "
        "SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096\n"
    )
    assert (
        run(*sqlite_store, "--alter", "--delete-config", "SCRAM-SHA-512", "--user", "alice")[0] == 0
    )
    assert run(*sqlite_store, "--describe", "--entity-type", "users")[1] == (
        "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=8192\n"
    )
    # Describing an unknown user prints nothing (UserScramCredentialsCommandTest).
    assert run(*sqlite_store, "--describe", "--user", "nobody") == (0, "", "")


def test_password_from_stdin_is_never_echoed(sqlite_store: list[str], tmp_path: Path) -> None:
    code, out, err = run(
        *sqlite_store,
        "--alter",
        "--add-config",
        "SCRAM-SHA-256=[password=-],SCRAM-SHA-512=[password=-]",
        "--user",
        "bob",
        stdin="hunter2-secret\n",
    )
    assert code == 0 and "hunter2" not in out + err
    store = SQLiteCredentialStore(tmp_path / "c.db", poll_interval=0)
    try:
        from sasl_scram import ScramCredential

        for mech in (SCRAM_SHA_256, SCRAM_SHA_512):
            cred = store.lookup("bob", mech)
            assert cred is not None
            assert cred == ScramCredential.from_password(mech, "hunter2-secret", salt=cred.salt)
    finally:
        store.close()


@pytest.mark.parametrize(
    ("add", "message"),
    [
        (
            "SCRAM-SHA-256=[iterations=100,password=x]",
            "Iterations 100 is less than the minimum 4096 required for SCRAM-SHA-256",
        ),
        (
            "SCRAM-SHA-256=[iterations=20000,password=x]",
            "Error while executing config command: UnacceptableCredentialException: "
            "Too many iterations",
        ),
        (
            "SCRAM-SHA-256=[password=]",
            "Error while executing config command: UnacceptableCredentialException: "
            "Password must not be empty",
        ),
        (
            "SCRAM-SHA-256=[iterations=x,password=supersecret]",
            "Invalid credential property SCRAM_SHA_256=[hidden]: iterations must be a whole "
            "number, got 'x' (e.g. --add-config 'SCRAM-SHA-256=[iterations=8192,password=-]')",
        ),
        (
            "SCRAM-SHA-256",
            "requirement failed: Invalid entity config: all configs to be added "
            "must be in the format \"key=val\". (e.g. --add-config 'SCRAM-SHA-512=[password=-]')",
        ),
    ],
)
def test_alter_errors(sqlite_store: list[str], add: str, message: str) -> None:
    code, out, err = run(*sqlite_store, "--alter", "--add-config", add, "--user", "alice")
    # The store refusing (too many iterations) is a failure (1); a malformed or empty
    # value, a usage error (2), with Kafka's text (docs/compatibility.md).
    status = 1 if "Too many iterations" in message else 2
    assert (code, out, err) == (status, "", f"kafka-scram configs: error: {message}\n")


def test_minus_one_iterations_means_default(sqlite_store: list[str]) -> None:
    assert (
        run(
            *sqlite_store,
            "--alter",
            "--add-config",
            "SCRAM-SHA-256=[iterations=-1,password=x]",
            "--user",
            "a",
        )[0]
        == 0
    )
    assert "iterations=4096" in run(*sqlite_store, "--describe", "--user", "a")[1]


def test_usage_errors(sqlite_store: list[str]) -> None:
    assert run(*sqlite_store, "--alter", "--user", "a")[0] == 2
    assert run("--alter", "--add-config", "SCRAM-SHA-256=[password=x]", "--user", "a")[0] == 2
    assert run(*sqlite_store, "--describe", "--entity-type", "topics")[0] == 2
    code, _, err = run(*sqlite_store, "--describe", "--entity-type", "users", "--entity-default")
    assert code == 2 and "--entity-default" in err


def test_zookeeper_path_output_and_layout(zookeeper_hosts: str) -> None:
    code, out, err = run("--zookeeper", zookeeper_hosts, *ADD_ALICE)
    assert code == 0, err
    assert out == "Completed updating config for entity: user-principal 'alice'.\n"
    assert "Warning: --zookeeper is deprecated" in err
    client = KazooClient(hosts=zookeeper_hosts)
    client.start(timeout=10)
    try:
        config = json.loads(client.get("/config/users/alice")[0])
        assert set(config["config"]) == {"SCRAM-SHA-256", "SCRAM-SHA-512"}
        assert config["config"]["SCRAM-SHA-256"].endswith(",iterations=8192")
    finally:
        client.stop()
        client.close()
    code, _, err = run(
        "--zookeeper",
        zookeeper_hosts,
        "--alter",
        "--delete-config",
        "SCRAM-SHA-256",
        "--user",
        "nobody",
    )
    assert code == 1 and err.endswith(
        "kafka-scram configs: error: Invalid config(s): SCRAM-SHA-256 (the user has no such "
        "credential; --describe lists the ones it has)\n"
    )
    code, _, err = run(
        "--zookeeper",
        zookeeper_hosts,
        "--alter",
        "--add-config",
        "SCRAM-SHA-256=[iterations=10,password=x]",
        "--user",
        "a",
    )
    assert err.endswith(
        "kafka-scram configs: error: "
        "Iterations 10 is less than the minimum 4096 required for SCRAM_SHA_256\n"
    )


@pytest.mark.slow
def test_zookeeper_unreachable_is_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from sasl_scram.cli import _zookeeper as _cli_zookeeper
    from tests.support.zookeeper_server import free_port

    monkeypatch.setattr(_cli_zookeeper, "ZOOKEEPER_TIMEOUT", 1.0)
    code, out, err = run("--zookeeper", f"127.0.0.1:{free_port()}", "--describe", "--user", "a")
    assert code == 1 and out == "" and err.count("\n") == 1


@pytest.mark.jvm
def test_cli_credential_authenticates_kafka_java_client(
    zookeeper_hosts: str, kafka_java: JavaHarness
) -> None:
    """kafka-scram configs --zookeeper writes; Kafka's ScramCredentialUtils parses it and
    Kafka's ScramSaslClient authenticates against our server reading that ZooKeeper."""
    from tests.sasl_scram.test_interop_kafka_java import run_java_client

    assert (
        run("--zookeeper", zookeeper_hosts, "--alter", "--add-config", ADD, "--user", "User:alice")[
            0
        ]
        == 0
    )
    store = ZooKeeperCredentialStore(zookeeper_hosts)
    try:
        for mech in (SCRAM_SHA_256, SCRAM_SHA_512):
            cred = store.lookup("User:alice", mech)
            assert cred is not None
            assert kafka_java.call(
                "credverify", mech.mechanism_name, b64(cred.to_kafka_string()), b64("alice-secret")
            ) == ["ok", "1"]

            def lookup(request: object, mech=mech) -> Grant | None:  # type: ignore[no-untyped-def]
                found = store.lookup(request.username, mech)  # type: ignore[attr-defined]
                return None if found is None else Grant.of(found)

            server = ScramServer(mech, lookup=lookup)
            run_java_client(kafka_java, mech, "User:alice", "alice-secret", server)
            assert server.session.username == "User:alice"
    finally:
        store.close()


def test_store_zookeeper_honours_the_tls_file(tmp_path: Path) -> None:
    # --store zookeeper:... must not drop --zk-tls-config-file (a silent plaintext session).
    missing = tmp_path / "missing-tls.properties"
    code, _, err = run(
        "--store", "zookeeper:127.0.0.1:1", "--zk-tls-config-file", str(missing),
        "--zookeeper-timeout", "1", "--describe", "--entity-type", "users",
    )  # fmt: skip
    assert code == 1 and err.count("\n") == 1
    assert "--zk-tls-config-file" in err, err


@pytest.mark.parametrize(
    "args",
    [
        ADD_ALICE,
        ("--alter", "--delete-config", "SCRAM-SHA-512", "--user", "alice"),
        ("--describe", "--entity-type", "users"),
    ],
)
def test_a_memory_store_is_refused_as_it_would_lose_what_it_reports_done(
    args: tuple[str, ...],
) -> None:
    # A memory: store lives only as long as the command: "Completed updating
    # config" would report a credential that is gone when the command exits.
    code, out, err = run("--store", "memory:", *args)
    assert (code, out) == (2, ""), err
    assert err.startswith("kafka-scram configs: error: --store: memory: ") and err.count("\n") == 1
    assert "sqlite:PATH" in err, err
