"""In-memory client/server pairs and every failure path of both state machines."""

from __future__ import annotations

import hashlib
import logging

import pytest

from sasl_scram import LEGACY_LIBRDKAFKA_NONCE
from sasl_scram import SCRAM_SHA_256
from sasl_scram import SCRAM_SHA_512
from sasl_scram import AuthenticationFailed
from sasl_scram import CredentialRequest
from sasl_scram import DecoyCredentials
from sasl_scram import Grant
from sasl_scram import Normalization
from sasl_scram import SaltedPasswordCache
from sasl_scram import ScramClient
from sasl_scram import ScramCredential
from sasl_scram import ScramMechanism
from sasl_scram import ScramProtocolError
from sasl_scram import ScramServer
from sasl_scram import ScramServerError
from sasl_scram import ScramStateError
from sasl_scram import ScramUsageError
from sasl_scram import _crypto
from sasl_scram import _native
from sasl_scram import saslprep
from tests.support.forged_nonce import client_final_with_nonce

MECHS = [SCRAM_SHA_256, SCRAM_SHA_512]
PASSWORD = "alice-secret"


def creds(
    mech: ScramMechanism, password: str = PASSWORD, iterations: int = 4096
) -> ScramCredential:
    return ScramCredential.from_password(mech, password, iterations=iterations)


def exchange(client: ScramClient, server: ScramServer) -> None:
    s1 = server.step(client.client_first())
    s2 = server.step(client.receive_server_first(s1))
    client.receive_server_final(s2)


@pytest.mark.parametrize("mech", MECHS)
def test_success_with_special_username(mech: ScramMechanism) -> None:
    user = "special user= test,scram"
    cred = creds(mech, "special user= test,scram-password")
    seen: list[CredentialRequest] = []

    def lookup(req: CredentialRequest) -> Grant | None:
        seen.append(req)
        return Grant.of(cred) if req.username == user else None

    server = ScramServer(mech, lookup=lookup)
    client = ScramClient(mech, user, "special user= test,scram-password")
    assert b"n=special user=3D test=2Cscram," in client.client_first()
    client = ScramClient(mech, user, "special user= test,scram-password")
    exchange(client, server)
    assert client.complete and server.complete
    assert seen[0].username == user and not seen[0].token_auth
    assert server.session.authorization_id == user


@pytest.mark.parametrize("mech", MECHS)
def test_token_auth(mech: ScramMechanism) -> None:
    cred = creds(mech, "aGVsbG8=")

    def lookup(req: CredentialRequest) -> Grant | None:
        assert req.token_auth
        return Grant.of(cred, authorization_id="owner", expiry_ms=10_000)

    server = ScramServer(mech, lookup=lookup)
    client = ScramClient(mech, "tokenid", "aGVsbG8=", token_auth=True)
    first = client.client_first()
    assert first.endswith(b",tokenauth=true")
    s1 = server.step(first)
    client.receive_server_final(server.step(client.receive_server_first(s1)))
    session = server.session
    assert session.token_authenticated and session.authorization_id == "owner"
    assert session.username == "tokenid" and session.expiry_ms == 10_000
    assert session.session_lifetime_ms(4_000, 3_000) == 3_000
    assert session.session_lifetime_ms(4_000, None) == 6_000
    assert session.session_lifetime_ms(20_000, 3_000) == 0


def test_session_lifetime_without_token() -> None:
    server = ScramServer(SCRAM_SHA_256, lookup=lambda r: Grant.of(creds(SCRAM_SHA_256)))
    exchange(ScramClient(SCRAM_SHA_256, "alice", PASSWORD), server)
    assert server.session.session_lifetime_ms(0, 5000) == 5000
    assert server.session.session_lifetime_ms(0, 0) == 0
    assert server.session.session_lifetime_ms(0, None) == 0


