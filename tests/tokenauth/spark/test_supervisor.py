"""The supervisor's state machine with a fake clock, broker and query (no Spark)."""

from __future__ import annotations

import itertools
import logging
import socket
import time
from collections.abc import Iterable

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from sasl_scram.admin import KafkaConnectionError
from sasl_scram.config import ClientConfigError
from sasl_scram.kafka import ErrorCode
from tests.support.clock import T0
from tests.support.clock import FakeClock
from tokenauth import TokenRequestError
from tokenauth import hmac_base64
from tokenauth.spark import SupervisorError
from tokenauth.spark import SupervisorPolicy
from tokenauth.spark import SupervisorState
from tokenauth.spark import TokenSupervisor
from tokenauth.spark import jaas_login
from tokenauth.spark import secret_login
from tokenauth.spark._login import token_login_probe
from tokenauth.spark._rotation import TokenRotation

from .fakes import FakeBroker
from .fakes import FakeQuery
from .fakes import FakeSpark

S = SupervisorState


def make(
    clock: FakeClock[int] | None = None, policy: SupervisorPolicy | None = None, **broker_kw: int
) -> tuple[TokenSupervisor, FakeBroker, FakeSpark, FakeClock[int]]:
    clock = clock or FakeClock.epoch_ms()
    broker = FakeBroker(clock, **broker_kw)
    spark = FakeSpark()
    sup = TokenSupervisor(
        broker.connect,
        spark.start,
        bootstrap_servers="broker:9093",
        policy=policy or SupervisorPolicy(),
        clock_ms=clock,
    )
    return sup, broker, spark, clock


def run_until(sup: TokenSupervisor, clock: FakeClock[int], until_ms: int) -> None:
    """Drive step() the way run() does, jumping the clock to each due time."""
    while clock() < until_ms and sup.state not in (S.STOPPED, S.FAILED):
        due = sup.step()
        clock.now = min(max(due, clock() + 1), until_ms)


def test_start_obtains_a_token_and_starts_the_query_with_its_options() -> None:
    sup, broker, spark, _ = make()
    sup.start(background=False)
    assert sup.state is S.RUNNING
    assert broker.created == ["tok0"] and sup.token_id == "tok0"
    (q,) = spark.queries
    jaas_value = q.options["kafka.sasl.jaas.config"]
    assert jaas_value == (
        "org.apache.kafka.common.security.scram.ScramLoginModule required tokenauth=true "
        f'username="tok0" password="{hmac_base64(b"tok0" * 4)}";'
    )
    assert q.options["kafka.bootstrap.servers"] == "broker:9093"
    assert q.options["kafka.sasl.mechanism"] == "SCRAM-SHA-512"
    assert q.options["kafka.security.protocol"] == "SASL_SSL"
    assert [t.target for t in sup.history] == [S.OBTAINING, S.STARTING, S.RUNNING]


def test_renews_at_the_ratio_of_the_time_to_expiry() -> None:
    sup, broker, _, clock = make(expiry_ms=60_000, max_lifetime_ms=10 * 60_000)
    sup.start(background=False)
    assert sup.next_renewal_ms() == T0 + 45_000
    clock.now = T0 + 44_999
    assert sup.step() == T0 + 45_000
    assert broker.renewed == []
    clock.now = T0 + 45_000
    sup.step()
    assert broker.renewed == ["tok0"] and sup.renewals == 1
    # New expiry 45 s + 60 s; the next renewal at 0.75 of the 60 s left.
    assert sup.next_renewal_ms() == T0 + 45_000 + 45_000
    assert S.RENEWING in [t.target for t in sup.history]


def test_custom_renew_ratio() -> None:
    sup, _, _, _ = make(policy=SupervisorPolicy(renew_ratio=0.5), expiry_ms=60_000)
    sup.start(background=False)
    assert sup.next_renewal_ms() == T0 + 30_000


