"""KIP-368 re-authentication for aiokafka 0.14, against the endpoint, through a TCP proxy.

The endpoint runs with ``connections.max.reauth.ms=2000``, so every session
lasts 2 s and a client that does not re-authenticate in-band is disconnected.
The proxy counts TCP connections: re-authentication must keep the one it has.
"""

from __future__ import annotations

import asyncio
import logging
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiokafka.conn
import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaConnectionError
from aiokafka.errors import SaslAuthenticationFailed
from aiokafka.protocol.metadata import MetadataRequest

import jaas
from sasl_scram.integrations import IntegrationError
from sasl_scram.integrations import PropertiesFileCredentials
from sasl_scram.integrations import ScramCredentials
from sasl_scram.integrations import StaticCredentials
from sasl_scram.integrations import aiokafka as scram_aiokafka
from tests.support.endpoint_harness import ALICE

from .conftest import ENDPOINT_LOGGER
from .conftest import TokenEndpoint
from .conftest import client_properties
from .conftest import make_token_endpoint
from .conftest import token_credentials
from .conftest import write_properties

AUTH_LINE = re.compile(r"\[(?P<conn>[^\]]+)\] (?P<re>re-)?authenticated User:(?P<user>\S+) with")
REAUTH_MS = 2000
OWN = {
    name: getattr(aiokafka.conn.AIOKafkaConnection, name)
    for name in ("authenticator_scram", "send", "_do_sasl_handshake")
}


@pytest.fixture
def installed() -> Iterator[None]:
    scram_aiokafka.install()
    yield
    scram_aiokafka.uninstall()
    for name, method in OWN.items():
        assert getattr(aiokafka.conn.AIOKafkaConnection, name) is method


class CountingProxy:
    """A TCP proxy on loopback that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._server: asyncio.Server | None = None
        self._target: tuple[str, int] = ("", 0)
        self._pipes: set[asyncio.Task[None]] = set()

    async def start(self, host: str, port: int) -> None:
        self._target = (host, port)
        self._server = await asyncio.start_server(self._accept, sock=self.sock)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        up_reader, up_writer = await asyncio.open_connection(*self._target)
        for src, dst in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.create_task(self._pipe(src, dst))
            self._pipes.add(task)
            task.add_done_callback(self._pipes.discard)

    @staticmethod
    async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        try:
            while data := await src.read(65536):
                dst.write(data)
                await dst.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            dst.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._pipes):
            task.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)


class RecordingFile(PropertiesFileCredentials):
    """The token file provider, noting which token id each login used."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.handed_out: list[str] = []

    def scram_credentials(self) -> ScramCredentials:
        credentials = super().scram_credentials()
        self.handed_out.append(credentials.username)
        return credentials


def token_file(path: Path, token: Any) -> Path:
    line = jaas.scram_token_login_line(token.token_id, token.hmac_base64)
    tmp = path.with_suffix(".tmp")
    write_properties(tmp, {"sasl.jaas.config": line})
    tmp.replace(path)  # atomic, as a token renewer would rotate it
    return path


@pytest.fixture
def proxied() -> Iterator[tuple[TokenEndpoint, CountingProxy]]:
    proxy = CountingProxy()
    props = {
        "connections.max.reauth.ms": str(REAUTH_MS),
        "advertised.listeners": f"SASL_PLAINTEXT://127.0.0.1:{proxy.port}",
    }
    try:
        for endpoint in make_token_endpoint(props):
            yield endpoint, proxy
    finally:
        proxy.sock.close()


def auth_lines(caplog: Any, since: int = 0) -> list[re.Match[str]]:
    return [m for m in map(AUTH_LINE.search, caplog.messages[since:]) if m]


