"""Names a peer chooses cannot forge lines in ``serve``'s log (docs/security.md).

A real ``kafka-scram serve`` at DEBUG, over the wire: logins claiming names with line
breaks, other C0 and C1 controls, U+2028 and ANSI escapes (with ``,`` and ``=``, which
SCRAM escapes as ``=2C`` and ``=3D``), the same text as a mechanism and a client id,
and users with such names who log in, or re-authenticate as someone else. Each claim
carries a whole fake log line; afterwards every line of the log must be one record
of ``serve``'s format with no control character in it, and no line the fake one.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram import escape_username
from sasl_scram.endpoint.login._protocol import loggable
from sasl_scram.kafka import encode_request
from sasl_scram.store import SQLiteCredentialStore
from tests.sasl_scram.endpoint.serve_process import SASL_AUTHENTICATE
from tests.sasl_scram.endpoint.serve_process import SASL_HANDSHAKE
from tests.sasl_scram.endpoint.serve_process import Peer
from tests.sasl_scram.endpoint.serve_process import Serve
from tests.support.endpoint_harness import ALICE
from tests.support.endpoint_harness import seed_users

#: A whole log record in serve's format (``%(asctime)s %(levelname)s %(name)s``), dated
#: so that no real record can start with it.
FORGED = (
    "2001-01-01 00:00:00,000 INFO sasl_scram.endpoint [SASL_PLAINTEXT-0] authenticated User:admin"
)
_CONTROLS = "".join(map(chr, [*range(1, 32), 0x7F]))
CLAIMS = [
    "\n" + FORGED,
    "\r" + FORGED,
    "\r\n" + FORGED,
    "a,b=c\n" + FORGED,
    "eve" + _CONTROLS + FORGED,
    "\x1b[2K\x1b[1G" + FORGED + "\x1b]0;title\x07",
    "\u2028" + FORGED,
    "\u2029\x85\x9b" + FORGED,
]
#: Users who exist, with control characters in their names.
USERS = [("ok\n" + FORGED, "pw-one"), ("ok\r\x1b[1A" + FORGED, "pw-two")]
_RECORD = re.compile(
    r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.]+ \S"
)
# What a terminal or a line-based reader takes as a line break or a control.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serve]:
    tmp = tmp_path_factory.mktemp("forging")
    db = tmp / "data" / "creds.db"
    _seed(db)
    properties = {
        "connections.max.reauth.ms": "60000",
        "connection.failed.authentication.delay.ms": "0",
    }
    with Serve(tmp, db, properties, args=["--log-level", "DEBUG"]) as serve:
        yield serve


def _seed(db: Path) -> None:
    db.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    store = SQLiteCredentialStore(db, poll_interval=0)
    try:
        seed_users(store, [ALICE, *USERS])
    finally:
        store.close()


def _claim(port: int, name: str, mechanism: str = "SCRAM-SHA-256") -> None:
    """A login as ``name`` with a wrong proof, ``name`` also the client id."""
    with Peer(port) as peer:
        try:
            peer.sock.sendall(encode_request(SASL_HANDSHAKE, 1, 1, name, {"mechanism": mechanism}))
            if peer.receive(SASL_HANDSHAKE, 1)["error_code"] != 0:
                return
            first = b"n,,n=" + escape_username(name).encode() + b",r=forgery"
            answer = peer.call(SASL_AUTHENTICATE, 2, {"auth_bytes": first})
            if answer["error_code"] != 0:
                return
            nonce = bytes(answer["auth_bytes"]).decode().split(",")[0][2:]
            proof = base64.b64encode(bytes(32)).decode()
            final = f"c=biws,r={nonce},p={proof}".encode()
            peer.call(SASL_AUTHENTICATE, 2, {"auth_bytes": final})
        except ConnectionError:
            pass  # closed without an answer: the log is checked all the same


def _assert_no_forged_line(serve: Serve) -> None:
    text = serve.log_text()
    lines = text.split("\n")
    assert lines[-1] == "", "the log ends mid-line"
    for line in lines[:-1]:
        assert _RECORD.match(line), f"not one of serve's records: {line!r}"
        assert not _UNSAFE.search(line), f"a control character in: {line!r}"
        assert not line.startswith(FORGED[:23]), f"a forged line: {line!r}"


def test_claimed_names_cannot_forge_log_lines(server: Serve) -> None:
    for name in CLAIMS:
        _claim(server.port, name)
        _claim(server.port, name, mechanism=name)
    _claim(server.port, "sentinel")
    server.wait_for_log("'sentinel'")
    # Each name SCRAM can carry (ASCII) is in the log, escaped.
    text = server.log_text()
    for name in CLAIMS:
        if name.isascii():
            assert repr(name) in text, name
    _assert_no_forged_line(server)


def test_users_named_with_controls_cannot_forge_log_lines(server: Serve) -> None:
    for name, password in USERS:
        with Peer(server.port) as peer:
            assert peer.login(name, password)["error_code"] == 0
            # KIP-368: re-authenticating as another user is refused and logged.
            assert peer.login(*ALICE)["error_code"] == 58
        with Peer(server.port) as peer:
            assert peer.login(*ALICE)["error_code"] == 0
            assert peer.login(name, password)["error_code"] == 58
    _claim(server.port, "sentinel-users")
    server.wait_for_log("'sentinel-users'")
    _assert_no_forged_line(server)
    assert SCRAM_SHA_256.mechanism_name in server.log_text()


def test_loggable_escapes_only_what_is_not_printable() -> None:
    assert loggable("alice é") == "alice é"
    assert loggable("a\\nb") == "a\\nb"
    # Once escaping, a backslash is escaped too: the two names stay distinct in the log.
    assert loggable("a\nb\\n") == "a\\nb\\\\n"
    assert loggable("\x1b[1A\u2028\u202e") == "\\x1b[1A\\u2028\\u202e"