@pytest.mark.parametrize("value", ["TRUE", "True", "true"])
def test_tokenauth_is_case_insensitive(value: str) -> None:
    server = ScramServer(SCRAM_SHA_256)
    req = server.receive_client_first(f"n,,n=t,r=abc,tokenauth={value}".encode())
    assert req.token_auth
    server = ScramServer(SCRAM_SHA_256)
    assert not server.receive_client_first(b"n,,n=t,r=abc,tokenauth=yes").token_auth


def test_unknown_extensions_are_ignored(caplog: pytest.LogCaptureFixture) -> None:
    cred = creds(SCRAM_SHA_256)
    server = ScramServer(SCRAM_SHA_256, lookup=lambda r: Grant.of(cred))
    client = ScramClient(SCRAM_SHA_256, "alice", PASSWORD, extensions={"zed": "1", "abc": "2"})
    with caplog.at_level(logging.DEBUG, logger="sasl_scram"):
        exchange(client, server)
    assert server.complete
    assert "Unsupported SCRAM extensions ignored" in caplog.text


def test_client_sends_extensions_in_java_hashmap_order() -> None:
    client = ScramClient(SCRAM_SHA_256, "u", "p", token_auth=True, extensions={"abc": "x"})
    assert client.client_first().endswith(b",tokenauth=true,abc=x")


@pytest.mark.parametrize("mech", MECHS)
def test_wrong_password_fails_opaquely(
    mech: ScramMechanism, caplog: pytest.LogCaptureFixture
) -> None:
    cred = creds(mech)
    server = ScramServer(mech, lookup=lambda r: Grant.of(cred))
    client = ScramClient(mech, "alice", "wrong-password")
    s1 = server.step(client.client_first())
    with (
        caplog.at_level(logging.DEBUG, logger="sasl_scram"),
        pytest.raises(AuthenticationFailed) as info,
    ):
        server.step(client.receive_server_first(s1))
    assert str(info.value) == "Authentication failed"
    assert info.value.kafka_error_message is None and info.value.server_final is None
    assert "Invalid client credentials" in caplog.text
    assert PASSWORD not in caplog.text and "wrong-password" not in caplog.text
    # Failure is sticky.
    with pytest.raises(ScramStateError):
        server.step(b"anything")
    with pytest.raises(ScramStateError):
        _ = server.session


def test_unknown_user_gets_a_decoy_and_fails_at_the_end(caplog: pytest.LogCaptureFixture) -> None:
    decoy = DecoyCredentials(secret=b"k" * 32)
    real = creds(SCRAM_SHA_256)

    def lookup(req: CredentialRequest) -> Grant | None:
        return Grant.of(real) if req.username == "alice" else None

    firsts = []
    for _ in range(2):
        server = ScramServer(SCRAM_SHA_256, lookup=lookup, decoy=decoy, nonce_factory=lambda: "S")
        client = ScramClient(SCRAM_SHA_256, "mallory", "guess", nonce_factory=lambda: "C")
        s1 = server.step(client.client_first())
        firsts.append(s1)
        with (
            caplog.at_level(logging.DEBUG, logger="sasl_scram"),
            pytest.raises(AuthenticationFailed),
        ):
            server.step(client.receive_server_first(s1))
    # Deterministic: repeated probes see the same salt, shaped like Kafka's.
    assert firsts[0] == firsts[1]
    salt = firsts[0].split(b",s=")[1].split(b",")[0]
    import base64

    raw = base64.b64decode(salt)
    assert raw.isalnum() and raw == raw.lower() and len(raw) <= 26
    assert firsts[0].endswith(b",i=4096")
    assert "unknown user" in caplog.text
    # A different server secret gives a different salt.
    other = ScramServer(SCRAM_SHA_256, lookup=lookup, decoy=DecoyCredentials(b"z" * 32))
    assert other.step(b"n,,n=mallory,r=C").split(b",")[1] != firsts[0].split(b",")[1]


