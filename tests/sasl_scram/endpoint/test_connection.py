"""The sans-IO connection state machine: Kafka's per-connection SASL rules."""

from __future__ import annotations

from typing import Any

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SCRAM_SHA_512
from sasl_scram import Grant
from sasl_scram import ScramClient
from sasl_scram import ScramCredential
from sasl_scram import ScramMechanism
from sasl_scram.endpoint import ApiCall
from sasl_scram.endpoint import Authenticated
from sasl_scram.endpoint import Close
from sasl_scram.endpoint import ConnectionSettings
from sasl_scram.endpoint import CredentialNeeded
from sasl_scram.endpoint import EndpointConfig
from sasl_scram.endpoint import Send
from sasl_scram.endpoint import ServerConnection
from sasl_scram.endpoint.login._connection import advertised_versions
from sasl_scram.kafka import FrameBuffer
from sasl_scram.kafka import decode_response
from sasl_scram.kafka import encode_request
from sasl_scram.kafka import frame
from tests.support.clock import FakeClock

KEYS = [3, 17, 18, 36, 50, 51]
CRED = {m: ScramCredential.from_password(m, "alice-secret") for m in (SCRAM_SHA_256, SCRAM_SHA_512)}
#: serve's defaults, from its key table.
SERVE = EndpointConfig.from_properties({"scram.credential.store.path": "x.db"}, ())
GENERIC = (
    "Authentication failed during authentication due to invalid credentials with SASL mechanism {}"
)


class Peer:
    """Drives a ServerConnection with encoded requests, answering its steps."""

    def __init__(self, max_reauth_ms: int = 0, max_receive: int | None = None) -> None:
        self.clock = FakeClock(1_000_000)
        self.conn = ServerConnection(
            ConnectionSettings(
                mechanisms=(SCRAM_SHA_256, SCRAM_SHA_512),
                api_versions=advertised_versions(KEYS),
                sasl_max_receive=max_receive or SERVE.sasl_max_receive,
                max_request=SERVE.max_request,
                user_max_request=SERVE.user_max_request,
                user_max_array=SERVE.user_max_array,
                max_reauth_ms=max_reauth_ms,
                legacy_librdkafka_nonce=SERVE.legacy_librdkafka_nonce,
            ),
            self.clock,
        )
        self.corr = 0
        self.outputs: list[Any] = []
        self.grant_expiry: int | None = None
        self.users = {"alice": CRED}

    def feed(self, data: bytes) -> list[Any]:
        out = self._resolve(self.conn.receive(data))
        self.outputs.extend(out)
        return out

    def _resolve(self, outputs: list[Any]) -> list[Any]:
        done: list[Any] = []
        queue = list(outputs)
        while queue:
            item = queue.pop(0)
            done.append(item)
            if isinstance(item, CredentialNeeded):
                req = item.request
                creds = self.users.get(req.username)
                grant = (
                    Grant.of(creds[req.mechanism], expiry_ms=self.grant_expiry) if creds else None
                )
                queue.extend(self.conn.provide_credential(grant))
            elif isinstance(item, ApiCall):
                queue.extend(self.conn.respond({"brokers": [], "topics": []}))
        return done

    def request(
        self, key: int, version: int, body: dict[str, Any]
    ) -> tuple[list[Any], dict[str, Any] | None]:
        self.corr += 1
        out = self.feed(encode_request(key, version, self.corr, "test", body))
        sends = [o for o in out if isinstance(o, Send)]
        if not sends:
            return out, None
        buf = FrameBuffer(1 << 20)
        buf.feed(sends[0].data)
        payload = buf.next_frame()
        assert payload is not None
        corr, response = decode_response(key, version, payload)
        assert corr == self.corr
        return out, response

    def login(
        self,
        mech: ScramMechanism = SCRAM_SHA_256,
        password: str = "alice-secret",  # noqa: S107
        user: str = "alice",
        auth_version: int = 2,
        versions: bool = True,
    ) -> tuple[list[Any], dict[str, Any] | None]:
        if versions:
            self.request(18, 3, {"client_software_name": "t", "client_software_version": "1"})
        _, hs = self.request(17, 1, {"mechanism": mech.mechanism_name})
        assert hs is not None and hs["error_code"] == 0
        client = ScramClient(mech, user, password, key_cache=None)
        _, r1 = self.request(36, auth_version, {"auth_bytes": client.client_first()})
        assert r1 is not None and r1["error_code"] == 0
        out, r2 = self.request(
            36, auth_version, {"auth_bytes": client.receive_server_first(r1["auth_bytes"])}
        )
        if r2 is not None and r2["error_code"] == 0:
            client.receive_server_final(r2["auth_bytes"])
        return out, r2


