"""Interop with SCRAM implementations nobody on this project wrote: scramp and kafka-python."""

from __future__ import annotations

import pytest
import scramp
from kafka.net.sasl.scram import ScramClient as KafkaPythonScramClient

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SCRAM_SHA_512
from sasl_scram import AuthenticationFailed
from sasl_scram import Grant
from sasl_scram import ScramClient
from sasl_scram import ScramCredential
from sasl_scram import ScramMechanism
from sasl_scram import ScramServer

MECHS = [SCRAM_SHA_256, SCRAM_SHA_512]
USER = "alice,=x"
PASSWORD = "pässword-ü"


def our_server(mech: ScramMechanism, cred: ScramCredential) -> ScramServer:
    return ScramServer(mech, lookup=lambda r: Grant.of(cred) if r.username == USER else None)


@pytest.mark.parametrize("mech", MECHS)
def test_scramp_client_against_our_server(mech: ScramMechanism) -> None:
    cred = ScramCredential.from_password(mech, PASSWORD)
    server = our_server(mech, cred)
    client = scramp.ScramClient([mech.mechanism_name], USER, PASSWORD)
    s1 = server.step(client.get_client_first().encode())
    client.set_server_first(s1.decode())
    s2 = server.step(client.get_client_final().encode())
    client.set_server_final(s2.decode())  # raises unless our signature verifies
    assert server.session.username == USER


@pytest.mark.parametrize("mech", MECHS)
def test_scramp_client_wrong_password(mech: ScramMechanism) -> None:
    server = our_server(mech, ScramCredential.from_password(mech, PASSWORD))
    client = scramp.ScramClient([mech.mechanism_name], USER, "nope")
    client.set_server_first(server.step(client.get_client_first().encode()).decode())
    with pytest.raises(AuthenticationFailed):
        server.step(client.get_client_final().encode())


@pytest.mark.parametrize("mech", MECHS)
def test_our_client_against_scramp_server(mech: ScramMechanism) -> None:
    m = scramp.ScramMechanism(mech.mechanism_name)
    auth_info: tuple[bytes, bytes, bytes, int] = m.make_auth_info(PASSWORD, iteration_count=4096)

    def auth_fn(username: str) -> tuple[bytes, bytes, bytes, int]:
        assert username == USER
        return auth_info

    server = m.make_server(auth_fn)
    client = ScramClient(mech, USER, PASSWORD, key_cache=None)
    server.set_client_first(client.client_first().decode())
    final = client.receive_server_first(server.get_server_first().encode())
    server.set_client_final(final.decode())
    client.receive_server_final(server.get_server_final().encode())
    assert client.complete


@pytest.mark.parametrize("mech", MECHS)
def test_scramp_server_error_reaches_our_client(mech: ScramMechanism) -> None:
    m = scramp.ScramMechanism(mech.mechanism_name)
    server = m.make_server(lambda u: m.make_auth_info("other", iteration_count=4096))
    client = ScramClient(mech, USER, PASSWORD, key_cache=None)
    server.set_client_first(client.client_first().decode())
    final = client.receive_server_first(server.get_server_first().encode())
    with pytest.raises(scramp.ScramException):
        server.set_client_final(final.decode())
    from sasl_scram import ScramServerError

    with pytest.raises(ScramServerError) as info:
        client.receive_server_final(server.get_server_final().encode())
    assert info.value.error == "invalid-proof"


@pytest.mark.parametrize("mech", MECHS)
def test_credentials_agree_with_scramp(mech: ScramMechanism) -> None:
    salt = b"0123456789abcdef"
    _salt, stored, server_key, it = scramp.ScramMechanism(mech.mechanism_name).make_auth_info(
        "ascii-password", iteration_count=4096, salt=salt
    )
    ours = ScramCredential.from_password(mech, "ascii-password", salt=salt)
    assert (ours.stored_key, ours.server_key, ours.iterations) == (stored, server_key, it)


@pytest.mark.parametrize("mech", MECHS)
def test_kafka_python_client_against_our_server(mech: ScramMechanism) -> None:
    # kafka-python neither escapes user names nor supports extensions: plain user here.
    cred = ScramCredential.from_password(mech, PASSWORD)
    server = ScramServer(mech, lookup=lambda r: Grant.of(cred) if r.username == "alice" else None)
    client = KafkaPythonScramClient("alice", PASSWORD, mech.mechanism_name)
    client.process_server_first_message(server.step(client.first_message()))
    s2 = server.step(client.final_message())
    client.process_server_final_message(s2)  # raises ValueError on a bad signature
    assert server.session.username == "alice"


@pytest.mark.parametrize("mech", MECHS)
def test_kafka_python_wrong_password(mech: ScramMechanism) -> None:
    cred = ScramCredential.from_password(mech, PASSWORD)
    server = ScramServer(mech, lookup=lambda r: Grant.of(cred))
    client = KafkaPythonScramClient("alice", "wrong", mech.mechanism_name)
    client.process_server_first_message(server.step(client.first_message()))
    with pytest.raises(AuthenticationFailed):
        server.step(client.final_message())