def test_unknown_user_rejects_even_the_right_guess_of_decoy() -> None:
    # Even a client that somehow matched the decoy keys would fail: the decoy is doomed.
    decoy = DecoyCredentials(secret=b"k" * 32)
    server = ScramServer(SCRAM_SHA_256, lookup=lambda r: None, decoy=decoy)
    req = server.receive_client_first(b"n,,n=ghost,r=abc")
    server.provide(None)
    cred = decoy.credential(SCRAM_SHA_256, req.username)
    assert cred.iterations == 4096
    with pytest.raises(AuthenticationFailed):
        server.receive_client_final(b"c=biws,r=abcX,p=" + b"A" * 43 + b"=")


def test_decoys_are_cached_for_plausible_names_only() -> None:
    # Cached, so a probe costs what a known user's dictionary hit costs...
    decoy = DecoyCredentials(secret=b"k" * 32, cache_size=4)
    assert decoy.credential(SCRAM_SHA_256, "mallory") is decoy.credential(SCRAM_SHA_256, "mallory")
    # ...but a prober's long names (a pre-auth frame holds 512 KiB) must not be
    # kept: the cache's bytes are bounded, not only its entries.
    long_name = "x" * 100_000
    first = decoy.credential(SCRAM_SHA_256, long_name)
    assert decoy.credential(SCRAM_SHA_256, long_name) == first  # still deterministic
    assert decoy.credential(SCRAM_SHA_256, long_name) is not first


def test_low_iteration_credential_is_refused() -> None:
    low = creds(SCRAM_SHA_256, iterations=1000)
    server = ScramServer(SCRAM_SHA_256, lookup=lambda r: Grant.of(low))
    client = ScramClient(SCRAM_SHA_256, "alice", PASSWORD)
    s1 = server.step(client.client_first())
    assert s1.endswith(b"i=4096")  # decoy, not the stored 1000
    with pytest.raises(AuthenticationFailed):
        server.step(client.receive_server_first(s1))


def test_credential_for_wrong_mechanism_is_refused() -> None:
    cred = creds(SCRAM_SHA_512)
    server = ScramServer(SCRAM_SHA_256, lookup=lambda r: Grant.of(cred))
    client = ScramClient(SCRAM_SHA_256, "alice", PASSWORD)
    s1 = server.step(client.client_first())
    with pytest.raises(AuthenticationFailed):
        server.step(client.receive_server_first(s1))


def test_authzid_must_match_username() -> None:
    server = ScramServer(SCRAM_SHA_256, lookup=lambda r: None)
    with pytest.raises(AuthenticationFailed) as info:
        server.step(b"n,a=bob,n=alice,r=abc")
    assert info.value.kafka_error_message == (
        "Authentication failed: Client requested an authorization id that is different "
        "from username"
    )
    ok = ScramServer(SCRAM_SHA_256, lookup=lambda r: None)
    assert ok.step(b"n,a=alice,n=alice,r=abc").startswith(b"r=abc")


def test_rotated_secrets_any_candidate_verifies() -> None:
    old = creds(SCRAM_SHA_512, "old-hmac")
    new = ScramCredential.from_password(SCRAM_SHA_512, "new-hmac", salt=old.salt)
    grant = Grant.of([new, old], authorization_id="owner")
    for password in ("old-hmac", "new-hmac"):
        server = ScramServer(SCRAM_SHA_512, lookup=lambda r: grant)
        client = ScramClient(SCRAM_SHA_512, "tok", password, token_auth=True)
        exchange(client, server)
        assert client.complete
    server = ScramServer(SCRAM_SHA_512, lookup=lambda r: grant)
    client = ScramClient(SCRAM_SHA_512, "tok", "revoked-hmac", token_auth=True)
    with pytest.raises(AuthenticationFailed):
        exchange(client, server)


def test_grant_validation() -> None:
    a = creds(SCRAM_SHA_256)
    b = creds(SCRAM_SHA_256)
    with pytest.raises(ScramUsageError):
        Grant.of([a, b])  # different salts
    with pytest.raises(ScramUsageError):
        Grant(())