@pytest.mark.parametrize("mech", [SCRAM_SHA_256, SCRAM_SHA_512])
def test_login_then_any_api(mech: ScramMechanism) -> None:
    p = Peer()
    out, r = p.login(mech)
    assert r is not None and r["error_code"] == 0 and r["session_lifetime_ms"] == 0
    assert any(isinstance(o, Authenticated) for o in out)
    assert p.conn.authenticated and p.conn.session is not None
    out, _ = p.request(3, 12, {"topics": None})
    assert any(isinstance(o, ApiCall) for o in out)
    _, versions = p.request(18, 4, {"client_software_name": "t", "client_software_version": "1"})
    assert versions is not None and versions["error_code"] == 0


def test_handshake_may_come_first_without_api_versions() -> None:
    p = Peer()
    _, r = p.login(versions=False)
    assert r is not None and r["error_code"] == 0


def test_api_versions_lists_every_key_with_minimum_zero() -> None:
    _, r = Peer().request(18, 0, {})
    assert r is not None
    keys = {k["api_key"]: (k["min_version"], k["max_version"]) for k in r["api_keys"]}
    assert keys[17] == (0, 1) and keys[36] == (0, 2) and keys[18] == (0, 4)
    assert set(keys) == set(KEYS)


def test_api_versions_too_new_gets_v0_error_35_and_state_is_kept() -> None:
    p = Peer()
    out = p.feed(
        encode_request(18, 4, 1, "c", {}).replace(b"\x00\x12\x00\x04", b"\x00\x12\x00\x09", 1)
    )
    assert isinstance(out[0], Send) and not p.conn.closed
    corr, body = decode_response(18, 9, out[0].data[4:])
    assert corr == 1 and body["error_code"] == 35
    assert body["api_keys"] == [{"api_key": 18, "min_version": 0, "max_version": 4}]
    _, r = p.login()
    assert r is not None and r["error_code"] == 0


def test_api_versions_bad_software_name_is_invalid_request() -> None:
    # ApiVersionsRequest.getErrorResponse: no API keys but for UNSUPPORTED_VERSION.
    p = Peer()
    _, r = p.request(18, 3, {"client_software_name": "-bad-", "client_software_version": "1"})
    assert r is not None and r["error_code"] == 42 and r["api_keys"] == []
    _, r = p.request(18, 3, {"client_software_name": "t", "client_software_version": "1"})
    assert r is not None and r["error_code"] == 0 and r["api_keys"]


def test_unsupported_mechanism_lists_enabled_and_closes() -> None:
    p = Peer()
    out, r = p.request(17, 1, {"mechanism": "PLAIN"})
    assert r == {"error_code": 33, "mechanisms": ["SCRAM-SHA-256", "SCRAM-SHA-512"]}
    assert isinstance(out[-1], Close) and p.conn.closed


def test_other_api_before_handshake_closes_without_response() -> None:
    p = Peer()
    out, r = p.request(3, 1, {"topics": None})
    assert r is None and isinstance(out[0], Close)


def test_other_api_after_handshake_gets_illegal_sasl_state_then_close() -> None:
    p = Peer()
    p.request(17, 1, {"mechanism": "SCRAM-SHA-256"})
    out, r = p.request(50, 0, {"users": None})
    assert r is not None and r["error_code"] == 34 and isinstance(out[-1], Close)


def test_api_versions_after_successful_api_versions_closes() -> None:
    p = Peer()
    p.request(18, 3, {"client_software_name": "t", "client_software_version": "1"})
    out, r = p.request(18, 3, {"client_software_name": "t", "client_software_version": "1"})
    assert r is None and isinstance(out[-1], Close)