def test_rotation_creates_restarts_then_expires_in_that_order() -> None:
    sup, broker, spark, clock = make(expiry_ms=60_000, max_lifetime_ms=240_000)
    live_at_start: list[set[str]] = []
    original = spark.start

    def start(options):  # type: ignore[no-untyped-def]
        live_at_start.append(broker.live_ids())
        return original(options)

    sup._login.start_query = start
    sup.start(background=False)
    assert sup.next_rotation_ms() == T0 + 180_000
    run_until(sup, clock, T0 + 180_001)
    assert broker.created == ["tok0", "tok1"]
    assert [q.token_id for q in spark.queries] == ["tok0", "tok1"]
    first, second = spark.queries
    assert first.stops == 1 and not first.isActive and second.isActive
    assert first.id == second.id and first.runId != second.runId
    # The old token was still valid when the new query started; expired after.
    assert live_at_start[1] == {"tok0", "tok1"}
    assert broker.expired == ["tok0"] and broker.live_ids() == {"tok1"}
    assert sup.rotations == 1 and sup.token_id == "tok1"
    targets = [t.target for t in sup.history]
    i = targets.index(S.ROTATING)
    assert targets[i : i + 4] == [S.ROTATING, S.RESTARTING, S.STARTING, S.EXPIRING]


@pytest.mark.slow
def test_many_rotations_over_weeks_keep_exactly_one_live_token() -> None:
    day = 86_400_000
    sup, broker, spark, clock = make(expiry_ms=day, max_lifetime_ms=7 * day)
    sup.start(background=False)
    run_until(sup, clock, T0 + 30 * day)
    assert sup.state is S.RUNNING
    assert sup.rotations >= 5
    assert broker.live_ids() == {sup.token_id}
    assert sum(q.isActive for q in spark.queries) == 1
    assert len({q.id for q in spark.queries}) == 1


def test_rotates_when_a_renewal_can_no_longer_extend_the_expiry() -> None:
    # Expiry equals max lifetime: renewing is pointless, so replace at the renewal time.
    sup, broker, _, clock = make(
        policy=SupervisorPolicy(rotate_ratio=0.9), expiry_ms=100_000, max_lifetime_ms=100_000
    )
    sup.start(background=False)
    clock.now = T0 + 75_000
    sup.step()
    assert broker.renewed == [] and broker.created == ["tok0", "tok1"]
    assert broker.expired == ["tok0"]


def test_backs_off_exponentially_and_retries_a_failed_rotation() -> None:
    sup, broker, spark, clock = make(expiry_ms=100_000, max_lifetime_ms=120_000)
    sup.start(background=False)
    clock.now = T0 + 90_000
    broker.failures = [ConnectionError("down"), TokenRequestError("create", -1)]
    due = sup.step()
    assert sup.state is S.BACKING_OFF and due == clock() + 1_000
    assert spark.queries[0].isActive  # the old query keeps its still-valid token
    clock.now = due - 1
    assert sup.step() == due  # nothing happens before the retry time
    clock.now = due
    due2 = sup.step()
    assert sup.state is S.BACKING_OFF and due2 == clock() + 2_000
    clock.now = due2
    sup.step()
    assert sup.state is S.RUNNING and broker.created == ["tok0", "tok1"]
    assert broker.expired == ["tok0"]
    warnings = [t for t in sup.history if t.target is S.BACKING_OFF]
    assert "attempt 2" in warnings[1].detail and "error -1" in warnings[1].detail


def test_backoff_is_capped() -> None:
    policy = SupervisorPolicy(initial_backoff_ms=1_000, max_backoff_ms=4_000)
    sup, broker, _, clock = make(policy=policy, expiry_ms=100_000, max_lifetime_ms=400_000)
    sup.start(background=False)
    clock.now = T0 + 75_000
    broker.failures = [ConnectionError()] * 6
    delays = []
    for _ in range(6):
        due = sup.step()
        delays.append(due - clock())
        clock.now = due
    assert delays == [1_000, 2_000, 4_000, 4_000, 4_000, 4_000]
    sup.step()
    assert broker.renewed == ["tok0"] and sup.state is S.RUNNING