@pytest.mark.slow
def test_reauthenticates_in_band_with_a_rotated_token_file(
    installed: None,
    proxied: tuple[TokenEndpoint, CountingProxy],
    tmp_path: Path,
    caplog: Any,
) -> None:
    endpoint, proxy = proxied
    caplog.set_level(logging.DEBUG, logger=ENDPOINT_LOGGER)
    old = endpoint.create_token()
    path = token_file(tmp_path / "token.properties", old)
    provider = RecordingFile(path)
    props = client_properties(endpoint.ep, None)
    props["bootstrap.servers"] = f"127.0.0.1:{proxy.port}"
    kwargs = scram_aiokafka.client_kwargs(props, credentials=provider)
    rotated_at: list[int] = []  # where the endpoint's log was at the rotation
    new_ids: list[str] = []

    async def run() -> tuple[int, int, int]:
        await proxy.start(endpoint.ep.host, endpoint.ep.port)
        admin = AIOKafkaAdminClient(**kwargs)
        await admin.start()
        try:
            await admin.describe_cluster()
            connections = proxy.accepted
            requests = 0
            start = time.monotonic()
            while time.monotonic() - start < 10:
                if not rotated_at and time.monotonic() - start > 4:
                    new = await asyncio.to_thread(endpoint.create_token)
                    token_file(path, new)
                    # The old token is gone: only the new one can log in from now on.
                    await asyncio.to_thread(endpoint.expire_token, old)
                    rotated_at.append(len(caplog.messages))
                    new_ids.append(new.token_id)
                await admin.describe_cluster()  # raises if any request fails
                requests += 1
                await asyncio.sleep(0.05)
            return connections, proxy.accepted, requests
        finally:
            await admin.close()
            await proxy.close()

    before, after, requests = asyncio.run(run())
    reauths = [m for m in auth_lines(caplog) if m["re"]]
    assert len(reauths) >= 3, [m.group(0) for m in auth_lines(caplog)]
    assert after == before, "a new TCP connection was opened"
    assert requests > 50
    # After the rotation, re-authentications succeed with the new token only.
    later = [m for m in auth_lines(caplog, rotated_at[0]) if m["re"]]
    assert later and all(m["user"] == "alice" for m in later)
    assert provider.handed_out[-1] == new_ids[0] and old.token_id in provider.handed_out
    assert not [m for m in caplog.messages if "failed" in m or "expired without" in m]


def metadata_request() -> MetadataRequest:
    return MetadataRequest([])


async def open_connection(endpoint: TokenEndpoint, provider: Any, **kwargs: Any) -> Any:
    """One aiokafka connection, logged in with our integration."""
    props = client_properties(endpoint.ep, None)
    client = scram_aiokafka.client_kwargs(props, credentials=provider)
    return await aiokafka.conn.create_conn(
        endpoint.ep.host,
        endpoint.ep.port,
        security_protocol=client["security_protocol"],
        sasl_mechanism=client["sasl_mechanism"],
        sasl_oauth_token_provider=client["sasl_oauth_token_provider"],
        **kwargs,
    )


class HeldReauthentication:
    """An async provider that holds the first re-authentication (its second
    call) open until ``release`` is set; ``asked`` tells when it is held."""

    def __init__(self, credentials: ScramCredentials) -> None:
        self.credentials = credentials
        self.asked = asyncio.Event()
        self.release = asyncio.Event()
        self.calls = 0

    async def __call__(self) -> ScramCredentials:
        self.calls += 1
        if self.calls == 2:
            self.asked.set()
            await self.release.wait()
        return self.credentials


@pytest.mark.slow
def test_requests_sent_during_reauthentication_wait_and_succeed(
    installed: None, reauth_endpoint: TokenEndpoint, reauth_token: Any, caplog: Any
) -> None:
    """A request sent while the exchange runs goes out after it, on the same connection."""
    credentials = token_credentials(reauth_token)
    mark = len(caplog.messages)  # after the token owner's own login

    async def run() -> tuple[int, list[str]]:
        provide = HeldReauthentication(credentials)
        conn = await open_connection(reauth_endpoint, provide)
        try:
            await conn.send(metadata_request())
            await asyncio.wait_for(provide.asked.wait(), 5)
            # The handshake is out; this request must not be written in the middle.
            pending = asyncio.ensure_future(conn.send(metadata_request()))
            await asyncio.sleep(0)  # one turn of the loop: the send runs up to its wait
            assert not pending.done()
            provide.release.set()
            response = await asyncio.wait_for(pending, 5)
            state = conn._sasl_scram_reauth
            return state.reauthentications, [b[1] for b in response.brokers]
        finally:
            conn.close()

    reauths, hosts = asyncio.run(run())
    assert reauths == 1 and hosts == ["127.0.0.1"]
    lines = auth_lines(caplog, mark)
    assert [m["re"] for m in lines] == [None, "re-"]
    assert lines[0]["conn"] == lines[1]["conn"]


@pytest.mark.slow
def test_closing_during_a_reauthentication_is_not_an_error(
    installed: None, reauth_endpoint: TokenEndpoint, caplog: Any
) -> None:
    """The application closes the connection (a consumer's stop()) while a
    re-authentication is under way: the exchange ends with the connection, waiting
    requests fail as on any close, and nothing is logged as a failure."""
    caplog.set_level(logging.DEBUG, logger=scram_aiokafka.log.name)
    credentials = token_credentials(reauth_endpoint.create_token())

    async def run() -> tuple[BaseException | None, BaseException | None]:
        provide = HeldReauthentication(credentials)
        conn = await open_connection(reauth_endpoint, provide)
        await conn.send(metadata_request())
        await asyncio.wait_for(provide.asked.wait(), 5)
        pending = asyncio.ensure_future(conn.send(metadata_request()))
        await asyncio.sleep(0)
        conn.close(reason=aiokafka.conn.CloseReason.SHUTDOWN)
        provide.release.set()
        state = conn._sasl_scram_reauth
        while state._task is not None:
            await asyncio.sleep(0.01)
        result = await asyncio.gather(pending, return_exceptions=True)
        return result[0], state.failure

    pending_error, failure = asyncio.run(run())
    assert isinstance(pending_error, KafkaConnectionError)
    assert isinstance(failure, KafkaConnectionError)
    ours = [r for r in caplog.records if r.name == scram_aiokafka.log.name]
    assert not [r for r in ours if r.levelno >= logging.WARNING], [r.getMessage() for r in ours]
    assert any("re-authentication ended: the connection closed" in r.getMessage() for r in ours)