@pytest.mark.parametrize(("user", "password"), [("alice", "wrong"), ("nobody", "x")])
@pytest.mark.parametrize("mech", [SCRAM_SHA_256, SCRAM_SHA_512])
def test_failed_login_gets_58_generic_message_and_close(
    user: str, password: str, mech: ScramMechanism
) -> None:
    p = Peer()
    out, r = p.login(mech, password=password, user=user)
    assert r is not None
    assert r["error_code"] == 58 and r["error_message"] == GENERIC.format(mech.mechanism_name)
    assert r["auth_bytes"] == b"" and r["session_lifetime_ms"] == 0
    assert isinstance(out[-1], Close) and p.conn.closed


def test_authzid_mismatch_gets_kafkas_specific_message() -> None:
    p = Peer()
    p.request(17, 1, {"mechanism": "SCRAM-SHA-256"})
    _, r = p.request(36, 2, {"auth_bytes": b"n,a=bob,n=alice,r=abc"})
    assert r is not None and r["error_code"] == 58
    assert r["error_message"] == (
        "Authentication failed: Client requested an authorization id that is different "
        "from username"
    )


# KafkaApis answers both with 34 and keeps the connection
# (tests/sasl_scram/endpoint/test_sasl_requests_vs_kafka.py compares a broker).
def test_sasl_authenticate_after_success_is_illegal_and_the_session_stays() -> None:
    p = Peer()
    p.login()
    out, r = p.request(36, 2, {"auth_bytes": b"x"})
    assert r is not None and r["error_code"] == 34
    assert r["error_message"] == "SaslAuthenticate request received after successful authentication"
    assert not any(isinstance(o, Close) for o in out) and not p.conn.closed
    out, _ = p.request(3, 12, {"topics": None})
    assert any(isinstance(o, ApiCall) for o in out)


def test_handshake_without_session_expiry_is_illegal_and_the_session_stays() -> None:
    p = Peer()
    p.login()
    out, r = p.request(17, 1, {"mechanism": "SCRAM-SHA-256"})
    assert r == {"error_code": 34, "mechanisms": []}
    assert not any(isinstance(o, Close) for o in out) and not p.conn.closed
    out, _ = p.request(3, 12, {"topics": None})
    assert any(isinstance(o, ApiCall) for o in out)