class TestServerProtocolFailures:
    def setup_method(self) -> None:
        self.cred = creds(SCRAM_SHA_256)
        self.server = ScramServer(
            SCRAM_SHA_256, lookup=lambda r: Grant.of(self.cred), nonce_factory=lambda: "SRV"
        )
        self.client = ScramClient(SCRAM_SHA_256, "alice", PASSWORD, nonce_factory=lambda: "CLI")

    def test_malformed_first(self) -> None:
        with pytest.raises(AuthenticationFailed):
            self.server.step(b"y,,n=alice,r=abc")

    def test_malformed_final(self) -> None:
        self.server.step(self.client.client_first())
        with pytest.raises(AuthenticationFailed):
            self.server.step(b"garbage")

    def test_nonce_must_end_with_server_nonce(self) -> None:
        self.server.step(self.client.client_first())
        with pytest.raises(AuthenticationFailed):
            self.server.step(b"c=biws,r=CLISRVX,p=" + b"A" * 43 + b"=")

    def final(self, s1: bytes, nonce: str, password: str = PASSWORD) -> bytes:
        """client-final with ``nonce`` and a proof that is valid for it."""
        return client_final_with_nonce(SCRAM_SHA_256, password, b"n,,n=alice,r=CLI", s1, nonce)

    @pytest.mark.parametrize("nonce", ["CLICLISRV", "XCLISRV", "CLISRVCLISRV"])
    def test_nonce_that_only_ends_with_ours_is_refused(self, nonce: str) -> None:
        # Kafka 4.x's ScramSaslServer compares with equals (3.7.2-3.9.x: endsWith,
        # after CVE-2024-56128). librdkafka < 2.6.1 sends r=<cnonce><cnonce+snonce>;
        # even with a valid proof it is refused by default.
        s1 = self.server.step(self.client.client_first())
        assert s1.startswith(b"r=CLISRV,")
        with pytest.raises(AuthenticationFailed) as info:
            self.server.step(self.final(s1, nonce))
        # Only librdkafka's own form is named as such, for the endpoint's log line.
        expected = LEGACY_LIBRDKAFKA_NONCE if nonce == "CLICLISRV" else None
        assert info.value.cause == expected
        assert info.value.kafka_error_message is None  # Kafka's generic text to the peer

    def legacy_server(self) -> ScramServer:
        return ScramServer(
            SCRAM_SHA_256,
            lookup=lambda r: Grant.of(self.cred),
            nonce_factory=lambda: "SRV",
            legacy_librdkafka_nonce=True,
        )

    @pytest.mark.parametrize("nonce", ["CLISRV", "CLICLISRV"])
    def test_legacy_librdkafka_nonce_setting_accepts_that_form(self, nonce: str) -> None:
        server = self.legacy_server()
        s1 = server.step(self.client.client_first())
        server_final = server.step(self.final(s1, nonce))
        assert server.complete and server.session.username == "alice"
        assert server_final.startswith(b"v=")

    @pytest.mark.parametrize(
        "nonce",
        [
            "XCLISRV",  # any other prefix: what Kafka 3.9's endsWith lets through
            "CLCLISRV",  # part of the client nonce
            "CLICLICLISRV",  # the client nonce twice
            "CLISRVCLISRV",  # the whole nonce twice
            "SRVCLISRV",  # the server part
            "cliCLISRV",  # another case
            "CLICLISRVX",  # not ending with ours
            "CLICLISR",
            "CLI",
        ],
    )
    def test_legacy_librdkafka_nonce_setting_refuses_everything_else(self, nonce: str) -> None:
        server = self.legacy_server()
        s1 = server.step(self.client.client_first())
        with pytest.raises(AuthenticationFailed) as info:
            server.step(self.final(s1, nonce))
        assert info.value.cause is None

    def test_legacy_librdkafka_nonce_still_needs_the_password(self) -> None:
        server = self.legacy_server()
        s1 = server.step(self.client.client_first())
        with pytest.raises(AuthenticationFailed):
            server.step(self.final(s1, "CLICLISRV", password="wrong-password"))

    def test_channel_binding_value_is_not_checked(self) -> None:
        s1 = self.server.step(self.client.client_first())
        final = self.client.receive_server_first(s1)
        # Kafka does not validate c=; only the AuthMessage covers it, so a changed
        # value breaks the proof rather than the grammar.
        tampered = final.replace(b"c=biws", b"c=eSws")
        with pytest.raises(AuthenticationFailed):
            self.server.step(tampered)

    def test_wrong_proof_length(self) -> None:
        self.server.step(self.client.client_first())
        with pytest.raises(AuthenticationFailed):
            self.server.step(b"c=biws,r=CLISRV,p=AAAA")

    def test_provide_requires_grant(self) -> None:
        self.server.receive_client_first(b"n,,n=alice,r=abc")
        # The compiled core checks the annotation itself, before the body runs.
        refused = TypeError if _native.ACTIVE else ScramUsageError
        with pytest.raises(refused, match="Grant or None"):
            self.server.provide("nope")  # type: ignore[arg-type]

    def test_call_order(self) -> None:
        with pytest.raises(ScramStateError):
            self.server.receive_client_final(b"c=biws,r=a,p=")
        with pytest.raises(ScramStateError):
            self.server.provide(None)
        server = ScramServer(SCRAM_SHA_256)
        with pytest.raises(ScramUsageError):
            server.step(b"n,,n=a,r=b")

    def test_lookup_exception_is_opaque(self) -> None:
        def boom(req: CredentialRequest) -> Grant | None:
            raise RuntimeError("db down: password=hunter2")

        server = ScramServer(SCRAM_SHA_256, lookup=boom)
        with pytest.raises(AuthenticationFailed) as info:
            server.step(b"n,,n=a,r=b")
        assert "hunter2" not in str(info.value)

    def test_rfc_mode_sends_e(self) -> None:
        server = ScramServer(SCRAM_SHA_256, lookup=lambda r: Grant.of(self.cred), rfc_mode=True)
        client = ScramClient(SCRAM_SHA_256, "alice", "wrong")
        s1 = server.step(client.client_first())
        with pytest.raises(AuthenticationFailed) as info:
            server.step(client.receive_server_first(s1))
        assert info.value.server_final == b"e=invalid-proof"
        with pytest.raises(ScramServerError, match="failed with error: invalid-proof") as err:
            client.receive_server_final(info.value.server_final)
        assert err.value.error == "invalid-proof"


