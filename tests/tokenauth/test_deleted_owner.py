"""Item 10 of issue 26: deleting a user leaves their delegation tokens valid, as in Kafka.

docs/tokens.md says so and gives the command that expires them; this runs
that command (the real ``kafka-scram delegation-tokens``) against a real
``kafka-scram serve``, and checks each claim the document makes.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import jaas
from sasl_scram import SCRAM_SHA_512
from sasl_scram.config import ClientConfig, format_properties
from sasl_scram.store import ScramDeletion, ScramUpsertion, SQLiteCredentialStore
from tests.cli_process import ROOT, kafka_scram
from tests.endpoint_harness import ADMIN
from tests.sasl_scram.endpoint.serve_process import Serve, seed

DOC = ROOT / "docs" / "tokens.md"


def _props(bootstrap: str, line: str) -> dict[str, str]:
    return {
        "bootstrap.servers": bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": line,
    }


def _logs_in(bootstrap: str, line: str) -> bool:
    from sasl_scram.admin import KafkaConnection

    try:
        KafkaConnection.from_config(ClientConfig.from_properties(_props(bootstrap, line))).close()
    except Exception:
        return False
    return True


def _eventually(bootstrap: str, line: str, accepted: bool) -> None:
    deadline = time.monotonic() + 15  # serve follows the SQLite store by polling
    while _logs_in(bootstrap, line) != accepted:
        assert time.monotonic() < deadline, f"login never became {accepted}"
        time.sleep(0.1)


def test_the_document_says_so_with_the_command() -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Deleting a user does not expire their tokens", 1)[1]
    section = section.split("\n## ", 1)[0]
    assert "as in kafka" in section.lower()
    assert "delegation-tokens" in section and "--expire" in section
    assert "--expiry-time-period -1" in section and "--describe" in section


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
            _eventually(serve.bootstrap, bob, True)
            bob_file = tmp_path / "bob.properties"
            bob_file.write_text(format_properties(_props(serve.bootstrap, bob)))
            created = kafka_scram(
                "delegation-tokens", "--bootstrap-server", serve.bootstrap, "--command-config",
                str(bob_file), "--create", "--max-life-time-period", "-1",
            )  # fmt: skip
            assert created.returncode == 0, created.stderr
            token_id, hmac = created.stdout.strip().splitlines()[-1].split()[:2]
            token = jaas.scram_token_login_line(token_id, hmac)
            assert _logs_in(serve.bootstrap, token)

            # Deleting bob's credentials: bob is out, bob's token is not.
            store.alter([ScramDeletion(user, SCRAM_SHA_512.type_byte)], [])
            _eventually(serve.bootstrap, bob, False)
            assert _logs_in(serve.bootstrap, token)

            # Not even a super user may expire another owner's token (63), as in Kafka.
            admin_file = tmp_path / "admin.properties"
            admin_file.write_text(
                format_properties(_props(serve.bootstrap, jaas.scram_login_line(*ADMIN)))
            )
            expire = ("--expire", "--hmac", hmac, "--expiry-time-period", "-1")
            refused = kafka_scram(
                "delegation-tokens", "--bootstrap-server", serve.bootstrap,
                "--command-config", str(admin_file), *expire,
            )  # fmt: skip
            assert refused.returncode == 1 and re.search(
                r"\(error 63\)|OWNER_MISMATCH", refused.stderr
            )

            # The document's way: a temporary password for bob, then bob expires it.
            store.alter([], [upsert])
            _eventually(serve.bootstrap, bob, True)
            expired = kafka_scram(
                "delegation-tokens", "--bootstrap-server", serve.bootstrap,
                "--command-config", str(bob_file), *expire,
            )  # fmt: skip
            assert expired.returncode == 0, expired.stderr
            _eventually(serve.bootstrap, token, False)
    finally:
        store.close()
