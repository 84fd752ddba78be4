"""Token logins through our own ScramClient(token_auth=True) and ScramServer."""

from __future__ import annotations

import pytest

from sasl_scram import SCRAM_SHA_256
from sasl_scram import SCRAM_SHA_512
from sasl_scram import AuthenticationFailed
from sasl_scram import CredentialRequest
from sasl_scram import ScramClient
from sasl_scram import ScramCredential
from sasl_scram import ScramMechanism
from sasl_scram import ScramServer
from sasl_scram import ScramSession
from sasl_scram.kafka import ErrorCode
from tests.support.clock import T0
from tests.support.clock import FakeClock
from tokenauth import InMemoryTokenStore
from tokenauth import TokenCache
from tokenauth import TokenConfig
from tokenauth import TokenCredentialProvider
from tokenauth import TokenManager
from tokenauth import TokenStoreUnavailable
from tokenauth import compute_hmac
from tokenauth import hmac_base64

from .conftest import ALICE
from .conftest import BOB
from .conftest import CAROL
from .conftest import ctx

DAY = 86_400_000


def login(
    provider: TokenCredentialProvider,
    username: str,
    password: str,
    mechanism: ScramMechanism = SCRAM_SHA_256,
    *,
    now_ms: int | None = None,
    token_auth: bool = True,
) -> ScramSession:
    client = ScramClient(mechanism, username, password, token_auth=token_auth, key_cache=None)
    server = ScramServer(mechanism)
    request = server.receive_client_first(client.client_first())
    server_first = server.provide(provider.grant_for(request, now_ms))
    server_final = server.receive_client_final(client.receive_server_first(server_first))
    client.receive_server_final(server_final)
    assert client.complete
    return server.session


def setup(clock: FakeClock[int], *secrets: str) -> tuple[TokenManager, TokenCredentialProvider]:
    mgr = TokenManager(TokenConfig.of(*secrets), InMemoryTokenStore(), clock_ms=clock)
    return mgr, TokenCredentialProvider(mgr.cache, clock_ms=clock)


@pytest.mark.parametrize("mechanism", [SCRAM_SHA_256, SCRAM_SHA_512])
def test_token_authenticates_as_owner(clock: FakeClock[int], mechanism: ScramMechanism) -> None:
    mgr, provider = setup(clock, "secretKey")
    token = mgr.create_token(ctx(CAROL, super_user=True), owner=ALICE)
    session = login(provider, token.token_id, token.hmac_base64, mechanism)
    assert session.username == token.token_id
    assert session.authorization_id == "alice"  # principal User:alice
    assert session.token_authenticated
    assert session.expiry_ms == T0 + DAY
    # KIP-368: the session lives as long as the token, capped by the reauth setting.
    assert session.session_lifetime_ms(T0 + 1000, None) == DAY - 1000
    assert session.session_lifetime_ms(T0, 60_000) == 60_000


def test_token_authenticated_session_may_not_create_tokens(clock: FakeClock[int]) -> None:
    mgr, provider = setup(clock, "secretKey")
    token = mgr.create_token(ctx(ALICE))
    session = login(provider, token.token_id, token.hmac_base64)
    follow_up = mgr.create_token(ctx(ALICE, token_authenticated=session.token_authenticated))
    assert follow_up.error == ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED


def test_wrong_password_unknown_token_and_user_path(clock: FakeClock[int]) -> None:
    mgr, provider = setup(clock, "secretKey")
    token = mgr.create_token(ctx(ALICE))
    with pytest.raises(AuthenticationFailed):
        login(provider, token.token_id, hmac_base64(b"\x01" * 64))
    with pytest.raises(AuthenticationFailed):
        login(provider, "no-such-token", token.hmac_base64)
    # Without tokenauth=true the token id is looked up as a user: unknown here.
    with pytest.raises(AuthenticationFailed):
        login(provider, token.token_id, token.hmac_base64, token_auth=False)


def test_users_are_delegated_to_user_lookup(clock: FakeClock[int]) -> None:
    mgr, _ = setup(clock, "secretKey")
    cred = ScramCredential.from_password(SCRAM_SHA_256, "pw")
    users = {("bob", SCRAM_SHA_256): cred}
    provider = TokenCredentialProvider(
        mgr.cache, user_lookup=lambda u, m: users.get((u, m)), clock_ms=clock
    )
    session = login(provider, "bob", "pw", token_auth=False)
    assert not session.token_authenticated
    assert session.authorization_id == "bob"


def test_expired_token_refused_before_sweep(clock: FakeClock[int]) -> None:
    """Beyond Kafka: Kafka accepts an expired token until the sweep removes it."""
    mgr, provider = setup(clock, "secretKey")
    token = mgr.create_token(ctx(ALICE), max_lifetime_ms=10_000)
    clock.advance(10_000)  # the expiry instant itself is still valid
    login(provider, token.token_id, token.hmac_base64)
    clock.advance(1)
    assert mgr.cache.get(token.token_id) is not None  # not swept yet
    with pytest.raises(AuthenticationFailed):
        login(provider, token.token_id, token.hmac_base64)
    # An explicit time wins over the clock (the *_at_time style).
    login(provider, token.token_id, token.hmac_base64, now_ms=T0 + 5)


def test_renewal_extends_authentication(clock: FakeClock[int]) -> None:
    mgr, provider = setup(clock, "secretKey")
    token = mgr.create_token(ctx(ALICE), [BOB])
    clock.advance(DAY - 1)
    assert mgr.renew_token(ctx(BOB), token.hmac).error == ErrorCode.NONE
    clock.advance(DAY - 1)
    session = login(provider, token.token_id, token.hmac_base64)
    assert session.expiry_ms == T0 + 2 * DAY - 1