def test_failed_restart_keeps_the_old_token_until_the_new_query_runs() -> None:
    sup, broker, spark, clock = make(expiry_ms=100_000, max_lifetime_ms=120_000)
    sup.start(background=False)
    clock.now = T0 + 90_000
    spark.failures = [RuntimeError("spark said no")]
    due = sup.step()
    assert sup.state is S.BACKING_OFF
    assert broker.expired == [] and broker.live_ids() == {"tok0", "tok1"}
    assert sup.query is None and sup.token_id == "tok1"
    # The detail names the exception type only: Spark's messages are not ours to log.
    assert sup.history[-1].detail.startswith("starting failed (RuntimeError)")
    clock.now = due
    sup.step()
    assert sup.state is S.RUNNING and broker.expired == ["tok0"]
    assert [q.token_id for q in spark.queries] == ["tok0", "tok1"]


def test_a_token_gone_at_renewal_is_replaced_at_once() -> None:
    sup, broker, spark, clock = make(expiry_ms=60_000, max_lifetime_ms=600_000)
    sup.start(background=False)
    broker.tokens.clear()  # e.g. an operator expired it
    clock.now = T0 + 45_000
    sup.step()
    assert sup.state is S.RUNNING and broker.created == ["tok0", "tok1"]
    assert [q.token_id for q in spark.queries] == ["tok0", "tok1"]
    assert broker.expired == []  # tok0 was already gone: nothing to expire


def test_expiry_failures_are_retried_then_given_up() -> None:
    sup, broker, _, clock = make(expiry_ms=100_000, max_lifetime_ms=120_000)
    sup.start(background=False)
    clock.now = T0 + 90_000
    boom = TokenRequestError("expire", ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH)
    broker.op_failures["expire"] = [boom, boom]
    due = sup.step()
    assert sup.state is S.BACKING_OFF and sup.token_id == "tok1"
    clock.now = due
    due = sup.step()
    clock.now = due
    sup.step()
    assert sup.state is S.RUNNING and broker.expired == ["tok0"]

    # A token that cannot be expired is given up after five attempts.
    clock.now = T0 + 90_000 + 91_000
    broker.op_failures["expire"] = [boom] * 10
    for _ in range(5):
        clock.now = max(sup.step(), clock())
    assert sup.state is S.RUNNING and sup.token_id == "tok2"
    assert not sup._tokens.retired and len(broker.op_failures["expire"]) == 5


def test_query_ending_by_itself_fails_the_supervisor_and_expires_tokens() -> None:
    sup, broker, spark, _ = make()
    sup.start(background=False)
    q = spark.queries[0]
    q.isActive = False
    q.failure = RuntimeError("executor lost")
    sup.step()
    assert sup.state is S.FAILED and broker.live_ids() == set()
    with pytest.raises(SupervisorError) as info:
        sup.await_termination()
    assert info.value.__cause__ is q.failure


def test_query_stopped_by_the_user_stops_the_supervisor() -> None:
    sup, broker, spark, _ = make()
    sup.start(background=False)
    spark.queries[0].stop()
    sup.step()
    assert sup.state is S.STOPPED and broker.live_ids() == set()
    assert sup.await_termination() is True


def test_stop_stops_the_query_and_expires_every_token_idempotently() -> None:
    sup, broker, spark, _ = make()
    with sup.start(background=False):
        pass
    assert sup.state is S.STOPPED
    assert spark.queries[0].stops == 1 and broker.expired == ["tok0"]
    sup.stop()
    assert spark.queries[0].stops == 1 and broker.expired == ["tok0"]
    assert [t.target for t in sup.history][-2:] == [S.STOPPING, S.STOPPED]


def test_stop_without_expiring() -> None:
    sup, broker, _, _ = make()
    sup.start(background=False)
    sup.stop(expire_tokens=False)
    assert broker.live_ids() == {"tok0"}


