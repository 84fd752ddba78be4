"""kazoo's log never carries znode data: credential strings and token HMACs stay out
of every handler, whatever the level, through our client or one passed in."""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import Iterator

import pytest
from kazoo.client import KazooClient
from kazoo.protocol import serialization

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SCRAM_SHA_512
from sasl_scram import ScramCredential
from sasl_scram.store import ScramUpsertion
from sasl_scram.store import ZooKeeperCredentialStore
from tests.support.polling import wait_until
from tests.support.zookeeper_server import create_chroot
from tests.tokenauth.conftest import ALICE
from tests.tokenauth.conftest import ctx
from tokenauth import TokenConfig
from tokenauth import TokenManager
from tokenauth import ZooKeeperTokenStore

# kazoo's BLATHER (5): below DEBUG, yet any logger set to NOTSET lets it through.
EVERYTHING = 1


@pytest.fixture
def chroot(zookeeper_hosts: str) -> Iterator[str]:
    """The test's chroot, created, for stores and for a client passed in."""
    yield create_chroot(zookeeper_hosts)


def upsert(user: str, password: str, salt: bytes, mech: object = SCRAM_SHA_256) -> ScramUpsertion:
    return ScramUpsertion.from_password(user, mech, password, 4096, salt=salt)  # type: ignore[arg-type]


def secret_parts(password: str, salt: bytes, mech: object = SCRAM_SHA_256) -> list[str]:
    """The values of the credential string's salt, stored_key and server_key."""
    text = ScramCredential.from_password(
        mech,  # type: ignore[arg-type]
        password,
        iterations=4096,
        salt=salt,
    ).to_kafka_string()
    fields = dict(item.split("=", 1) for item in text.split(","))
    return [fields["salt"], fields["stored_key"], fields["server_key"]]


def fail_transaction_replies_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The next multi-op reply cannot be read: kazoo logs its "Exception raised
    during deserialization of request" ERROR, which names the request, data included."""
    original = serialization.Transaction.deserialize
    calls = [0]

    def deserialize(bytes_: bytes, offset: int) -> object:
        calls[0] += 1
        if calls[0] == 1:
            raise ValueError("a reply this client cannot read")
        return original(bytes_, offset)

    # kazoo calls it on the request object: a static method, like its classmethod.
    monkeypatch.setattr(serialization.Transaction, "deserialize", staticmethod(deserialize))


@pytest.mark.parametrize("level", [logging.DEBUG, EVERYTHING], ids=["DEBUG", "everything"])
def test_no_znode_data_reaches_a_handler(
    chroot: str,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    level: int,
) -> None:
    caplog.set_level(level)  # the root logger and the capturing handler
    salt, password = secrets.token_bytes(16), secrets.token_urlsafe(16)
    salt2, password2 = secrets.token_bytes(16), secrets.token_urlsafe(16)
    leaks = secret_parts(password, salt) + secret_parts(password2, salt2, SCRAM_SHA_512)

    # Our own client: writes (multi-ops) and reads (a second store loads them).
    store = ZooKeeperCredentialStore(chroot)
    reader = ZooKeeperCredentialStore(chroot)
    try:
        assert store.alter([], [upsert("alice", password, salt)])[0].error == 0
        assert wait_until(lambda: reader.lookup("alice", SCRAM_SHA_256) is not None) is not None
        # A reply kazoo cannot read: its ERROR names the request, data included.
        fail_transaction_replies_once(monkeypatch)
        with contextlib.suppress(Exception):
            store.alter([], [upsert("bob", password2, salt2, SCRAM_SHA_512)])
        monkeypatch.undo()
        store.alter([], [upsert("bob", password2, salt2, SCRAM_SHA_512)])
        assert [r.error for r in store.describe(["alice", "bob"]).results] == [0, 0]
    finally:
        reader.close()
        store.close()

    # A client the application passes in logs to kazoo's own module logger.
    client = KazooClient(hosts=chroot)
    client.start(timeout=10)
    try:
        mine = ZooKeeperCredentialStore(client)
        mine.alter([], [upsert("carol", password, salt)])
        assert mine.lookup("carol", SCRAM_SHA_256) is not None
        mine.close()
    finally:
        client.stop()
        client.close()

    # A delegation token: its HMAC is never written, nor logged.
    tokens = ZooKeeperTokenStore(chroot)
    manager = TokenManager(TokenConfig.of("token-secret"), tokens)
    try:
        created = manager.create_token(ctx(ALICE), [])
        assert created.error == 0
        leaks += [created.hmac_base64, created.hmac.hex()]
        assert manager.describe_tokens(ctx(ALICE), None).tokens
    finally:
        manager.close()
        tokens.close()

    kazoo_lines = [r for r in caplog.records if r.name.startswith("kazoo")]
    assert any("deserialization of request" in r.getMessage() for r in kazoo_lines)
    if level == EVERYTHING:
        # The lines that used to carry data are there, without it.
        assert any("Sending request" in r.getMessage() for r in kazoo_lines)
    for record in caplog.records:
        message = record.getMessage()
        for leak in leaks:
            assert leak not in message, (record.name, record.levelname, message)
    for leak in leaks:
        assert leak not in caplog.text