class TestClientFailures:
    def test_server_nonce_must_extend_client_nonce(self) -> None:
        c = ScramClient(SCRAM_SHA_256, "u", "p", nonce_factory=lambda: "abc")
        c.client_first()
        with pytest.raises(ScramProtocolError, match="does not start with client nonce"):
            c.receive_server_first(b"r=xyz,s=QUJD,i=4096")
        with pytest.raises(ScramStateError):
            c.receive_server_first(b"r=abcxyz,s=QUJD,i=4096")

    def test_min_iterations(self) -> None:
        c = ScramClient(SCRAM_SHA_512, "u", "p", nonce_factory=lambda: "abc")
        c.client_first()
        with pytest.raises(
            ScramProtocolError,
            match="Requested iterations 4095 is less than the minimum 4096 for SCRAM_SHA_512",
        ):
            c.receive_server_first(b"r=abcx,s=QUJD,i=4095")

    def test_max_iterations(self) -> None:
        c = ScramClient(SCRAM_SHA_256, "u", "p", nonce_factory=lambda: "abc", max_iterations=5000)
        c.client_first()
        with pytest.raises(ScramProtocolError, match="more than the configured maximum"):
            c.receive_server_first(b"r=abcx,s=QUJD,i=5001")

    @pytest.mark.parametrize("mech", MECHS)
    def test_default_cap_refuses_1_000_001_before_deriving(
        self, mech: ScramMechanism, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A hostile server asking for more costs the client nothing: the count is
        refused before any PBKDF2 round."""

        def derive(*args: object) -> bytes:
            raise AssertionError("derived keys for a refused iteration count")

        monkeypatch.setattr(_crypto, "salted_password", derive)
        c = ScramClient(mech, "u", "p", nonce_factory=lambda: "abc", key_cache=None)
        c.client_first()
        with pytest.raises(
            ScramProtocolError,
            match=r"^Requested iterations 1000001 is more than the configured maximum 1000000$",
        ):
            c.receive_server_first(b"r=abcx,s=QUJD,i=1000001")
        with pytest.raises(ScramStateError):
            c.receive_server_first(b"r=abcx,s=QUJD,i=4096")

    @pytest.mark.slow
    def test_default_cap_accepts_1_000_000_in_a_real_login(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The cap itself is allowed: a whole login at 1,000,000 iterations (SHA-256,
        about a second: the server's key from hashlib, the client's derived as usual)."""
        salt = b"one-million-salt"
        salted = hashlib.pbkdf2_hmac("sha256", PASSWORD.encode(), salt, 1_000_000)
        cred = ScramCredential.from_salted_password(SCRAM_SHA_256, salt, salted, 1_000_000)
        derived: list[int] = []
        real = _crypto.salted_password

        def derive(mech: ScramMechanism, password: bytes, salt: bytes, iterations: int) -> bytes:
            derived.append(iterations)
            return real(mech, password, salt, iterations)

        monkeypatch.setattr(_crypto, "salted_password", derive)
        server = ScramServer(SCRAM_SHA_256, lookup=lambda r: Grant.of(cred))
        client = ScramClient(SCRAM_SHA_256, "alice", PASSWORD, key_cache=None)
        exchange(client, server)
        assert client.complete and server.session.username == "alice"
        assert derived == [1_000_000]

    def test_bad_server_signature(self) -> None:
        cred = creds(SCRAM_SHA_256)
        s1 = ScramServer(SCRAM_SHA_256, lookup=lambda r: Grant.of(cred))
        c2 = ScramClient(SCRAM_SHA_256, "alice", PASSWORD)
        first = s1.step(c2.client_first())
        c2.receive_server_first(first)
        with pytest.raises(ScramProtocolError, match="Invalid server signature"):
            c2.receive_server_final(b"v=" + b"A" * 43 + b"=")
        assert not c2.complete

    def test_e_reply_is_a_clear_error(self) -> None:
        c = ScramClient(SCRAM_SHA_256, "u", "p", nonce_factory=lambda: "abc")
        c.client_first()
        c.receive_server_first(b"r=abcx,s=QUJD,i=4096")
        with pytest.raises(
            ScramServerError,
            match="Sasl authentication using SCRAM_SHA_256 failed with error: unknown-user",
        ):
            c.receive_server_final(b"e=unknown-user")

    def test_step_interface(self) -> None:
        c = ScramClient(SCRAM_SHA_256, "u", "p")
        with pytest.raises(ScramProtocolError, match="Expected empty challenge"):
            c.step(b"x")
        with pytest.raises(ScramStateError):
            c.step(b"")

    def test_argument_validation(self) -> None:
        with pytest.raises(ScramUsageError):
            ScramClient(SCRAM_SHA_256, "", "p")
        with pytest.raises(ScramUsageError):
            ScramClient(SCRAM_SHA_256, "jörg", "p")
        with pytest.raises(ScramUsageError):
            ScramClient("SCRAM-SHA-256", "u", "p")  # type: ignore[arg-type]
        with pytest.raises(ScramUsageError):
            ScramClient(SCRAM_SHA_256, "u", 3)  # type: ignore[arg-type]

    def test_repr_hides_password(self) -> None:
        c = ScramClient(SCRAM_SHA_256, "u", "hunter2")
        assert "hunter2" not in repr(c)


def test_key_cache_skips_pbkdf2_and_misses_on_new_password(monkeypatch: pytest.MonkeyPatch) -> None:
    from sasl_scram import _crypto

    cache = SaltedPasswordCache(maxsize=2)
    cred = creds(SCRAM_SHA_256)
    calls = []
    real = _crypto.salted_password

    def counting(*args: object) -> bytes:
        calls.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_crypto, "salted_password", counting)
    for _ in range(3):
        server = ScramServer(SCRAM_SHA_256, lookup=lambda r: Grant.of(cred))
        exchange(ScramClient(SCRAM_SHA_256, "alice", PASSWORD, key_cache=cache), server)
    assert len(calls) == 1 and len(cache) == 1
    server = ScramServer(SCRAM_SHA_256, lookup=lambda r: Grant.of(cred))
    with pytest.raises(AuthenticationFailed):
        exchange(ScramClient(SCRAM_SHA_256, "alice", "changed", key_cache=cache), server)
    assert len(calls) == 2
    assert "alice" not in repr(cache) and "secret" not in repr(cache)
    cache.clear()
    assert len(cache) == 0


