from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from sasl_scram import KafkaPrincipal
from sasl_scram.kafka import ErrorCode
from tests.support.clock import T0
from tests.support.clock import FakeClock
from tokenauth import AclOperation
from tokenauth import CreateTokenResult
from tokenauth import ExpirySweeper
from tokenauth import InMemoryTokenStore
from tokenauth import ResourceType
from tokenauth import TokenCache
from tokenauth import TokenConfig
from tokenauth import TokenManager
from tokenauth import TokenRequester
from tokenauth import TokenStoreError
from tokenauth import compute_hmac

from .conftest import ALICE
from .conftest import BOB
from .conftest import CAROL
from .conftest import ctx

E = ErrorCode
DAY = 86_400_000
WEEK = 7 * DAY


def manager(clock: FakeClock[int], **settings: int) -> TokenManager:
    return TokenManager(
        TokenConfig.of("secretKey", **settings), InMemoryTokenStore(), clock_ms=clock
    )


def create_ok(
    mgr: TokenManager, who: KafkaPrincipal = ALICE, **kwargs: object
) -> CreateTokenResult:
    result = mgr.create_token(ctx(who), **kwargs)  # type: ignore[arg-type]
    assert result.error == E.NONE
    return result


# -- create ------------------------------------------------------------------------


def test_create_defaults(clock: FakeClock[int]) -> None:
    mgr = manager(clock)
    result = create_ok(mgr, renewers=[BOB])
    assert result.owner == result.token_requester == ALICE
    assert result.issue_timestamp_ms == T0
    assert result.expiry_timestamp_ms == T0 + DAY
    assert result.max_timestamp_ms == T0 + WEEK
    assert len(result.token_id) == 22
    assert result.hmac == compute_hmac(result.token_id, "secretKey")
    assert result.hmac_base64 not in repr(result)
    stored = mgr.cache.get(result.token_id)
    assert stored is not None
    assert stored.renewers == (BOB,)
    assert stored.token_requester == ALICE


@pytest.mark.parametrize(
    ("requested", "max_ts", "expiry_ts"),
    [
        (-1, T0 + WEEK, T0 + DAY),  # AdminClient default: server max
        (0, T0 + WEEK, T0 + DAY),  # <= 0 also means server max
        (2 * WEEK, T0 + WEEK, T0 + DAY),  # capped by the server max
        (3_600_000, T0 + 3_600_000, T0 + 3_600_000),  # expiry capped by max
        (2 * DAY, T0 + 2 * DAY, T0 + DAY),
    ],
)
def test_create_lifetimes(
    clock: FakeClock[int], requested: int, max_ts: int, expiry_ts: int
) -> None:
    result = create_ok(manager(clock), max_lifetime_ms=requested)
    assert (result.max_timestamp_ms, result.expiry_timestamp_ms) == (max_ts, expiry_ts)


def test_create_for_other_owner_needs_create_tokens(clock: FakeClock[int]) -> None:
    mgr = manager(clock)
    denied = mgr.create_token(ctx(ALICE), owner=BOB)
    assert denied.error == E.DELEGATION_TOKEN_AUTHORIZATION_FAILED
    # The error response still carries owner and requester, with -1s.
    assert (denied.owner, denied.token_requester) == (BOB, ALICE)
    assert (denied.issue_timestamp_ms, denied.expiry_timestamp_ms, denied.max_timestamp_ms) == (
        -1,
        -1,
        -1,
    )
    assert (denied.token_id, denied.hmac) == ("", b"")
    assert denied.token is None

    asked: list[tuple[AclOperation, ResourceType, str]] = []

    def authorizer(op: AclOperation, rt: ResourceType, name: str) -> bool:
        asked.append((op, rt, name))
        return True

    allowed = mgr.create_token(ctx(ALICE, authorizer=authorizer), owner=BOB)
    assert allowed.error == E.NONE
    assert asked == [(AclOperation.CREATE_TOKENS, ResourceType.USER, "User:bob")]
    assert (allowed.owner, allowed.token_requester) == (BOB, ALICE)
    assert mgr.create_token(ctx(ALICE, super_user=True), owner=BOB).error == E.NONE
    # An empty owner name (what Java sends in v3) means the requester; no ACL needed.
    assert mgr.create_token(ctx(ALICE), owner=KafkaPrincipal("User", "")).owner == ALICE
    assert mgr.create_token(ctx(ALICE), owner=ALICE).error == E.NONE


