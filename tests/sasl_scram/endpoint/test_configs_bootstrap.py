"""``kafka-scram configs --bootstrap-server``: KIP-554 over the wire, Kafka's output."""

from __future__ import annotations

import io
from pathlib import Path

import jaas
from sasl_scram import SCRAM_SHA_512
from sasl_scram.admin import KafkaConnection
from sasl_scram.admin import SaslCredentials
from sasl_scram.cli._main import main
from tests.support.endpoint_harness import RunningEndpoint


def command_config(tmp_path: Path, user: str, password: str) -> str:
    path = tmp_path / f"{user}.properties"
    path.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
        f"sasl.jaas.config={jaas.scram_login_line(user, password)}\n"
    )
    return str(path)


def run(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def over_the_wire(endpoint: RunningEndpoint, tmp_path: Path, user: str, password: str) -> list[str]:
    """``configs --bootstrap-server <endpoint> --command-config <user's properties>``."""
    return [
        "configs",
        "--bootstrap-server",
        endpoint.bootstrap,
        "--command-config",
        command_config(tmp_path, user, password),
    ]


def test_alter_and_describe_over_the_wire(endpoint: RunningEndpoint, tmp_path: Path) -> None:
    base = over_the_wire(endpoint, tmp_path, "admin", "admin-secret")
    code, out, err = run(
        *base,
        "--alter",
        "--add-config",
        "SCRAM-SHA-512=[iterations=8192,password=-]",
        "--entity-type",
        "users",
        "--entity-name",
        "newbie",
        stdin="newbie-pw\n",
    )
    assert (code, out, err) == (0, "Completed updating config for user newbie.\n", "")
    KafkaConnection(
        endpoint.bootstrap, SaslCredentials(SCRAM_SHA_512, "newbie", "newbie-pw")
    ).close()
    code, out, _ = run(*base, "--describe", "--entity-type", "users", "--entity-name", "newbie")
    assert out == (
        "SCRAM credential configs for user-principal 'newbie' are SCRAM-SHA-512=iterations=8192\n"
    )
    code, out, _ = run(*base, "--describe", "--entity-type", "users", "--entity-name", "ghost")
    assert (code, out) == (0, "")  # Kafka prints nothing for an unknown user
    assert "newbie-pw" not in out


def test_login_failure_and_missing_command_config(
    endpoint: RunningEndpoint, tmp_path: Path
) -> None:
    code, _, err = run(
        *over_the_wire(endpoint, tmp_path, "admin", "wrong"), "--describe", "--entity-type", "users"
    )
    assert code == 1
    assert "invalid credentials with SASL mechanism SCRAM-SHA-256" in err
    assert "wrong" not in err
    code, _, err = run(
        "configs", "--bootstrap-server", endpoint.bootstrap, "--describe", "--entity-type", "users"
    )
    assert code == 2 and "--command-config is required with --bootstrap-server" in err


def test_non_super_user_is_refused(endpoint: RunningEndpoint, tmp_path: Path) -> None:
    code, out, err = run(
        *over_the_wire(endpoint, tmp_path, "alice", "alice-secret"),
        "--alter",
        "--delete-config",
        "SCRAM-SHA-512",
        "--entity-type",
        "users",
        "--entity-name",
        "admin",
    )
    assert (code, out) == (1, "")
    assert err == (
        "kafka-scram configs: error: Error while executing config command: "
        "ClusterAuthorizationException: Cluster authorization failed. (the login's principal "
        "lacks a permission on the Kafka cluster: log in as a super user (super.users); a "
        "Kafka broker with an authorizer can instead grant it the ACL the operation needs on "
        "the Cluster resource (kafka-scram serve decides credential and token requests on "
        "super.users only, never on ACLs))\n"
    )
