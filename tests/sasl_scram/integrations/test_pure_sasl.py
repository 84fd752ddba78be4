"""pure-sasl's SASLClient with our SCRAM mechanisms, against our ScramServer."""

from __future__ import annotations

from collections.abc import Iterator

import puresasl.mechanisms
import pytest
from puresasl import SASLError
from puresasl import SASLProtocolException
from puresasl.client import SASLClient

from sasl_scram import AuthenticationFailed
from sasl_scram import CredentialRequest
from sasl_scram import Grant
from sasl_scram import ScramCredential
from sasl_scram import ScramMechanism
from sasl_scram import ScramServer
from sasl_scram.integrations import ScramCredentials
from sasl_scram.integrations import pure_sasl

MECHS = ["SCRAM-SHA-256", "SCRAM-SHA-512"]
USERS = {"alice": "alice-secret", "odd,name=x": "odd-secret"}


@pytest.fixture
def installed() -> Iterator[None]:
    before = dict(puresasl.mechanisms.mechanisms)
    pure_sasl.install()
    yield
    pure_sasl.uninstall()
    assert before == puresasl.mechanisms.mechanisms


class Server:
    """Our sans-IO server with a lookup that records what it was asked."""

    def __init__(self, name: str, *, rfc_mode: bool = False) -> None:
        self.mechanism = ScramMechanism.from_name(name)
        self.requests: list[CredentialRequest] = []
        self.server = ScramServer(self.mechanism, lookup=self.lookup, rfc_mode=rfc_mode)

    def lookup(self, request: CredentialRequest) -> Grant | None:
        self.requests.append(request)
        password = USERS.get(request.username)
        if password is None:
            return None
        return Grant.of(ScramCredential.from_password(self.mechanism, password))


def exchange(client: SASLClient, server: Server) -> None:
    server_first = server.server.step(client.process())
    server_final = server.server.step(client.process(server_first))
    assert client.process(server_final) == b""


@pytest.mark.parametrize("name", MECHS)
@pytest.mark.parametrize("user", sorted(USERS))
def test_full_exchange(installed: None, name: str, user: str) -> None:
    server = Server(name)
    client = SASLClient("broker", mechanism=name, username=user, password=USERS[user])
    assert not client.complete
    exchange(client, server)
    assert client.complete and server.server.complete
    assert server.server.session.username == user
    assert client.wrap(b"data") == b"data" and client.unwrap(b"data") == b"data"
    client.dispose()


def test_positional_mechanism_and_extensions(installed: None) -> None:
    server = Server("SCRAM-SHA-256")
    client = SASLClient(
        "broker",
        "kafka",
        "SCRAM-SHA-256",
        username="alice",
        password=USERS["alice"],
        extensions={"traceid": "42"},
    )
    exchange(client, server)
    assert dict(server.requests[0].extensions) == {"traceid": "42"}
    assert not server.requests[0].token_auth


def test_token_auth_sends_the_extension(installed: None) -> None:
    server = Server("SCRAM-SHA-512")
    client = SASLClient(
        "broker", mechanism="SCRAM-SHA-512", username="alice", password="x", token_auth=True
    )
    first = client.process()
    assert first.endswith(b",tokenauth=true")
    server.server.step(first)
    assert server.requests[0].token_auth


def test_callback_and_credentials_property(installed: None) -> None:
    asked: list[str] = []

    def callback(name: str) -> str:
        asked.append(name)
        return {"username": "alice", "password": USERS["alice"]}[name]

    exchange(
        SASLClient("broker", mechanism="SCRAM-SHA-256", callback=callback), Server("SCRAM-SHA-256")
    )
    assert asked == ["username", "password"]
    creds = ScramCredentials("alice", USERS["alice"])
    exchange(
        SASLClient("broker", mechanism="SCRAM-SHA-256", credentials=creds), Server("SCRAM-SHA-256")
    )
    with pytest.raises(SASLError, match="callback"):
        SASLClient("broker", mechanism="SCRAM-SHA-256").process()


def test_wrong_password_and_server_error(installed: None) -> None:
    """An ``e=`` server-final raises SASLProtocolException with the server's value."""
    server = Server("SCRAM-SHA-256", rfc_mode=True)
    client = SASLClient("broker", mechanism="SCRAM-SHA-256", username="alice", password="wrong-pw")
    server_first = server.server.step(client.process())
    with pytest.raises(AuthenticationFailed) as refused:
        server.server.step(client.process(server_first))
    assert refused.value.server_final is not None
    with pytest.raises(SASLProtocolException, match="e=invalid-proof") as info:
        client.process(refused.value.server_final)
    assert "wrong-pw" not in str(info.value)
    assert not client.complete


def test_forged_server_messages_are_refused(installed: None) -> None:
    client = SASLClient("broker", mechanism="SCRAM-SHA-256", username="alice", password="pw")
    client.process()
    # A server-first whose nonce does not extend ours.
    with pytest.raises(SASLProtocolException, match="nonce"):
        client.process(b"r=not-our-nonce,s=c2FsdHNhbHRzYWx0,i=4096")

    server = Server("SCRAM-SHA-256")
    client = SASLClient(
        "broker", mechanism="SCRAM-SHA-256", username="alice", password=USERS["alice"]
    )
    server_first = server.server.step(client.process())
    server.server.step(client.process(server_first))
    # A server-final with a signature made without the server key.
    with pytest.raises(SASLProtocolException, match="signature"):
        client.process(b"v=" + b"A" * 43 + b"=")
    assert not client.complete


def test_choose_mechanism_prefers_scram(installed: None) -> None:
    client = SASLClient("broker", username="alice", password="alice-secret")
    client.choose_mechanism(["PLAIN", "DIGEST-MD5", "SCRAM-SHA-256"], allow_anonymous=False)
    assert client.mechanism == "SCRAM-SHA-256"


def test_authorization_id_other_than_user_is_refused(installed: None) -> None:
    client = SASLClient(
        "broker", mechanism="SCRAM-SHA-256", authorization_id="bob", username="alice", password="p"
    )
    with pytest.raises(SASLError, match="authorization id"):
        client.process()


def test_install_is_reversible() -> None:
    assert "SCRAM-SHA-256" not in puresasl.mechanisms.mechanisms
    with pytest.raises(SASLError, match="Unknown mechanism"):
        SASLClient("broker", mechanism="SCRAM-SHA-256", username="u", password="p")
    pure_sasl.install()
    pure_sasl.install()  # idempotent
    assert pure_sasl.is_installed()
    pure_sasl.uninstall()
    pure_sasl.uninstall()  # a no-op now
    assert not pure_sasl.is_installed()
    assert "SCRAM-SHA-512" not in puresasl.mechanisms.mechanisms
