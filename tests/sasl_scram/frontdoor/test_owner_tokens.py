"""OwnerTokens: one cluster-issued token per edge user, on a fake clock and issuer."""

from __future__ import annotations

import base64
import logging
import threading
import time
from dataclasses import dataclass

import pytest

from sasl_scram.frontdoor import CHECK_OWNER
from sasl_scram.frontdoor import CLUSTER_OPERATIONS
from sasl_scram.frontdoor import PROPAGATION_MS
from sasl_scram.frontdoor import ClusterOperations
from sasl_scram.frontdoor import IssuedToken
from sasl_scram.frontdoor import OwnerToken
from sasl_scram.frontdoor import OwnerTokenError
from sasl_scram.frontdoor import OwnerTokens
from sasl_scram.frontdoor import TokenChange
from sasl_scram.frontdoor._owner_tokens import FAILURE_HOLD_MS
from sasl_scram.frontdoor._owner_tokens import HANDOVER_MS
from sasl_scram.frontdoor._owner_tokens import IDLE_MS
from sasl_scram.frontdoor._owner_tokens import MIN_REMAINING_MS
from sasl_scram.kafka import ErrorCode
from tests.support.clock import T0
from tests.support.clock import FakeClock

HOUR = 3_600_000
DAY = 24 * HOUR
WEEK = 7 * DAY


@dataclass
class _Issued:
    owner: str
    token: IssuedToken
    expired: bool = False


class FakeIssuer:
    """Kafka's rules for expiry and max lifetime, on the test's clock."""

    def __init__(self, clock: FakeClock[int], period: int = DAY, max_life: int = WEEK) -> None:
        self.clock = clock
        self.period = period
        self.max_life = max_life
        self.issued: dict[bytes, _Issued] = {}
        self.calls: list[str] = []
        self.refuse_create: OwnerTokenError | None = None
        self.refuse_renew: OwnerTokenError | None = None
        self.gate: threading.Event | None = None

    def create(self, owner: str) -> IssuedToken:
        self.calls.append(f"create {owner}")
        if self.gate is not None:
            assert self.gate.wait(10)
        if self.refuse_create is not None:
            raise self.refuse_create
        n = len(self.issued)
        now = self.clock()
        max_ms = now + self.max_life
        token = IssuedToken(
            f"tok{n}", b"\x9f" + bytes([n]) * 63, min(now + self.period, max_ms), max_ms
        )
        self.issued[token.hmac] = _Issued(owner, token)
        return token

    def renew(self, hmac: bytes) -> int:
        entry = self.issued[hmac]
        self.calls.append(f"renew {entry.token.token_id}")
        if self.refuse_renew is not None:
            raise self.refuse_renew
        expiry = min(self.clock() + self.period, entry.token.max_ms)
        entry.token = IssuedToken(entry.token.token_id, hmac, expiry, entry.token.max_ms)
        return expiry

    def expire(self, hmac: bytes) -> None:
        entry = self.issued[hmac]
        self.calls.append(f"expire {entry.token.token_id}")
        entry.expired = True

    def live(self) -> set[str]:
        return {e.token.token_id for e in self.issued.values() if not e.expired}


def in_use(tokens: OwnerTokens, user: str = "alice") -> OwnerToken:
    """``user``'s token, for a connection that stays open."""
    tokens.acquire(user)
    return tokens.login_for(user)


@pytest.fixture
def clock() -> FakeClock[int]:
    return FakeClock.epoch_ms()


@pytest.fixture
def issuer(clock: FakeClock[int]) -> FakeIssuer:
    return FakeIssuer(clock)


@pytest.fixture
def tokens(issuer: FakeIssuer, clock: FakeClock[int]) -> OwnerTokens:
    return OwnerTokens(issuer, clock)


def test_a_token_is_created_on_first_need_and_then_cached(
    tokens: OwnerTokens, issuer: FakeIssuer
) -> None:
    tokens.acquire("alice")
    first = tokens.login_for("alice")
    assert first.user == "alice" and first.token_id == "tok0"
    assert tokens.login_for("alice") == first
    assert issuer.calls == ["create alice"]
    assert issuer.issued[first.hmac].owner == "alice"
    assert first.password == base64.b64encode(first.hmac).decode()
    assert tokens.login_for("bob").token_id == "tok1"


def test_a_new_token_is_fresh_while_brokers_may_not_know_it(
    tokens: OwnerTokens, clock: FakeClock[int]
) -> None:
    tokens.acquire("alice")
    token = tokens.login_for("alice")
    assert token.created_ms == T0 and token.fresh(T0 + PROPAGATION_MS - 1)
    clock.advance(PROPAGATION_MS)
    cached = tokens.login_for("alice")
    assert cached.created_ms == T0 and not cached.fresh(clock())