@pytest.mark.parametrize(
    ("context", "code"),
    [
        (TokenRequester(ALICE, token_authenticated=True), E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED),
        (
            TokenRequester(ALICE, security_protocol="PLAINTEXT"),
            E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
        ),
        (
            TokenRequester(KafkaPrincipal.user("ANONYMOUS"), security_protocol="SSL"),
            E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
        ),
        (TokenRequester(ALICE, security_protocol="SSL"), E.NONE),  # 2-way SSL
        (TokenRequester(ALICE, security_protocol="SASL_PLAINTEXT"), E.NONE),
    ],
)
def test_allow_token_requests(clock: FakeClock[int], context: TokenRequester, code: E) -> None:
    mgr = manager(clock)
    assert mgr.create_token(context).error == code
    if code != E.NONE:
        assert mgr.renew_token(context, b"x").error == code
        assert mgr.expire_token(context, b"x").error == code
        assert mgr.describe_tokens(context).error == code


def test_create_order_of_checks(clock: FakeClock[int]) -> None:
    disabled = TokenManager(TokenConfig(), InMemoryTokenStore(), clock_ms=clock)
    group = KafkaPrincipal("Group", "g")
    # 64 before 65 before 67 before 61.
    assert (
        disabled.create_token(ctx(ALICE, token_authenticated=True), [group], owner=BOB).error
        == E.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    )
    assert (
        disabled.create_token(ctx(ALICE), [group], owner=BOB).error
        == E.DELEGATION_TOKEN_AUTHORIZATION_FAILED
    )
    assert disabled.create_token(ctx(ALICE), [BOB, group]).error == E.INVALID_PRINCIPAL_TYPE
    assert disabled.create_token(ctx(ALICE), [BOB]).error == E.DELEGATION_TOKEN_AUTH_DISABLED
    # The owner's type is not validated.
    ok = manager(clock).create_token(ctx(ALICE, super_user=True), owner=group)
    assert ok.error == E.NONE


# -- renew -------------------------------------------------------------------------


def test_renew_by_owner_and_renewer_not_requester(clock: FakeClock[int]) -> None:
    mgr = manager(clock)
    token = mgr.create_token(ctx(CAROL, super_user=True), [BOB], owner=ALICE)
    assert token.token_requester == CAROL
    clock.advance(1000)
    assert mgr.renew_token(ctx(CAROL), token.hmac).error == E.DELEGATION_TOKEN_OWNER_MISMATCH
    renewed = mgr.renew_token(ctx(BOB), token.hmac)
    assert renewed == type(renewed)(E.NONE, T0 + 1000 + DAY)
    assert mgr.renew_token(ctx(ALICE), token.hmac, 5000).expiry_timestamp_ms == T0 + 6000
    info = mgr.cache.get(token.token_id)
    assert info is not None and info.expiry_timestamp_ms == T0 + 6000


def test_renew_period_semantics_zk_mode(clock: FakeClock[int]) -> None:
    mgr = manager(clock)
    token = create_ok(mgr)
    # ZK mode: a positive period is used as is, even above the default.
    assert mgr.renew_token(ctx(), token.hmac, 3 * DAY).expiry_timestamp_ms == T0 + 3 * DAY
    # 0 means "now".
    assert mgr.renew_token(ctx(), token.hmac, 0).expiry_timestamp_ms == T0
    # Negative: the default.
    assert mgr.renew_token(ctx(), token.hmac, -1).expiry_timestamp_ms == T0 + DAY


