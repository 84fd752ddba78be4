"""One fuzz target per input surface that a peer or a file reaches.

Each target takes arbitrary bytes and feeds them to the real parser, the way
the program does. What it checks, for every input:

- only the surface's documented error types leave the parser (anything else
  propagates and is a crash);
- the parser answers within ``TIME_LIMIT_S`` (``SlowInput`` otherwise);
- memory stays bounded (the fuzzer's ``-rss_limit_mb`` and ``-malloc_limit_mb``).

``TARGETS`` is the one table: ``fuzz/run.py`` runs each under atheris,
``fuzz/seeds.py`` writes their seed corpora, and the suite replays the
committed corpus and every saved crash through them (``tests/fuzz/``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jaas
from fuzz.front_door import front_door
from sasl_scram import SCRAM_SHA_256
from sasl_scram import SCRAM_SHA_512
from sasl_scram import ClientFinalMessage
from sasl_scram import ClientFirstMessage
from sasl_scram import Grant
from sasl_scram import ScramClient
from sasl_scram import ScramCredential
from sasl_scram import ScramError
from sasl_scram import ScramServer
from sasl_scram import ServerFinalMessage
from sasl_scram import ServerFirstMessage
from sasl_scram import saslprep
from sasl_scram.authz import ACL_CHANGES_PATH
from sasl_scram.authz import EXTENDED_ACL_CHANGES_PATH
from sasl_scram.authz import AuthzError
from sasl_scram.authz import decode_acl_node
from sasl_scram.authz import decode_change
from sasl_scram.config import KafkaPrincipal
from sasl_scram.config import parse_properties
from sasl_scram.endpoint import ApiCall
from sasl_scram.endpoint import Close
from sasl_scram.endpoint import CloseRequest
from sasl_scram.endpoint import CredentialNeeded
from sasl_scram.endpoint import EndpointConfig
from sasl_scram.endpoint import RequestContext
from sasl_scram.endpoint import ScramEndpoint
from sasl_scram.endpoint import Send
from sasl_scram.endpoint import ServerConnection
from sasl_scram.endpoint import load_extensions
from sasl_scram.kafka import decode_response
from sasl_scram.kafka import encode_request
from sasl_scram.store import InMemoryCredentialStore
from sasl_scram.store import ScramUpsertion
from sasl_scram.store import open_acl_store
from sasl_scram.store.zookeeper import MalformedZnode
from sasl_scram.store.zookeeper import credentials_from_config
from sasl_scram.store.zookeeper import decode_config
from sasl_scram.store.zookeeper import notification_user
from tokenauth import MalformedToken
from tokenauth import decode_token

__all__ = ["TARGETS", "TIME_LIMIT_S", "SlowInput", "Target", "run_one"]

#: No input may take longer than this (the fuzzing bound of docs/security.md,
#: "Measured reliability: fuzzing and soak"). Measured in CPU time
#: of the whole process (handler threads included), so that other processes on
#: a busy machine do not make findings, and confirmed by a rerun.
TIME_LIMIT_S = 0.1

_USER = "alice"
_PASSWORD = "alice-secret"  # noqa: S105 - the fuzz harness's own user
_CREDENTIALS = {
    m: ScramCredential.from_password(m, _PASSWORD, salt=b"fuzz-salt-0123456789")
    for m in (SCRAM_SHA_256, SCRAM_SHA_512)
}


class SlowInput(AssertionError):
    """An input took longer than ``TIME_LIMIT_S`` twice in a row."""


@dataclass(frozen=True)
class Target:
    name: str
    run: Callable[[bytes], object]
    #: The error types the surface documents; anything else is a defect.
    allowed: tuple[type[BaseException], ...]
    doc: str


class _Endpoint:
    """A real ``ScramEndpoint`` (credentials in memory, tokens in SQLite) whose
    handlers answer the fuzzed connections. It is started once, so Metadata
    knows its address, but nothing ever connects to it: the bytes go straight
    into a sans-IO :class:`ServerConnection` with the endpoint's settings."""

    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="kafka-scram-fuzz-")
        props = {
            "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
            "scram.credential.store.path": f"{self.dir}/credentials.db",
            "super.users": f"User:{_USER}",
            "delegation.token.secret.key": "fuzz-token-secret",
            # The edge's ACLs, kept in the SQLite file: the ACL RPCs are served.
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        }
        config = EndpointConfig.from_properties(props)
        store = InMemoryCredentialStore()
        store.alter([], [ScramUpsertion.from_password(_USER, m, _PASSWORD) for m in _CREDENTIALS])
        self.acl_store = open_acl_store(config.store)
        self.endpoint = ScramEndpoint(
            config,
            store,
            extensions=load_extensions(props, config.settings),
            acl_store=self.acl_store,
        )
        self.loop = asyncio.new_event_loop()
        self.loop.run_until_complete(self.endpoint.start())
        self.ids = itertools.count()

    def connection(self) -> ServerConnection:
        return ServerConnection(self.endpoint.settings, self.endpoint.clock_ms)

    def drive(self, conn: ServerConnection, outputs: list[Any]) -> list[Send]:
        """Answer the connection as the server does; the handlers run for real.

        A handler that raises is a finding, ``serve`` would log its traceback,
        except ``CloseRequest``: a request Kafka would not parse, on which
        ``serve`` closes the connection."""
        sent: list[Send] = []
        queue = list(outputs)
        while queue:
            item = queue.pop(0)
            if isinstance(item, Send):
                sent.append(item)
            elif isinstance(item, CredentialNeeded):
                grant = self.endpoint.grant(item.request, "fuzz")
                queue.extend(conn.provide_credential(grant))
            elif isinstance(item, ApiCall):
                try:
                    body = self.loop.run_until_complete(self._call(item))
                except CloseRequest:
                    break
                queue.extend(conn.respond(body))
            elif isinstance(item, Close):
                break
        return sent

    async def _call(self, call: ApiCall) -> dict[str, Any]:
        handler = self.endpoint.handler(call.header.api_key)
        assert handler is not None, call.header.api_key
        ctx = RequestContext(
            principal=KafkaPrincipal.user(call.session.authorization_id),
            session=call.session,
            security_protocol="SASL_PLAINTEXT",
            listener_name="SASL_PLAINTEXT",
            super_user=call.super_user,
            client_id=call.header.client_id,
            connection_id=f"fuzz-{next(self.ids)}",
        )
        return await handler(ctx, call.header.api_version, call.body)

    def login(self, conn: ServerConnection) -> None:
        """A valid SCRAM-SHA-256 login, as Kafka's Java client makes it."""
        client = ScramClient(SCRAM_SHA_256, _USER, _PASSWORD)
        handshake = encode_request(17, 1, 1, "fuzz", {"mechanism": "SCRAM-SHA-256"})
        self.drive(conn, conn.receive(handshake))
        message = client.client_first()
        for correlation_id in (2, 3):
            request = encode_request(36, 2, correlation_id, "fuzz", {"auth_bytes": message})
            (answer,) = self.drive(conn, conn.receive(request))
            body = decode_response(36, 2, answer.data[4:])[1]
            message = client.step(body["auth_bytes"]) or b""
        if not client.complete:
            raise RuntimeError("the fuzz harness's own login failed")

    def close(self) -> None:
        self.loop.run_until_complete(self.endpoint.close(grace_seconds=0))
        self.loop.close()
        self.acl_store.close()
        shutil.rmtree(self.dir, ignore_errors=True)