def test_no_secret_in_repr(tokens: OwnerTokens, issuer: FakeIssuer) -> None:
    token = tokens.login_for("alice")
    issued = issuer.issued[token.hmac].token
    for text in (repr(token), str(token), repr(issued), repr(tokens)):
        assert token.password not in text
        assert repr(token.hmac) not in text and token.hmac.hex() not in text
        assert "hmac" not in text


def test_renewed_halfway_through_its_expiry_period(
    tokens: OwnerTokens, issuer: FakeIssuer, clock: FakeClock[int]
) -> None:
    assert tokens.due_ms() is None
    tokens.acquire("alice")
    token = tokens.login_for("alice")
    assert tokens.due_ms() == T0 + DAY // 2
    clock.advance(DAY // 2 - 1)
    assert tokens.maintain(clock()) == []
    clock.advance(1)
    [change] = tokens.maintain(clock())
    assert (change.change, change.user, change.token_id) == (TokenChange.RENEWED, "alice", "tok0")
    renewed = tokens.login_for("alice")
    assert renewed.token_id == token.token_id
    assert renewed.expiry_ms == T0 + DAY // 2 + DAY
    # The next renewal is half-way from this one to the new expiry.
    assert tokens.due_ms() == T0 + DAY
    assert issuer.calls == ["create alice", "renew tok0"]


def test_replaced_before_its_max_lifetime_ends(clock: FakeClock[int]) -> None:
    issuer = FakeIssuer(clock, period=DAY, max_life=DAY + DAY // 2)
    tokens = OwnerTokens(issuer, clock)
    in_use(tokens)
    clock.advance(DAY // 2)
    assert [c.change for c in tokens.maintain(clock())] == [TokenChange.RENEWED]
    # Renewal reached the max lifetime: the next due time replaces it, half-way
    # from the renewal to the end.
    assert tokens.login_for("alice").expiry_ms == T0 + DAY + DAY // 2
    clock.advance(DAY // 2)
    [change] = tokens.maintain(clock())
    assert (change.change, change.token_id, change.detail) == (
        TokenChange.REPLACED,
        "tok0",
        "by tok1",
    )
    assert tokens.login_for("alice").token_id == "tok1"
    assert issuer.live() == {"tok0", "tok1"}  # the old one still serves logins under way
    clock.advance(HANDOVER_MS)
    [expired] = tokens.maintain(clock())
    assert (expired.change, expired.token_id, expired.detail) == (
        TokenChange.EXPIRED,
        "tok0",
        "replaced",
    )
    assert issuer.live() == {"tok1"}


def test_a_token_the_cluster_will_not_renew_is_replaced(
    tokens: OwnerTokens, issuer: FakeIssuer, clock: FakeClock[int]
) -> None:
    in_use(tokens)
    issuer.refuse_renew = OwnerTokenError("gone", ErrorCode.DELEGATION_TOKEN_NOT_FOUND)
    clock.advance(DAY // 2)
    assert [c.change for c in tokens.maintain(clock())] == [TokenChange.REPLACED]
    assert tokens.login_for("alice").token_id == "tok1"


def test_an_unreachable_cluster_is_reported_once_then_recovery(
    tokens: OwnerTokens, issuer: FakeIssuer, clock: FakeClock[int]
) -> None:
    in_use(tokens)
    issuer.refuse_renew = OwnerTokenError("the cluster is unreachable")
    clock.advance(DAY // 2)
    [failing] = tokens.maintain(clock())
    assert failing.change is TokenChange.FAILING and "unreachable" in failing.detail
    clock.advance(60_000)
    assert tokens.maintain(clock()) == []  # tried again, not reported again
    assert issuer.calls.count("renew tok0") == 2
    assert tokens.login_for("alice").token_id == "tok0"  # still valid: still used
    issuer.refuse_renew = None
    clock.advance(60_000)
    assert [c.change for c in tokens.maintain(clock())] == [
        TokenChange.RECOVERED,
        TokenChange.RENEWED,
    ]


def test_cached_is_the_token_login_for_would_hand_out_without_the_cluster(
    tokens: OwnerTokens, issuer: FakeIssuer, clock: FakeClock[int]
) -> None:
    """What a login can have without a thread: never a create, never a wait."""
    assert tokens.cached("alice") is None
    token = in_use(tokens)
    assert tokens.cached("alice") == token
    clock.advance(issuer.period - MIN_REMAINING_MS)
    assert tokens.cached("alice") is None  # too close to its expiry: login_for replaces it
    assert issuer.calls == ["create alice"]
    tokens.close()
    assert tokens.cached("alice") is None


def test_a_token_too_close_to_its_expiry_is_not_handed_out(
    tokens: OwnerTokens, clock: FakeClock[int]
) -> None:
    tokens.acquire("alice")
    assert tokens.login_for("alice").token_id == "tok0"
    clock.advance(DAY - MIN_REMAINING_MS)  # nobody maintained it
    assert tokens.login_for("alice").token_id == "tok1"


def test_an_idle_token_is_expired_after_the_grace_period(
    tokens: OwnerTokens, issuer: FakeIssuer, clock: FakeClock[int]
) -> None:
    tokens.acquire("alice")
    in_use(tokens)
    tokens.release("alice")
    clock.advance(IDLE_MS)
    assert tokens.maintain(clock()) == []  # one connection left
    tokens.release("alice")
    clock.advance(IDLE_MS - 1)
    assert tokens.maintain(clock()) == []
    clock.advance(1)
    [change] = tokens.maintain(clock())
    assert (change.change, change.user, change.detail) == (TokenChange.EXPIRED, "alice", "idle")
    assert issuer.live() == set()
    tokens.acquire("alice")
    assert tokens.login_for("alice").token_id == "tok1"


def test_a_token_in_use_is_kept_however_long(
    tokens: OwnerTokens, issuer: FakeIssuer, clock: FakeClock[int]
) -> None:
    in_use(tokens)
    for _ in range(4):
        clock.advance(DAY // 2)
        tokens.maintain(clock())
    assert issuer.live() == {"tok0"}


def test_the_longest_unused_tokens_go_beyond_the_bound(
    issuer: FakeIssuer, clock: FakeClock[int]
) -> None:
    tokens = OwnerTokens(issuer, clock, max_idle=2)
    for user in ("a", "b", "c"):
        tokens.acquire(user)
        tokens.login_for(user)
        tokens.release(user)
        clock.advance(1)
    tokens.acquire("d")
    tokens.login_for("d")
    changes = tokens.maintain(clock())
    assert [(c.change, c.user) for c in changes] == [(TokenChange.EXPIRED, "a")]
    assert issuer.live() == {"tok1", "tok2", "tok3"}


def test_release_without_acquire_is_refused(tokens: OwnerTokens) -> None:
    with pytest.raises(ValueError, match="without acquire"):
        tokens.release("alice")
    tokens.acquire("alice")
    tokens.close()
    tokens.release("alice")  # a connection that outlives close


def test_the_renewal_point_is_a_chosen_fraction_of_the_period(
    issuer: FakeIssuer, clock: FakeClock[int]
) -> None:
    tokens = OwnerTokens(issuer, clock, renew_fraction=0.75)
    in_use(tokens)
    assert tokens.due_ms() == T0 + DAY * 3 // 4
    for wrong in (0.0, 1.0):
        with pytest.raises(ValueError, match="renew_fraction"):
            OwnerTokens(issuer, clock, renew_fraction=wrong)


def test_concurrent_logins_for_one_user_create_one_token(
    tokens: OwnerTokens, issuer: FakeIssuer
) -> None:
    issuer.gate = threading.Event()
    results: list[str] = []
    threads = [
        threading.Thread(target=lambda: results.append(tokens.login_for("alice").token_id))
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    # Open the gate once every thread is in the issuer or waiting for the one
    # that is (the condition's waiters: CPython's threading.Condition).
    waiters = getattr(tokens._cond, "_waiters")  # noqa: B009
    deadline = time.monotonic() + 10
    while len(issuer.calls) + len(waiters) < 8 and time.monotonic() < deadline:
        time.sleep(0.01)
    issuer.gate.set()
    for t in threads:
        t.join(10)
    assert issuer.calls == ["create alice"]
    assert results == ["tok0"] * 8


def test_a_refusal_is_held_for_a_few_seconds(
    tokens: OwnerTokens, issuer: FakeIssuer, clock: FakeClock[int]
) -> None:
    issuer.refuse_create = OwnerTokenError(
        "the upstream login 'svc' may not create tokens for User:alice",
        ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
    )
    with pytest.raises(OwnerTokenError, match="may not create tokens") as first:
        tokens.login_for("alice")
    clock.advance(FAILURE_HOLD_MS - 1)
    with pytest.raises(OwnerTokenError) as second:
        tokens.login_for("alice")
    assert second.value is first.value
    assert issuer.calls == ["create alice"]
    issuer.refuse_create = None
    clock.advance(1)
    assert tokens.login_for("alice").token_id == "tok0"


def test_close_expires_every_token_it_created(
    tokens: OwnerTokens, issuer: FakeIssuer, clock: FakeClock[int]
) -> None:
    issuer.max_life = DAY
    for user in ("alice", "bob"):
        tokens.acquire(user)
        tokens.login_for(user)
    clock.advance(DAY // 2)
    # Both are replaced; the old ones are kept for the handover.
    assert [c.change for c in tokens.maintain(clock())] == [TokenChange.REPLACED] * 2
    assert issuer.live() == {"tok0", "tok1", "tok2", "tok3"}
    tokens.close()
    assert issuer.live() == set()
    with pytest.raises(OwnerTokenError, match="closed"):
        tokens.login_for("alice")
    assert tokens.maintain(clock()) == []


def test_a_failed_expiry_does_not_stop_close(tokens: OwnerTokens, issuer: FakeIssuer) -> None:
    tokens.login_for("alice")
    tokens.login_for("bob")
    expire = issuer.expire

    def flaky(hmac: bytes) -> None:
        if issuer.issued[hmac].owner == "alice":
            raise OwnerTokenError("the cluster is unreachable")
        expire(hmac)

    issuer.expire = flaky  # type: ignore[method-assign]
    tokens.close()
    assert issuer.live() == {"tok0"}


def test_check_creates_a_token_for_another_user_and_expires_it_later(
    tokens: OwnerTokens, issuer: FakeIssuer, clock: FakeClock[int]
) -> None:
    tokens.check()
    assert issuer.calls == [f"create {CHECK_OWNER}"]
    clock.advance(HANDOVER_MS)
    [change] = tokens.maintain(clock())
    assert (change.change, change.user, change.detail) == (
        TokenChange.EXPIRED,
        CHECK_OWNER,
        "check",
    )
    assert issuer.live() == set()
    issuer.refuse_create = OwnerTokenError("the cluster has delegation tokens disabled", 61)
    with pytest.raises(OwnerTokenError, match="disabled"):
        tokens.check()


def test_the_log_names_token_ids_never_a_secret(
    tokens: OwnerTokens, issuer: FakeIssuer, clock: FakeClock[int], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    issuer.max_life = DAY
    tokens.acquire("alice")
    token = tokens.login_for("alice")
    clock.advance(DAY // 2)
    tokens.maintain(clock())
    clock.advance(HANDOVER_MS)
    tokens.maintain(clock())
    tokens.close()
    assert "tok0" in caplog.text and "tok1" in caplog.text
    for issued in issuer.issued.values():
        password = base64.b64encode(issued.token.hmac).decode()
        assert password not in caplog.text and issued.token.hmac.hex() not in caplog.text
    assert repr(token.hmac) not in caplog.text


def test_an_issuer_that_breaks_its_contract_does_not_wedge_a_user(
    tokens: OwnerTokens, issuer: FakeIssuer, clock: FakeClock[int]
) -> None:
    """An issuer is to raise OwnerTokenError only; anything else is reported as
    a failure like it, and the user's token is renewed or replaced later."""
    in_use(tokens)
    renew = issuer.renew

    def broken(hmac: bytes) -> int:
        raise RuntimeError("bug")

    issuer.renew = broken  # type: ignore[method-assign]
    clock.advance(DAY // 2)
    [failing] = tokens.maintain(clock())
    assert failing.change is TokenChange.FAILING and "RuntimeError: bug" in failing.detail
    issuer.renew = renew  # type: ignore[method-assign]
    clock.advance(60_000)
    assert [c.change for c in tokens.maintain(clock())] == [
        TokenChange.RECOVERED,
        TokenChange.RENEWED,
    ]
    issuer.expire = broken  # type: ignore[assignment,method-assign]
    tokens.close()  # a failed expiry is only logged


def test_the_owners_cluster_operations_are_kept_with_its_token(
    clock: FakeClock[int],
) -> None:
    """Asked once per token: later logins with it carry the answer; a renewal keeps
    it; a new token (the old one could not be renewed) asks again."""
    issuer = FakeIssuer(clock, period=DAY, max_life=DAY + DAY // 2)
    tokens = OwnerTokens(issuer, clock)
    first = in_use(tokens)
    assert first.cluster_operations is None
    admin = ClusterOperations(frozenset(CLUSTER_OPERATIONS))
    tokens.record_operations("alice", "tok-other", admin)  # not alice's token: ignored
    assert tokens.login_for("alice").cluster_operations is None
    tokens.record_operations("bob", first.token_id, admin)  # nobody's slot: ignored
    tokens.record_operations("alice", first.token_id, admin)
    assert tokens.login_for("alice").cluster_operations == admin
    cached = tokens.cached("alice")
    assert cached is not None and cached.cluster_operations == admin
    clock.advance(DAY // 2)
    assert [c.change for c in tokens.maintain(clock())] == [TokenChange.RENEWED]
    assert tokens.login_for("alice").cluster_operations == admin
    clock.advance(DAY // 2)
    assert [c.change for c in tokens.maintain(clock())] == [TokenChange.REPLACED]
    replaced = tokens.login_for("alice")
    assert replaced.token_id == "tok1" and replaced.cluster_operations is None
    assert issuer.calls.count("create alice") == 2