def test_start_failures_raise_and_clean_up() -> None:
    sup, broker, _, _ = make()
    broker.failures = [TokenRequestError("create", ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED)]
    with pytest.raises(SupervisorError, match="Delegation Token feature is not enabled"):
        sup.start(background=False)
    assert sup.state is S.FAILED

    sup, broker, spark, _ = make()
    spark.failures = [ValueError("bad query")]
    with pytest.raises(SupervisorError) as info:
        sup.start(background=False)
    assert isinstance(info.value.__cause__, ValueError)
    assert broker.created == ["tok0"] and broker.live_ids() == set()
    with pytest.raises(SupervisorError):
        sup.start()


def test_schedule_follows_the_local_clock_when_the_broker_clock_is_skewed() -> None:
    sup, broker, _, clock = make(expiry_ms=60_000, skew_ms=3_600_000)
    sup.start(background=False)
    assert sup.next_renewal_ms() == T0 + 45_000
    clock.now = T0 + 45_000
    sup.step()
    assert broker.renewed == ["tok0"]


def test_run_loop_with_an_injected_wait() -> None:
    clock = FakeClock.epoch_ms()
    broker = FakeBroker(clock, expiry_ms=10_000, max_lifetime_ms=40_000)
    spark = FakeSpark()
    waits: list[float] = []

    def wait(seconds: float) -> None:
        waits.append(seconds)
        clock.advance(int(seconds * 1000))
        if clock() >= T0 + 100_000:
            sup._stop_event.set()

    sup = TokenSupervisor(
        broker.connect,
        spark.start,
        bootstrap_servers="b:1",
        policy=SupervisorPolicy(check_interval_ms=2_000),
        clock_ms=clock,
        wait=wait,
    )
    sup.start(background=False)
    sup.run()
    assert sup.rotations >= 2
    assert max(waits) <= 2.0 and min(waits) >= 0.05
    sup.stop()
    assert broker.live_ids() == set()


def test_background_thread_stops_cleanly() -> None:
    sup, broker, spark, _ = make(policy=SupervisorPolicy(check_interval_ms=10))
    sup.start()
    assert sup._thread is not None and sup._thread.is_alive()
    sup.stop(timeout=5)
    assert not sup._thread.is_alive()
    assert sup.state is S.STOPPED and broker.live_ids() == set()
    assert not spark.queries[0].isActive


def test_logs_and_reprs_never_show_the_hmac(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="tokenauth")
    sup, broker, spark, clock = make(expiry_ms=60_000, max_lifetime_ms=120_000)
    sup.start(background=False)
    broker.failures = [ConnectionError("x")]
    run_until(sup, clock, T0 + 400_000)
    secrets = {hmac_base64(h) for h in broker.tokens} | {
        hmac_base64(f"tok{i}".encode() * 4) for i in range(len(broker.created))
    }
    text = caplog.text + repr(sup) + "".join(repr(t) for t in sup.history)
    text += "".join(repr(q.kafka_options) for q in spark.queries)
    assert "spark token supervisor: running -> renewing" in caplog.text
    assert "created token tok1" in caplog.text
    for secret in secrets:
        assert secret not in text


def test_policy_validation() -> None:
    with pytest.raises(ValueError, match="renew_ratio"):
        SupervisorPolicy(renew_ratio=1.0)
    with pytest.raises(ValueError, match="rotate_ratio"):
        SupervisorPolicy(rotate_ratio=0)
    with pytest.raises(ValueError, match="backoff"):
        SupervisorPolicy(initial_backoff_ms=10, max_backoff_ms=5)


def test_login_configs() -> None:
    cfg = secret_login("b:1", "alice", "alice-secret", security_protocol="SASL_PLAINTEXT")
    assert cfg.username == "alice" and "alice-secret" not in repr(cfg)
    token_login = jaas_login(
        "b:1",
        "org.apache.kafka.common.security.scram.ScramLoginModule required tokenauth=true "
        'username="id" password="hmac";',
    )
    with pytest.raises(ClientConfigError, match="token login cannot create tokens"):
        TokenSupervisor(token_login, FakeSpark().start)
    plain = jaas_login("b:1", "x", security_protocol="PLAINTEXT")
    with pytest.raises(ClientConfigError, match="needs SASL"):
        TokenSupervisor(plain, FakeSpark().start)
    sup = TokenSupervisor(cfg, FakeSpark().start)
    assert "b:1" in repr(sup) and sup._login.protocol == "SASL_PLAINTEXT"