class TestReauthentication:
    def test_a_v0_handshake_cannot_reauthenticate(self) -> None:
        """Its tokens would come unframed among the requests: error 34, then close."""
        p = Peer(max_reauth_ms=60_000)
        p.login()
        out, r = p.request(17, 0, {"mechanism": "SCRAM-SHA-256"})
        assert r is not None and r["error_code"] == 34 and p.conn.closed
        [close] = [o for o in out if isinstance(o, Close)]
        assert "SaslHandshake v1" in close.reason

    def test_lifetime_sent_only_to_v1_plus(self) -> None:
        p = Peer(max_reauth_ms=60_000)
        _, r = p.login(auth_version=1)
        assert r is not None and r["session_lifetime_ms"] == 60_000
        p = Peer(max_reauth_ms=60_000)
        _, r = p.login(auth_version=0)
        assert r is not None and "session_lifetime_ms" in r and r["session_lifetime_ms"] == 0

    def test_token_lifetime_is_capped(self) -> None:
        p = Peer(max_reauth_ms=60_000)
        p.grant_expiry = p.clock.now + 10_000
        _, r = p.login()
        assert r is not None and r["session_lifetime_ms"] == 10_000

    def test_reauthenticate_then_continue(self) -> None:
        p = Peer(max_reauth_ms=60_000)
        p.login()
        p.clock.now += 55_000
        _, r = p.login(versions=False)
        assert r is not None and r["error_code"] == 0 and r["session_lifetime_ms"] == 60_000
        assert any(isinstance(o, Authenticated) and o.reauthentication for o in p.outputs)
        p.clock.now += 59_000
        out, _ = p.request(3, 12, {"topics": None})
        assert any(isinstance(o, ApiCall) for o in out)

    def test_expired_session_is_closed_on_next_request(self) -> None:
        p = Peer(max_reauth_ms=60_000)
        p.login()
        p.clock.now += 60_000
        out, r = p.request(3, 12, {"topics": None})
        assert r is None and isinstance(out[-1], Close)

    # KafkaChannel.maybeBeginServerReauthentication runs before SocketServer's
    # expiry check: a SaslHandshake on an expired session starts a
    # re-authentication unless one started less than a second ago
    # (MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS); then the expired session is closed.
    def test_an_expired_session_may_still_reauthenticate(self) -> None:
        p = Peer(max_reauth_ms=60_000)
        p.login()
        p.clock.now += 60_000  # expired: any other request would close it
        _, r = p.login(versions=False)
        assert r is not None and r["error_code"] == 0 and r["session_lifetime_ms"] == 60_000
        assert any(isinstance(o, Authenticated) and o.reauthentication for o in p.outputs)
        out, _ = p.request(3, 12, {"topics": None})
        assert any(isinstance(o, ApiCall) for o in out) and not p.conn.closed

    def test_an_expired_session_reauthenticating_within_a_second_is_closed(self) -> None:
        p = Peer(max_reauth_ms=500)
        p.login()
        p.clock.now += 400
        _, r = p.login(versions=False)  # the first re-authentication: allowed at once
        assert r is not None and r["error_code"] == 0 and r["session_lifetime_ms"] == 500
        p.clock.now += 999  # expired, and 999 ms since that re-authentication began
        out, r = p.request(17, 1, {"mechanism": "SCRAM-SHA-256"})
        # Not error 34 with the session kept (that is for a live session): closed.
        assert r is None and isinstance(out[-1], Close) and p.conn.closed

    def test_an_expired_session_reauthenticating_a_second_later_is_allowed(self) -> None:
        p = Peer(max_reauth_ms=500)
        p.login()
        p.clock.now += 400
        p.login(versions=False)
        p.clock.now += 1000  # expired, and exactly a second since that re-authentication
        _, r = p.login(versions=False)
        assert r is not None and r["error_code"] == 0 and r["session_lifetime_ms"] == 500
        assert sum(isinstance(o, Authenticated) and o.reauthentication for o in p.outputs) == 2
        assert not p.conn.closed

    def test_failed_reauthentication_says_re_authentication(self) -> None:
        p = Peer(max_reauth_ms=60_000)
        p.login()
        _, r = p.login(password="changed", versions=False)
        assert r is not None and r["error_code"] == 58
        assert "during re-authentication due to invalid credentials" in r["error_message"]

    def test_reauthentication_cannot_change_mechanism(self) -> None:
        p = Peer(max_reauth_ms=60_000)
        p.login(SCRAM_SHA_256)
        _, r = p.request(17, 1, {"mechanism": "SCRAM-SHA-512"})
        assert r is not None and r["error_code"] == 33 and p.conn.closed

    def test_reauthentication_cannot_change_principal(self) -> None:
        p = Peer(max_reauth_ms=60_000)
        p.users["bob"] = {m: ScramCredential.from_password(m, "bob-pw") for m in CRED}
        p.login()
        _, r = p.login(user="bob", password="bob-pw", versions=False)
        assert (
            r is not None
            and r["error_code"] == 58
            and "Cannot change principals" in r["error_message"]
        )
        # The failed-login log line names the user who tried (it said "user None").
        (close,) = [o for o in p.outputs if isinstance(o, Close)]
        assert close.after_failed_authentication and close.reauthentication
        assert close.username == "bob" and close.mechanism == "SCRAM-SHA-256"


def test_raw_tokens_after_handshake_v0() -> None:
    p = Peer()
    _, hs = p.request(17, 0, {"mechanism": "SCRAM-SHA-256"})
    assert hs is not None and hs["error_code"] == 0
    client = ScramClient(SCRAM_SHA_256, "alice", "alice-secret", key_cache=None)
    out = p.feed(frame(client.client_first()))
    server_first = next(o for o in out if isinstance(o, Send)).data[4:]
    out = p.feed(frame(client.receive_server_first(server_first)))
    client.receive_server_final(next(o for o in out if isinstance(o, Send)).data[4:])
    assert client.complete and p.conn.authenticated


def test_raw_token_failure_closes_without_response() -> None:
    p = Peer()
    p.request(17, 0, {"mechanism": "SCRAM-SHA-256"})
    out = p.feed(frame(b"garbage"))
    assert [type(o) for o in out] == [Close]


def test_frame_limit_before_authentication() -> None:
    p = Peer(max_receive=100)
    out = p.feed((101).to_bytes(4, "big"))
    assert isinstance(out[0], Close) and "exceeds the limit" in out[0].reason