def test_key_cache_is_bounded() -> None:
    cache = SaltedPasswordCache(maxsize=2)
    for i in range(5):
        cache.put(cache.make_key(SCRAM_SHA_256, bytes([i]), 4096, b"p"), (b"a", b"b"))
    assert len(cache) == 2
    assert cache.get(cache.make_key(SCRAM_SHA_256, bytes([0]), 4096, b"p")) is None
    assert cache.get(cache.make_key(SCRAM_SHA_256, bytes([4]), 4096, b"p")) == (b"a", b"b")


# RFC 4013 section 3, the examples table: input, output, the RFC's comment.
RFC4013_EXAMPLES = [
    pytest.param("I\u00adX", "IX", id="soft hyphen mapped to nothing"),
    pytest.param("user", "user", id="no transformation"),
    pytest.param("USER", "USER", id="case preserved"),
    pytest.param("\u00aa", "a", id="output is NFKC"),
    pytest.param("\u2168", "IX", id="output is NFKC, matches the first"),
]
# The same table's two errors, with what our message says.
RFC4013_ERRORS = [
    pytest.param("\u0007", "prohibited", id="prohibited character"),
    pytest.param("\u0627\u0031", "right-to-left", id="bidirectional check"),
]


class TestSaslPrep:
    @pytest.mark.parametrize(("text", "prepared"), RFC4013_EXAMPLES)
    def test_rfc4013_examples(self, text: str, prepared: str) -> None:
        assert saslprep(text) == prepared

    @pytest.mark.parametrize(("text", "message"), RFC4013_ERRORS)
    def test_rfc4013_errors(self, text: str, message: str) -> None:
        with pytest.raises(ScramUsageError, match=message):
            saslprep(text)

    def test_rfc_mode_normalizes_password(self) -> None:
        cred = ScramCredential.from_password(
            SCRAM_SHA_256, "I\u00adX", normalization=Normalization.SASLPREP
        )
        assert cred == ScramCredential.from_password(SCRAM_SHA_256, "IX", salt=cred.salt)
        server = ScramServer(SCRAM_SHA_256, lookup=lambda r: Grant.of(cred))
        client = ScramClient(SCRAM_SHA_256, "u", "\u2168", normalization=Normalization.SASLPREP)
        exchange(client, server)
        assert client.complete

    def test_kafka_mode_does_not_normalize(self) -> None:
        cred = ScramCredential.from_password(SCRAM_SHA_256, "I\u00adX")
        assert cred != ScramCredential.from_password(SCRAM_SHA_256, "IX", salt=cred.salt)