def test_expire_revokes_new_logins(clock: FakeClock[int]) -> None:
    mgr, provider = setup(clock, "secretKey")
    token = mgr.create_token(ctx(ALICE))
    login(provider, token.token_id, token.hmac_base64)
    assert mgr.expire_token(ctx(ALICE), token.hmac).error == ErrorCode.NONE
    with pytest.raises(AuthenticationFailed):
        login(provider, token.token_id, token.hmac_base64)


def test_secret_rotation(clock: FakeClock[int]) -> None:
    mgr, provider = setup(clock, "old-secret")
    old = mgr.create_token(ctx(ALICE))
    # Rotate: a new secret in front; the old one stays listed.
    mgr.update_config(TokenConfig.of("new-secret", "old-secret"))
    new = mgr.create_token(ctx(ALICE))
    assert new.hmac_base64 == hmac_base64(compute_hmac(new.token_id, "new-secret"))
    for mechanism in (SCRAM_SHA_256, SCRAM_SHA_512):
        login(provider, old.token_id, old.hmac_base64, mechanism)
        login(provider, new.token_id, new.hmac_base64, mechanism)
    # Each grant holds one candidate per secret, with one shared salt.
    request = CredentialRequest(SCRAM_SHA_256, old.token_id, True, {})
    grant = provider.grant_for(request)
    assert grant is not None and len(grant.credentials) == 2
    assert len({c.salt for c in grant.credentials}) == 1
    # Renew and expire find a token by an HMAC made with any listed secret.
    assert mgr.renew_token(ctx(ALICE), old.hmac).error == ErrorCode.NONE
    # The new HMAC of the old token works too (describe hands it out).
    described = {t.token_id: t for t in mgr.describe_tokens(ctx(ALICE)).tokens}
    assert described[old.token_id].hmac != old.hmac
    login(provider, old.token_id, described[old.token_id].hmac_base64)

    # Drop the old secret: its HMACs stop working at once, in this process.
    mgr.update_config(TokenConfig.of("new-secret"))
    with pytest.raises(AuthenticationFailed):
        login(provider, old.token_id, old.hmac_base64)
    assert mgr.renew_token(ctx(ALICE), old.hmac).error == ErrorCode.DELEGATION_TOKEN_NOT_FOUND
    login(provider, new.token_id, new.hmac_base64)
    grant = provider.grant_for(CredentialRequest(SCRAM_SHA_256, new.token_id, True, {}))
    assert grant is not None and len(grant.credentials) == 1


def test_disabled_tokens_never_authenticate(clock: FakeClock[int]) -> None:
    mgr, provider = setup(clock, "secretKey")
    token = mgr.create_token(ctx(ALICE))
    mgr.update_config(TokenConfig())
    with pytest.raises(AuthenticationFailed):
        login(provider, token.token_id, token.hmac_base64)


def test_credentials_derived_once_per_process_with_4096_iterations(clock: FakeClock[int]) -> None:
    salts = iter([b"salt-a", b"salt-b", b"salt-c"])
    store = InMemoryTokenStore()
    cache = TokenCache(store, TokenConfig.of("k").secrets, salt_factory=lambda: next(salts))
    mgr = TokenManager(TokenConfig.of("k"), store, cache=cache, clock_ms=clock)
    token = mgr.create_token(ctx(ALICE))
    first = cache.credentials(token.token_id, SCRAM_SHA_256)
    assert first is not None
    assert first.credentials[0].iterations == 4096
    assert first.credentials[0].salt == b"salt-a"
    expected = ScramCredential.from_password(
        SCRAM_SHA_256, token.hmac_base64, iterations=4096, salt=b"salt-a"
    )
    assert first.credentials[0] == expected
    again = cache.credentials(token.token_id, SCRAM_SHA_256)
    assert again is not None and again.credentials is first.credentials
    # A renewal keeps the derived credentials.
    mgr.renew_token(ctx(ALICE), token.hmac)
    again = cache.credentials(token.token_id, SCRAM_SHA_256)
    assert again is not None and again.credentials is first.credentials
    sha512 = cache.credentials(token.token_id, SCRAM_SHA_512)
    assert sha512 is not None and sha512.credentials[0].salt == b"salt-b"


def test_eager_cache_derives_on_change(clock: FakeClock[int]) -> None:
    store = InMemoryTokenStore()
    cache = TokenCache(store, TokenConfig.of("k").secrets, eager=True)
    mgr = TokenManager(TokenConfig.of("k"), store, cache=cache, clock_ms=clock)
    token = mgr.create_token(ctx(ALICE))
    assert repr(cache).count("redacted") == 1
    entry = cache._entries[token.token_id]
    assert set(entry.creds) == {SCRAM_SHA_256, SCRAM_SHA_512}


def test_stale_store_fails_closed(clock: FakeClock[int]) -> None:
    class Stale(InMemoryTokenStore):
        stale = False

        def check_usable(self) -> None:
            if self.stale:
                raise TokenStoreUnavailable("gone")

    store = Stale()
    mgr = TokenManager(TokenConfig.of("k"), store, clock_ms=clock)
    provider = TokenCredentialProvider(mgr.cache, clock_ms=clock)
    token = mgr.create_token(ctx(ALICE))
    store.stale = True
    server = ScramServer(SCRAM_SHA_256, lookup=provider)
    client = ScramClient(SCRAM_SHA_256, token.token_id, token.hmac_base64, token_auth=True)
    with pytest.raises(AuthenticationFailed):
        server.step(client.client_first())
