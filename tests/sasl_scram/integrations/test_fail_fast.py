"""A refused login ends at once, with the authentication error itself.

Kafka's Java client raises ``SaslAuthenticationException`` at the first refusal
and does not retry. kafka-python retried a refused login until its bootstrap
timeout (30 s) and then said "Unable to bootstrap"; aiokafka failed fast but
led with "Unable to bootstrap". Through the integrations both now end within
a few seconds with their authentication error, for a wrong password, a deleted
user and an expired token. A port nobody listens on ends kafka-python's
bootstrap at once too, naming the address (it also retried that until its
timeout); aiokafka gives up on it at once by itself.

The clients are the real libraries; the server is a real ``kafka-scram serve``
process with delegation tokens on, over loopback.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest

import jaas
from sasl_scram import SCRAM_SHA_512
from sasl_scram.config import ClientConfig
from sasl_scram.integrations import ListenerError
from sasl_scram.integrations import aiokafka as scram_aiokafka
from sasl_scram.integrations import kafka_python
from sasl_scram.store import ScramDeletion
from sasl_scram.store import ScramUpsertion
from sasl_scram.store import SQLiteCredentialStore
from tests.sasl_scram.endpoint.serve_process import Serve
from tests.sasl_scram.endpoint.serve_process import seed
from tests.support.endpoint_harness import ALICE
from tests.support.serve_process import client_properties
from tests.support.serve_process import logs_in
from tests.support.serve_process import wait_for_login

# Kafka-python's default bootstrap wait is 30 s; a refusal must end well before.
FAST = 5.0


class Server:
    """The serve process, its SQLite store (shared with this test process) and helpers."""

    def __init__(self, serve: Serve, db: Path) -> None:
        self.serve = serve
        self.db = db

    @property
    def bootstrap(self) -> str:
        return self.serve.bootstrap

    def alter(self, deletions: list[ScramDeletion], upsertions: list[ScramUpsertion]) -> None:
        store = SQLiteCredentialStore(self.db, poll_interval=0)
        try:
            assert all(r.error == 0 for r in store.alter(deletions, upsertions))
        finally:
            store.close()

    def deleted_user_line(self) -> str:
        user, password = f"gone-{uuid.uuid4().hex[:8]}", "gone-secret-1"
        line = jaas.scram_login_line(user, password)
        self.alter([], [ScramUpsertion.from_password(user, SCRAM_SHA_512, password, 4096)])
        wait_for_login(self.bootstrap, line, True)
        self.alter([ScramDeletion(user, SCRAM_SHA_512.type_byte)], [])
        wait_for_login(self.bootstrap, line, False)
        return line

    def expired_token_line(self) -> str:
        from tokenauth import DelegationTokenClient

        owner = ClientConfig.from_properties(
            client_properties(self.bootstrap, jaas.scram_login_line(*ALICE))
        )
        with DelegationTokenClient.connect(owner) as client:
            token = client.create_token([], 600_000)
            line = str(jaas.scram_token_login_line(token.token_id, token.hmac_base64))
            assert logs_in(self.bootstrap, line)
            client.expire_token(token.hmac, -1)
        wait_for_login(self.bootstrap, line, False)
        return line


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("fail-fast")
    db = base / "creds.db"
    seed(db)
    props = {"delegation.token.secret.key": "fail-fast-secret"}
    with Serve(base, db, props) as serve:
        yield Server(serve, db)


REFUSALS: dict[str, Callable[[Server], str]] = {
    "wrong password": lambda s: jaas.scram_login_line(ALICE[0], "not-alices-secret"),
    "deleted user": Server.deleted_user_line,
    "expired token": Server.expired_token_line,
}


def _kafka_python_login(properties: dict[str, str]) -> None:
    from kafka import KafkaAdminClient

    with kafka_python.installed():
        KafkaAdminClient(**kafka_python.client_kwargs(properties)).close()


def _aiokafka_login(properties: dict[str, str]) -> None:
    from aiokafka import AIOKafkaConsumer

    async def start() -> None:
        consumer = AIOKafkaConsumer(**scram_aiokafka.client_kwargs(properties))
        try:
            await consumer.start()
        finally:
            await consumer.stop()

    with scram_aiokafka.installed():
        asyncio.run(start())


def _auth_error(client: str) -> type[Exception]:
    import aiokafka.errors
    import kafka.errors

    if client == "kafka-python":
        return cast(type[Exception], kafka.errors.SaslAuthenticationFailedError)
    return cast(type[Exception], aiokafka.errors.SaslAuthenticationFailed)


LOGINS = {"kafka-python": _kafka_python_login, "aiokafka": _aiokafka_login}


@pytest.mark.parametrize("client", sorted(LOGINS))
@pytest.mark.parametrize("refusal", sorted(REFUSALS))
def test_a_refused_login_ends_at_once_with_the_authentication_error(
    server: Server, client: str, refusal: str
) -> None:
    line = REFUSALS[refusal](server)
    started = time.monotonic()
    with pytest.raises(Exception) as info:
        LOGINS[client](client_properties(server.bootstrap, line))
    took = time.monotonic() - started
    assert isinstance(info.value, _auth_error(client)), repr(info.value)
    assert "Unable to bootstrap" not in str(info.value)
    # An expired token reads like a wrong password on the wire: the error says
    # how to check the token, and only for a token.
    hint = f"kafka-scram delegation-tokens --describe --bootstrap-server {server.bootstrap}"
    assert (hint in str(info.value)) == (refusal == "expired token"), str(info.value)
    assert took < FAST, f"{client} took {took:.1f} s to give up on a {refusal}"


def test_kafka_python_started_before_its_server_says_so_at_once(tmp_path: Path) -> None:
    """Nothing listens yet: kafka-python retried for its whole bootstrap timeout;
    now the client names the refused address at once, and logs in once made
    again after the server is up."""
    db = tmp_path / "creds.db"
    seed(db)
    late = Serve(tmp_path, db)
    properties = client_properties(late.bootstrap, jaas.scram_login_line(*ALICE))
    started = time.monotonic()
    with pytest.raises(ListenerError, match=f"^connection refused by {late.bootstrap}: "):
        _kafka_python_login(properties)
    assert time.monotonic() - started < FAST
    with late:
        _kafka_python_login(properties)


def test_aiokafka_network_error_is_still_unable_to_bootstrap(tmp_path: Path) -> None:
    from aiokafka.errors import KafkaConnectionError

    nobody = Serve(tmp_path, tmp_path / "unused.db")  # its port, never started
    with pytest.raises(KafkaConnectionError, match="Unable to bootstrap"):
        _aiokafka_login(client_properties(nobody.bootstrap, jaas.scram_login_line(*ALICE)))