def test_pipelined_requests_wait_for_the_answer_in_order() -> None:
    p = Peer()
    p.login()
    data = encode_request(3, 12, 100, "c", {"topics": None}) + encode_request(
        18, 3, 101, "c", {"client_software_name": "t", "client_software_version": "1"}
    )
    out = p.conn.receive(data)
    assert len(out) == 1 and isinstance(out[0], ApiCall) and p.conn.waiting
    more = p.conn.respond({"brokers": [], "topics": []})
    sends = [o for o in more if isinstance(o, Send)]
    assert len(sends) == 2
    assert sends[0].data[4:8] == (100).to_bytes(4, "big") and sends[1].data[4:8] == (101).to_bytes(
        4, "big"
    )


@pytest.mark.parametrize(
    "body",
    [
        {"brokers": [{"node_id": 2**31, "host": "h", "port": 1}], "topics": []},
        {"brokers": [], "topics": [], "cluster_id": 7},
        {"brokers": "none", "topics": []},
    ],
    ids=["int-out-of-range", "wrong-type", "not-an-array"],
)
def test_an_answer_that_cannot_be_encoded_closes_the_connection(body: dict[str, Any]) -> None:
    """A handler's body the codec cannot write closes the connection, as Kafka
    closes one whose response it cannot build; the request after it is not
    left waiting for ever (nothing else would ever answer or close it)."""
    p = Peer()
    p.login()
    data = encode_request(3, 12, 100, "c", {"topics": None}) + encode_request(
        18, 3, 101, "c", {"client_software_name": "t", "client_software_version": "1"}
    )
    assert isinstance(p.conn.receive(data)[0], ApiCall)
    [closing] = p.conn.respond(body)
    assert isinstance(closing, Close) and p.conn.closed
    assert closing.reason == "the answer to Metadata v12 could not be encoded", closing.reason
    assert closing.server_fault and not closing.after_failed_authentication


def test_unknown_api_key_closes() -> None:
    p = Peer()
    p.login()
    out = p.feed(frame(b"\x00\x63\x00\x00\x00\x00\x00\x07\xff\xff"))
    assert isinstance(out[-1], Close)


def test_closed_connection_ignores_input() -> None:
    p = Peer()
    p.request(3, 1, {"topics": None})
    assert p.conn.closed and p.feed(b"\x00\x00\x00\x01\x00") == []


def test_grant_for_token_marks_session(monkeypatch: pytest.MonkeyPatch) -> None:
    p = Peer()
    p.request(17, 1, {"mechanism": "SCRAM-SHA-512"})
    client = ScramClient(SCRAM_SHA_512, "tok", "hmac-b64", token_auth=True, key_cache=None)
    p.corr += 1
    out = p.conn.receive(encode_request(36, 2, p.corr, "c", {"auth_bytes": client.client_first()}))
    need = out[0]
    assert isinstance(need, CredentialNeeded) and need.request.token_auth
    cred = ScramCredential.from_password(SCRAM_SHA_512, "hmac-b64")
    out = p.conn.provide_credential(
        Grant.of(cred, authorization_id="owner", expiry_ms=p.clock.now + 5000)
    )
    assert isinstance(out[0], Send)
    _, r1 = decode_response(36, 2, out[0].data[4:])
    p.corr += 1
    out = p.conn.receive(
        encode_request(
            36, 2, p.corr, "c", {"auth_bytes": client.receive_server_first(r1["auth_bytes"])}
        )
    )
    auth = next(o for o in out if isinstance(o, Authenticated))
    assert auth.session.token_authenticated and auth.session.authorization_id == "owner"


@pytest.mark.parametrize("token_first", [False, True])
def test_reauthentication_cannot_switch_between_password_and_token(token_first: bool) -> None:
    """The same user re-authenticating with a delegation token after her
    password (or the reverse) is refused, a difference from Kafka that
    docs/compatibility.md records; the text says what changed."""
    from sasl_scram import ScramSession
    from sasl_scram.endpoint.login._connection import _principal_change

    def session(token: bool) -> ScramSession:
        return ScramSession(SCRAM_SHA_256, "tok-id" if token else "alice", "alice", token, None)

    old, new = session(token_first), session(not token_first)
    refused = _principal_change(old, new)
    assert refused is not None
    token_side = "User.alice (delegation token)"
    expected = f"User.alice: {token_side}" if not token_first else f"{token_side}: User.alice"
    assert refused.kafka_error_message == (
        f"Cannot change principals during re-authentication from {expected}"
    )
    assert _principal_change(old, session(token_first)) is None
