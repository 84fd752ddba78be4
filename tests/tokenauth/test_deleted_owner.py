"""Deleting a user leaves their delegation tokens valid, as in Kafka.

docs/tokens.md says so and gives the command that expires them; this runs
that command (the real ``kafka-scram delegation-tokens``) against a real
``kafka-scram serve``, and checks each claim the document makes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import jaas
from sasl_scram import SCRAM_SHA_512
from sasl_scram.config import format_properties
from sasl_scram.store import ScramDeletion
from sasl_scram.store import ScramUpsertion
from sasl_scram.store import SQLiteCredentialStore
from tests.sasl_scram.endpoint.serve_process import Serve
from tests.sasl_scram.endpoint.serve_process import seed
from tests.support.cli_process import ROOT
from tests.support.cli_process import kafka_scram
from tests.support.endpoint_harness import ADMIN
from tests.support.serve_process import client_properties
from tests.support.serve_process import logs_in
from tests.support.serve_process import wait_for_login

DOC = ROOT / "docs" / "tokens.md"


def test_the_document_says_so_with_the_command() -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Deleting a user does not expire their tokens", 1)[1]
    section = section.split("\n## ", 1)[0]
    assert "as in kafka" in section.lower()
    assert "delegation-tokens" in section and "--expire" in section
    assert "--expiry-time-period -1" in section and "--describe" in section


@pytest.mark.slow
def test_a_deleted_users_token_lives_until_the_user_expires_it(tmp_path: Path) -> None:
    db = tmp_path / "creds.db"
    seed(db)
    user, password = "bob", "bob-secret-1"
    store = SQLiteCredentialStore(db, poll_interval=0)
    try:
        with Serve(tmp_path, db, {"delegation.token.secret.key": "deleted-owner"}) as serve:
            bob = jaas.scram_login_line(user, password)
            upsert = ScramUpsertion.from_password(user, SCRAM_SHA_512, password, 4096)
            store.alter([], [upsert])
            wait_for_login(serve.bootstrap, bob, True)
            bob_file = tmp_path / "bob.properties"
            bob_file.write_text(format_properties(client_properties(serve.bootstrap, bob)))
            created = kafka_scram(
                "delegation-tokens", "--bootstrap-server", serve.bootstrap, "--command-config",
                str(bob_file), "--create", "--max-life-time-period", "-1",
            )  # fmt: skip
            assert created.returncode == 0, created.stderr
            token_id, hmac = created.stdout.strip().splitlines()[-1].split()[:2]
            token = jaas.scram_token_login_line(token_id, hmac)
            assert logs_in(serve.bootstrap, token)

            # Deleting bob's credentials: bob is out, bob's token is not.
            store.alter([ScramDeletion(user, SCRAM_SHA_512.type_byte)], [])
            wait_for_login(serve.bootstrap, bob, False)
            assert logs_in(serve.bootstrap, token)

            # Not even a super user may expire another owner's token (63), as in Kafka.
            admin_file = tmp_path / "admin.properties"
            admin_file.write_text(
                format_properties(client_properties(serve.bootstrap, jaas.scram_login_line(*ADMIN)))
            )
            expire = ("--expire", "--hmac", hmac, "--expiry-time-period", "-1")
            refused = kafka_scram(
                "delegation-tokens", "--bootstrap-server", serve.bootstrap,
                "--command-config", str(admin_file), *expire,
            )  # fmt: skip
            assert refused.returncode == 1 and re.search(
                r"\(error 63\)|OWNER_MISMATCH|OwnerMismatch", refused.stderr
            )

            # The document's way: a temporary password for bob, then bob expires it.
            store.alter([], [upsert])
            wait_for_login(serve.bootstrap, bob, True)
            expired = kafka_scram(
                "delegation-tokens", "--bootstrap-server", serve.bootstrap,
                "--command-config", str(bob_file), *expire,
            )  # fmt: skip
            assert expired.returncode == 0, expired.stderr
            wait_for_login(serve.bootstrap, token, False)
    finally:
        store.close()
