"""``kafka-scram configs --bootstrap-server`` refused by the server: Kafka's words
(ConfigCommand's one line), then how to fix it, against a real ``kafka-scram serve``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import jaas
from sasl_scram.config import format_properties
from tests.sasl_scram.endpoint.serve_process import Serve
from tests.sasl_scram.endpoint.serve_process import seed
from tests.support.cli_process import assert_one_error
from tests.support.cli_process import kafka_scram
from tests.support.endpoint_harness import ALICE
from tests.support.serve_process import client_properties

KAFKA = "Error while executing config command: "


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    base = tmp_path_factory.mktemp("configs-refusals")
    db = base / "creds.db"
    seed(db)
    with Serve(base, db, {}) as serve:
        yield serve.bootstrap, base


def _configs(bootstrap: str, login: Path, *args: str) -> str:
    argv = ("--bootstrap-server", bootstrap, "--command-config", str(login), *args)
    return assert_one_error(kafka_scram("configs", *argv), "configs")


def _login(base: Path, bootstrap: str, name: str, user: str, password: str) -> Path:
    path = base / f"{name}.properties"
    line = jaas.scram_login_line(user, password)
    path.write_text(format_properties(client_properties(bootstrap, line)))
    return path


@pytest.mark.slow
def test_a_user_without_the_cluster_permission_is_told_what_it_needs(
    served: tuple[str, Path],
) -> None:
    bootstrap, base = served
    alice = _login(base, bootstrap, "alice", *ALICE)  # not in super.users
    error = _configs(bootstrap, alice, "--describe", "--entity-type", "users")
    assert f"{KAFKA}ClusterAuthorizationException: " in error, error
    assert "log in as a super user (super.users)" in error, error
    # serve decides KIP-554 on super.users alone: the hint says so where it names Kafka's ACLs.
    assert "kafka-scram serve decides credential and token requests on super.users only" in error


@pytest.mark.slow
def test_a_wrong_password_names_the_file_to_check(served: tuple[str, Path]) -> None:
    bootstrap, base = served
    wrong = _login(base, bootstrap, "wrong", ALICE[0], "not-the-password")
    error = _configs(bootstrap, wrong, "--describe", "--entity-type", "users")
    assert "SaslAuthenticationException: " in error, error
    assert (
        f"check the username and password in sasl.jaas.config of the --command-config file {wrong}"
        in error
    ), error
    assert "not-the-password" not in error