#: Inputs one endpoint serves before a fresh one replaces it. The tokens the
#: inputs create (CreateDelegationToken) stay in its store, and every
#: DescribeDelegationToken answers with all of them: without a refresh, each
#: input costs more than the last until an innocent one passes the time limit
#: (found by the first ten-minute run, 300 s in).
REFRESH_EVERY = 1000
_endpoint: _Endpoint | None = None
_served_inputs = 0


def _served() -> _Endpoint:
    global _endpoint, _served_inputs
    _served_inputs += 1
    if _endpoint is not None and _served_inputs > REFRESH_EVERY:
        _endpoint.close()
        _endpoint = None
    if _endpoint is None:
        _endpoint = _Endpoint()
        _served_inputs = 1
    return _endpoint


def _frames_before_auth(data: bytes) -> None:
    """A connection's bytes as ``serve`` receives them before a login."""
    served = _served()
    conn = served.connection()
    served.drive(conn, conn.receive(data))


def _frames_after_auth(data: bytes) -> None:
    """The same after a login: KIP-554, Metadata, the token RPCs (38-41) and the
    ACL RPCs (29-31)."""
    served = _served()
    conn = served.connection()
    served.login(conn)
    served.drive(conn, conn.receive(data))


def _server_messages(data: bytes) -> None:
    """Both of the server's parsers on the whole input, then a live server on its
    two halves. Each parser is tried on its own: an input one refuses still
    reaches the others."""
    with contextlib.suppress(ScramError):
        ClientFirstMessage.parse(data)
    with contextlib.suppress(ScramError):
        ClientFinalMessage.parse(data)
    server = ScramServer(SCRAM_SHA_256, lookup=lambda r: Grant.of(_CREDENTIALS[SCRAM_SHA_256]))
    half = len(data) // 2
    server.step(data[:half])
    server.step(data[half:])