# Every interleaving of time steps and injected broker/Spark failures keeps
# the invariants: at most one active query, a query always starts with a live
# token, the token in use is never expired by us, and stop leaves nothing live.
_events = st.lists(
    st.tuples(
        st.integers(min_value=1, max_value=50_000),
        st.sampled_from(["none", "broker", "spark", "gone"]),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(_events)
def test_invariants_under_any_failure_order(events: list[tuple[int, str]]) -> None:
    sup, broker, spark, clock = make(
        policy=SupervisorPolicy(initial_backoff_ms=100, max_backoff_ms=2_000),
        expiry_ms=20_000,
        max_lifetime_ms=60_000,
    )
    original = spark.start

    def start(options):  # type: ignore[no-untyped-def]
        assert options.token_id in broker.live_ids() or options.token_id not in broker.expired
        return original(options)

    sup._login.start_query = start
    sup.start(background=False)
    for advance, failure in events:
        if failure == "broker":
            broker.failures.append(ConnectionError())
        elif failure == "spark":
            spark.failures.append(RuntimeError())
        elif failure == "gone" and sup.token_id is not None:
            broker.tokens = {h: i for h, i in broker.tokens.items() if i.token_id != sup.token_id}
        clock.advance(advance)
        sup.step()
        assert sum(q.isActive for q in spark.queries) <= 1
        assert sup.token_id not in broker.expired
        active = [q for q in spark.queries if q.isActive]
        if active:
            assert active[0].token_id == sup.token_id
    broker.failures.clear()
    sup.stop()
    assert not any(q.isActive for q in spark.queries)
    assert broker.live_ids() == set()


# --- a new token is handed over only once the brokers take it ---------------


def rotation_with(
    accepted: Iterable[bool], policy: SupervisorPolicy
) -> tuple[TokenRotation, FakeBroker]:
    """A TokenRotation whose brokers answer the login probe with ``accepted``,
    in order (the probe ``token_login_probe`` builds from a ClientConfig)."""
    broker = FakeBroker(FakeClock.epoch_ms())
    answers = iter(accepted)
    rotation = TokenRotation(
        broker.connect, policy, broker.clock, lambda _token, _s: next(answers), lambda _s: False
    )
    return rotation, broker


def test_a_new_token_is_handed_over_once_the_brokers_take_it() -> None:
    rotation, broker = rotation_with([False, False, True], SupervisorPolicy())
    held = rotation.create()
    assert held.token_id == "tok0" and broker.expired == []


def test_a_token_the_brokers_never_take_is_expired_and_the_creation_fails() -> None:
    policy = SupervisorPolicy(token_ready_timeout_ms=1)
    rotation, broker = rotation_with(itertools.repeat(False), policy)
    with pytest.raises(SupervisorError, match="did not take token tok0 within 1 ms"):
        rotation.create()
    assert broker.expired == ["tok0"] and broker.live_ids() == set()


def test_no_probe_with_a_zero_ready_timeout() -> None:
    rotation, _ = rotation_with([], SupervisorPolicy(token_ready_timeout_ms=0))
    assert rotation.create().token_id == "tok0"


def test_a_negative_ready_timeout_is_refused() -> None:
    with pytest.raises(ValueError, match="token_ready_timeout_ms"):
        SupervisorPolicy(token_ready_timeout_ms=-1)


def test_a_stop_while_waiting_for_the_brokers_ends_the_wait() -> None:
    broker = FakeBroker(FakeClock.epoch_ms())
    rotation = TokenRotation(
        broker.connect, SupervisorPolicy(), broker.clock, lambda _t, _s: False, lambda _s: True
    )
    with pytest.raises(SupervisorError, match="stopped while waiting for token tok0"):
        rotation.create()
    assert broker.expired == ["tok0"]


def test_each_broker_check_is_given_only_the_time_left() -> None:
    # A probe takes at most the time it is given (a broker that never answers
    # makes it take all of it): the wait then ends at token_ready_timeout_ms,
    # not one whole connection timeout per check later.
    given: list[float] = []

    def slow_probe(_token: object, within_s: float) -> bool:
        given.append(within_s)
        time.sleep(within_s)
        return False

    broker = FakeBroker(FakeClock.epoch_ms())
    policy = SupervisorPolicy(token_ready_timeout_ms=300)
    rotation = TokenRotation(broker.connect, policy, broker.clock, slow_probe, lambda _s: False)
    started = time.monotonic()
    with pytest.raises(SupervisorError, match="did not take token tok0 within 300 ms"):
        rotation.create()
    # Not one slow probe per check beyond the limit (each would take 0.3 s more).
    assert time.monotonic() - started < 5.0
    assert given and all(0 < s <= 0.3 for s in given)


def test_the_login_probe_gives_up_when_its_time_is_up() -> None:
    # A broker that takes the connection and never answers: the probe's own
    # connection timeout is 10 s, the time it is given 0.3 s.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        probe = token_login_probe(secret_login(f"127.0.0.1:{port}", "alice", "pw"), 10.0)
        with FakeBroker(FakeClock.epoch_ms()).connect() as client:
            token = client.create_token()
        started = time.monotonic()
        # Not known yet: the wait then ends with "did not take token within".
        assert probe(token, 0.3) is False
        assert time.monotonic() - started < 5.0  # its own timeout is 10 s


def test_the_login_probe_raises_when_no_broker_is_reachable() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # bound, not listening: refused at once
        probe = token_login_probe(secret_login(f"127.0.0.1:{port}", "alice", "pw"), 10.0)
        with FakeBroker(FakeClock.epoch_ms()).connect() as client:
            token = client.create_token()
        with pytest.raises(KafkaConnectionError, match="cannot connect"):
            probe(token, 5.0)


def test_a_failing_renewal_is_retried_before_the_token_expires(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Renewal falls due 5 s before expiry; an uncapped back-off (1, 2, 4 s)
    # would put the third retry past the expiry, when the query's token is dead.
    sup, broker, _, clock = make(expiry_ms=20_000, max_lifetime_ms=600_000)
    sup.start(background=False)
    expiry = T0 + 20_000
    clock.now = T0 + 15_000
    broker.op_failures["renew"] = [ConnectionError("down")] * 6
    with caplog.at_level(logging.INFO, logger="tokenauth.spark"):
        for _ in range(6):
            due = sup.step()
            assert sup.state is S.BACKING_OFF
            assert clock() < due < expiry
            clock.now = due
    # Running out of time is loud, and says when the token lapses.
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors and "token tok0 expires in" in errors[-1].getMessage()
    sup.step()
    assert broker.renewed == ["tok0"] and sup.state is S.RUNNING


def test_a_rotation_whose_stop_raised_after_stopping_the_query_resumes_it() -> None:
    # StreamingQuery.stop() can raise once the query is stopped (a py4j error,
    # spark.sql.streaming.stopTimeout): that is still the supervisor's own stop,
    # not the user ending the query.
    sup, broker, spark, clock = make(expiry_ms=100_000, max_lifetime_ms=120_000)
    sup.start(background=False)
    old = spark.queries[0]

    def stop_then_raise() -> None:
        FakeQuery.stop(old)
        raise RuntimeError("stop timed out")

    old.stop = stop_then_raise  # type: ignore[method-assign]
    clock.now = T0 + 90_000
    due = sup.step()
    assert sup.state is S.BACKING_OFF and not old.isActive
    clock.now = due
    sup.step()
    assert sup.state is S.RUNNING and sup.token_id == "tok1"
    assert [q.token_id for q in spark.queries] == ["tok0", "tok1"]
    assert spark.queries[1].isActive and broker.expired == ["tok0"]