@pytest.mark.slow
def test_failed_reauthentication_closes_the_connection(
    installed: None, reauth_endpoint: TokenEndpoint, reauth_token: Any, caplog: Any
) -> None:
    """An expired token fails the re-authentication: the connection closes as on a
    failed login, and the old credentials are not tried again on it."""
    token = reauth_token
    provider = StaticCredentials(token_credentials(token))

    async def run() -> tuple[Any, BaseException]:
        closed: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def on_close(conn: Any, reason: Any) -> None:
            closed.set_result(reason)

        conn = await open_connection(reauth_endpoint, provider, on_close=on_close)
        await conn.send(metadata_request())
        await asyncio.to_thread(reauth_endpoint.expire_token, token)
        reason = await asyncio.wait_for(closed, 5)
        with pytest.raises(KafkaConnectionError) as info:
            await conn.send(metadata_request())
        state = conn._sasl_scram_reauth
        assert isinstance(state.failure, SaslAuthenticationFailed)
        return reason, info.value

    reason, _ = asyncio.run(run())
    assert reason == aiokafka.conn.CloseReason.AUTH_FAILURE
    # One refused re-authentication on the endpoint, one error on the client.
    # The endpoint logs Kafka's "Failed authentication with /HOST:PORT (...)" line.
    failed = [
        r
        for r in caplog.records
        if "re-authentication failed" in r.getMessage()
        or "Failed authentication with" in r.getMessage()
    ]
    assert sorted(r.name for r in failed) == [ENDPOINT_LOGGER, scram_aiokafka.log.name]
    assert token.hmac_base64 not in " ".join(caplog.messages)


def test_reauthentication_delay_follows_kafkas_java_client() -> None:
    from sasl_scram.integrations._aiokafka_reauth import reauth_delay_ms

    assert reauth_delay_ms(2000, 0.0) == 1700
    assert reauth_delay_ms(2000, 0.5) == 1800
    assert reauth_delay_ms(2000, 0.999) == 1899
    with pytest.raises(ValueError):
        reauth_delay_ms(0, 0.5)


def test_install_refuses_an_aiokafka_with_other_internals(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def handshake(self: Any) -> None:  # not a coroutine function any more
        return None

    monkeypatch.setattr(aiokafka.conn.AIOKafkaConnection, "_do_sasl_handshake", handshake)
    with pytest.raises(IntegrationError, match=r"_do_sasl_handshake.*supports aiokafka 0\.14"):
        scram_aiokafka.install()
    assert not scram_aiokafka.is_installed()
    monkeypatch.undo()
    with scram_aiokafka.installed():
        assert scram_aiokafka.is_installed()


def test_connections_without_a_lifetime_do_not_reauthenticate(
    installed: None, token_endpoint: TokenEndpoint
) -> None:
    """A user login on an endpoint without connections.max.reauth.ms: lifetime 0."""
    provider = StaticCredentials(ScramCredentials(*ALICE))

    async def run() -> tuple[int, Any]:
        conn = await open_connection(token_endpoint, provider)
        try:
            await conn.send(metadata_request())
            state = conn._sasl_scram_reauth
            return state.session_lifetime_ms, state._timer
        finally:
            conn.close()

    assert asyncio.run(run()) == (0, None)


def test_uninstall_stops_the_schedules_of_open_connections(
    reauth_endpoint: TokenEndpoint,
) -> None:
    provider = StaticCredentials(token_credentials(reauth_endpoint.create_token()))

    async def run() -> tuple[bool, bool, bool]:
        with scram_aiokafka.installed():
            conn = await open_connection(reauth_endpoint, provider)
            state = conn._sasl_scram_reauth
            scheduled = state._timer is not None
        try:
            timer = state._timer
            return scheduled, timer is None or timer.cancelled(), state._cancelled
        finally:
            conn.close()

    assert asyncio.run(run()) == (True, True, True)
    for name, method in OWN.items():
        assert getattr(aiokafka.conn.AIOKafkaConnection, name) is method