#: The live client's iteration cap: an input may ask for up to this many PBKDF2
#: rounds (a real client's cap, a million, would make every such input a slow one).
_CLIENT_MAX_ITERATIONS = 8192


def _client_messages(data: bytes) -> None:
    """Both of the client's parsers on the whole input, then a live client that
    takes it as the server-first message (its nonce must extend ``fuzz``)."""
    with contextlib.suppress(ScramError):
        ServerFirstMessage.parse(data)
    with contextlib.suppress(ScramError):
        ServerFinalMessage.parse(data)
    client = ScramClient(
        SCRAM_SHA_256,
        _USER,
        _PASSWORD,
        nonce_factory=lambda: "fuzz",
        key_cache=None,
        max_iterations=_CLIENT_MAX_ITERATIONS,
    )
    client.client_first()
    client.receive_server_first(data)


def _jaas(data: bytes) -> None:
    text = data.decode("utf-8", "replace")
    try:
        jaas.parse_property(text)
    finally:
        jaas.parse_file(text)


def _properties(data: bytes) -> None:
    # The bytes, as every file is read: ISO-8859-1, as Kafka's Properties.load(InputStream).
    parse_properties(data)


def _credential_znode(data: bytes) -> None:
    credentials_from_config(decode_config(data), "fuzz")
    notification_user(data)


def _acl_znode(data: bytes) -> None:
    """An ACL node's data, and a change node's under each of the two change
    paths (``AclAuthorizer``'s layout, which the ZooKeeper ACL store follows)."""
    try:
        decode_acl_node(data)
    finally:
        try:
            decode_change(f"{ACL_CHANGES_PATH}/acl_changes_0000000001", data)
        finally:
            decode_change(f"{EXTENDED_ACL_CHANGES_PATH}/acl_changes_0000000001", data)


def _token_znode(data: bytes) -> None:
    decode_token(data)


def _saslprep(data: bytes) -> None:
    saslprep(data.decode("utf-8", "replace"))


TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target("frames_before_auth", _frames_before_auth, (), "a connection before login"),
        Target("frames_after_auth", _frames_after_auth, (), "a connection after login"),
        Target("front_door", front_door, (), "a forwarded connection: client and cluster"),
        Target("server_scram", _server_messages, (ScramError,), "client-first, client-final"),
        Target("client_scram", _client_messages, (ScramError,), "server-first, server-final"),
        Target("jaas", _jaas, (jaas.JaasError,), "sasl.jaas.config values and JAAS files"),
        Target("properties", _properties, (ScramError,), ".properties files"),
        Target("credential_znode", _credential_znode, (MalformedZnode,), "/config/users JSON"),
        Target("token_znode", _token_znode, (MalformedToken,), "/delegation_token JSON"),
        Target("acl_znode", _acl_znode, (AuthzError,), "/kafka-acl and ACL change nodes"),
        Target("saslprep", _saslprep, (ScramError, ValueError), "SASLprep (RFC 4013)"),
    )
}


def run_one(target: Target, data: bytes) -> None:
    """Feed ``data`` to ``target``: documented errors pass, a slow input raises."""
    for attempt in range(2):
        start = time.process_time()
        with contextlib.suppress(*target.allowed):
            target.run(data)
        if time.process_time() - start <= TIME_LIMIT_S:
            return
        if attempt == 1:
            raise SlowInput(f"{target.name}: {len(data)} bytes took over {TIME_LIMIT_S} s twice")