def test_renew_never_past_max(clock: FakeClock[int]) -> None:
    mgr = manager(clock)
    token = create_ok(mgr, max_lifetime_ms=2 * DAY)
    clock.advance(DAY // 2)
    result = mgr.renew_token(ctx(), token.hmac)
    assert result == type(result)(E.NONE, T0 + DAY + DAY // 2)
    clock.advance(DAY)
    result = mgr.renew_token(ctx(), token.hmac)
    assert result == type(result)(E.NONE, T0 + 2 * DAY)  # capped by max
    clock.advance(DAY // 2)  # exactly at max: still renewable (strict <)
    assert mgr.renew_token(ctx(), token.hmac).error == E.NONE
    clock.advance(1)  # past max
    assert mgr.renew_token(ctx(), token.hmac) == type(result)(E.DELEGATION_TOKEN_EXPIRED, -1)


def test_renew_after_expiry_is_66(clock: FakeClock[int]) -> None:
    mgr = manager(clock)
    token = create_ok(mgr)
    clock.advance(DAY)
    assert mgr.renew_token(ctx(), token.hmac).error == E.NONE  # at the expiry instant
    clock.advance(DAY + 1)
    assert mgr.renew_token(ctx(), token.hmac).error == E.DELEGATION_TOKEN_EXPIRED


def test_renew_checks_owner_before_expiry_in_zk_mode(clock: FakeClock[int]) -> None:
    mgr = manager(clock)
    token = create_ok(mgr)
    clock.advance(2 * DAY)
    assert mgr.renew_token(ctx(BOB), token.hmac).error == E.DELEGATION_TOKEN_OWNER_MISMATCH


def test_renew_not_found_and_disabled(clock: FakeClock[int]) -> None:
    mgr = manager(clock)
    token = create_ok(mgr)
    assert mgr.renew_token(ctx(), b"\x00" * 64).error == E.DELEGATION_TOKEN_NOT_FOUND
    assert mgr.renew_token(ctx(), token.hmac[:-1]).error == E.DELEGATION_TOKEN_NOT_FOUND
    mgr.update_config(TokenConfig())
    assert mgr.renew_token(ctx(), token.hmac).error == E.DELEGATION_TOKEN_AUTH_DISABLED
    assert mgr.expire_token(ctx(), token.hmac).error == E.DELEGATION_TOKEN_AUTH_DISABLED
    assert mgr.describe_tokens(ctx()).error == E.DELEGATION_TOKEN_AUTH_DISABLED


# -- expire ------------------------------------------------------------------------


def test_expire_negative_removes_now(clock: FakeClock[int]) -> None:
    mgr = manager(clock)
    token = create_ok(mgr, renewers=[BOB])
    clock.advance(42)
    result = mgr.expire_token(ctx(BOB), token.hmac)  # AdminClient default -1
    assert result == type(result)(E.NONE, T0 + 42)
    assert mgr.cache.get(token.token_id) is None
    assert mgr.expire_token(ctx(), token.hmac).error == E.DELEGATION_TOKEN_NOT_FOUND


def test_expire_with_period(clock: FakeClock[int]) -> None:
    mgr = manager(clock)
    token = create_ok(mgr, max_lifetime_ms=2 * DAY)
    assert mgr.expire_token(ctx(), token.hmac, 1000).expiry_timestamp_ms == T0 + 1000
    assert mgr.expire_token(ctx(), token.hmac, 5 * DAY).expiry_timestamp_ms == T0 + 2 * DAY
    assert mgr.expire_token(ctx(), token.hmac, 0).expiry_timestamp_ms == T0
    clock.advance(1)
    # Already expired and a non-negative period: 66; a negative period still removes.
    assert mgr.expire_token(ctx(), token.hmac, 10).error == E.DELEGATION_TOKEN_EXPIRED
    assert mgr.expire_token(ctx(), token.hmac, -1).error == E.NONE


def test_expire_owner_mismatch(clock: FakeClock[int]) -> None:
    mgr = manager(clock)
    token = mgr.create_token(ctx(CAROL, super_user=True), owner=ALICE)
    assert mgr.expire_token(ctx(CAROL), token.hmac).error == E.DELEGATION_TOKEN_OWNER_MISMATCH
    assert mgr.expire_token(ctx(BOB), token.hmac).error == E.DELEGATION_TOKEN_OWNER_MISMATCH
    assert mgr.cache.get(token.token_id) is not None


# -- describe ----------------------------------------------------------------------


def test_describe_visibility(clock: FakeClock[int]) -> None:
    mgr = manager(clock)
    dave = KafkaPrincipal.user("dave")
    t_alice = create_ok(mgr, ALICE, renewers=[BOB])
    clock.advance(1)
    t_carol_for_alice = mgr.create_token(ctx(CAROL, super_user=True), owner=ALICE)
    clock.advance(1)
    t_dave = create_ok(mgr, dave)

    def ids(context: TokenRequester, owners: list[KafkaPrincipal] | None = None) -> list[str]:
        result = mgr.describe_tokens(context, owners)
        assert result.error == E.NONE
        return [t.token_id for t in result.tokens]

    assert ids(ctx(ALICE)) == [t_alice.token_id, t_carol_for_alice.token_id]
    assert ids(ctx(BOB)) == [t_alice.token_id]  # renewer
    assert ids(ctx(CAROL)) == [t_carol_for_alice.token_id]  # requester sees it
    assert ids(ctx(dave)) == [t_dave.token_id]
    assert ids(ctx(ALICE), []) == []  # empty owners list: nothing
    # Owner filter: a listed principal must be owner/requester/renewer.
    assert ids(ctx(ALICE, super_user=True), [BOB]) == [t_alice.token_id]
    assert ids(ctx(ALICE, super_user=True), [dave, CAROL]) == [
        t_carol_for_alice.token_id,
        t_dave.token_id,
    ]
    assert ids(ctx(ALICE), [dave]) == []  # filter passes, visibility does not

    def describe_token_acl(op: AclOperation, rt: ResourceType, name: str) -> bool:
        return op is AclOperation.DESCRIBE and name == t_dave.token_id

    def describe_tokens_acl(op: AclOperation, rt: ResourceType, name: str) -> bool:
        return (
            op is AclOperation.DESCRIBE_TOKENS and rt is ResourceType.USER and name == "User:dave"
        )

    assert ids(ctx(BOB, authorizer=describe_token_acl)) == [t_alice.token_id, t_dave.token_id]
    assert ids(ctx(BOB, authorizer=describe_tokens_acl)) == [t_alice.token_id, t_dave.token_id]
    token = mgr.describe_tokens(ctx(BOB)).tokens[0]
    assert token.hmac == t_alice.hmac
    assert token.info.renewers == (BOB,)


def test_describe_lists_expired_until_swept(clock: FakeClock[int]) -> None:
    mgr = manager(clock)
    create_ok(mgr)
    clock.advance(2 * DAY)
    assert len(mgr.describe_tokens(ctx()).tokens) == 1
    mgr.sweep()
    assert mgr.describe_tokens(ctx()).tokens == ()


# -- sweep -------------------------------------------------------------------------


def test_sweep_removes_only_expired(clock: FakeClock[int]) -> None:
    mgr = manager(clock)
    short = create_ok(mgr, max_lifetime_ms=1000)
    long = create_ok(mgr)
    assert mgr.sweep(T0 + 1000) == []  # max == now is not expired
    assert mgr.sweep(T0 + 1001) == [short.token_id]
    assert mgr.cache.get(long.token_id) is not None
    assert mgr.sweep(T0 + DAY + 1) == [long.token_id]
    assert len(mgr.cache) == 0


def test_store_failure_gives_unknown_server_error(clock: FakeClock[int]) -> None:
    store = InMemoryTokenStore()
    mgr = TokenManager(TokenConfig.of("k"), store, clock_ms=clock)
    token = create_ok(mgr)
    store.close()
    failed = mgr.create_token(ctx())
    assert failed.error == E.UNKNOWN_SERVER_ERROR and failed.token_id == ""
    assert mgr.renew_token(ctx(), token.hmac).error == E.UNKNOWN_SERVER_ERROR
    assert mgr.expire_token(ctx(), token.hmac).error == E.UNKNOWN_SERVER_ERROR  # removal
    shortened = mgr.expire_token(ctx(), token.hmac, 1000)  # a new expiry
    assert (shortened.error, shortened.expiry_timestamp_ms) == (E.UNKNOWN_SERVER_ERROR, -1)
    with pytest.raises(TokenStoreError):
        store.put(mgr.cache.tokens()[0])


def test_sweeper_schedule_with_injected_clock(clock: FakeClock[int]) -> None:
    mgr = manager(clock, expiry_check_interval_ms=1000)
    token = create_ok(mgr, max_lifetime_ms=500)
    sweeper = ExpirySweeper(mgr, clock_ms=clock)
    assert sweeper.poll() == []  # initial delay 0: sweeps at once
    clock.advance(600)  # token expired, but the next sweep is not due
    assert sweeper.poll() is None
    assert mgr.cache.get(token.token_id) is not None
    clock.advance(400)
    assert sweeper.poll() == [token.token_id]
    assert sweeper.next_due_ms == T0 + 2000
    assert sweeper.sweeps == 2


def test_sweeper_thread_runs_every_interval() -> None:
    swept = threading.Event()
    calls: list[int] = []

    class Recording(TokenManager):
        def sweep(self, now_ms: int | None = None) -> list[str]:
            calls.append(now_ms or 0)
            if len(calls) >= 3:
                swept.set()
            return []

    mgr = Recording(TokenConfig.of("k", expiry_check_interval_ms=10), InMemoryTokenStore())
    sweeper = ExpirySweeper(mgr)
    sweeper.start()
    try:
        assert swept.wait(5)
    finally:
        sweeper.stop()
    assert calls == sorted(calls)
    assert calls[2] - calls[0] >= 20


def test_sweeper_survives_a_failing_sweep(clock: FakeClock[int]) -> None:
    class Failing(TokenManager):
        def sweep(self, now_ms: int | None = None) -> list[str]:
            raise RuntimeError("boom")

    sweeper = ExpirySweeper(Failing(TokenConfig.of("k"), InMemoryTokenStore()), clock_ms=clock)
    assert sweeper.poll() == []


def test_token_ids_from_injected_factory(clock: FakeClock[int]) -> None:
    ids: Callable[[], str] = iter(["tokA", "tokB"]).__next__
    mgr = TokenManager(
        TokenConfig.of("secretKey"), InMemoryTokenStore(), clock_ms=clock, token_id_factory=ids
    )
    assert create_ok(mgr).token_id == "tokA"
    assert create_ok(mgr).token_id == "tokB"


def test_sweep_batches_removals_durably_in_sqlite(tmp_path: Path) -> None:
    from tokenauth import SQLiteTokenStore

    now = [1_000_000]
    config = TokenConfig.of("s", max_lifetime_ms=1000, expiry_time_ms=1000)
    path = tmp_path / "tokens.db"
    store = SQLiteTokenStore(path)
    cache = TokenCache(store, config.secrets)
    manager = TokenManager(config, store, cache=cache, clock_ms=lambda: now[0])
    ctx = TokenRequester(KafkaPrincipal.user("b"), security_protocol="SASL_PLAINTEXT")
    ids = [manager.create_token(ctx).token_id for _ in range(12)]
    now[0] += 500
    keep = manager.create_token(ctx).token_id
    now[0] += 600  # the first 12 are past expiry, the last is not
    assert sorted(manager.sweep()) == sorted(ids)
    assert [t.token_id for t in cache.tokens()] == [keep]
    manager.close()
    cache.close()
    store.close()
    reopened = SQLiteTokenStore(path)
    try:
        assert [t.token_id for t in reopened.tokens()] == [keep]
    finally:
        reopened.close()


def test_the_former_name_is_gone_and_the_requester_is_not_the_endpoints_context() -> None:
    import sasl_scram.endpoint
    import tokenauth

    assert not hasattr(tokenauth, "RequestContext")
    assert tokenauth.TokenRequester is not sasl_scram.endpoint.RequestContext
