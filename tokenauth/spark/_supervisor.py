"""A driver-side supervisor keeping a streaming query logged in with fresh tokens.

Spark re-creates Kafka tokens only when Kerberos is on
(``HadoopDelegationTokenManager``), and a query's ``kafka.sasl.jaas.config``
is fixed when the query starts. The supervisor does the rest for everyone
else: it obtains a token with the user's SCRAM login, renews it at
``renew_ratio`` of the time left (Spark's ``spark.security.credentials.
renewalRatio``, 0.75), and before the token's maximum lifetime creates a new
one, restarts the query from its checkpoint with the new options and only then
expires the old token. Failures back off exponentially and are retried.

The decisions live in :meth:`TokenSupervisor.step`, which reads the injected
clock and does whatever is due; the background thread only calls it and
waits. Tests drive ``step`` with a fake clock, fake client and fake query.

The parts: ``_schedule`` (when renewal, rotation and retries fall),
``_rotation`` (the tokens held and the token RPCs), ``_jvm_login`` (the
query's options and its restarts), ``_policy`` (states and timings).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from collections.abc import Mapping

from sasl_scram.config import ClientConfig
from sasl_scram.config import ClientConfigError
from tokenauth._manager import wall_clock_ms
from tokenauth.spark._jvm_login import QueryLogin
from tokenauth.spark._jvm_login import stop_between_batches
from tokenauth.spark._login import token_login_probe
from tokenauth.spark._login import token_rpc_connector
from tokenauth.spark._options import _DEFAULT_MECHANISM
from tokenauth.spark._options import _DEFAULT_PROTOCOL
from tokenauth.spark._options import KafkaOptions
from tokenauth.spark._options import TokenLike
from tokenauth.spark._policy import _FINAL
from tokenauth.spark._policy import StreamingQueryLike
from tokenauth.spark._policy import SupervisorError
from tokenauth.spark._policy import SupervisorPolicy
from tokenauth.spark._policy import SupervisorState
from tokenauth.spark._policy import TokenClient
from tokenauth.spark._policy import Transition
from tokenauth.spark._policy import _describe
from tokenauth.spark._policy import _Held
from tokenauth.spark._policy import _StateLog
from tokenauth.spark._rotation import TokenRotation
from tokenauth.spark._schedule import Backoff
from tokenauth.spark._schedule import next_due_ms
from tokenauth.spark._schedule import renewal_at_ms
from tokenauth.spark._schedule import rotation_at_ms
from tokenauth.spark._schedule import rotation_due
from tokenauth.spark._schedule import wait_ms

__all__ = ["TokenSupervisor"]

_log = logging.getLogger("tokenauth.spark")


class TokenSupervisor:
    """Keep one streaming query authenticated with delegation tokens.

    Args:
        login: The user's SCRAM login for the token RPCs (see
            ``tokenauth.spark.client_properties_login``, ``jaas_login``,
            ``secret_login``), or a callable opening a :class:`TokenClient`.
        start_query: Builds and starts the query with the given options and
            returns it. It must set the same ``checkpointLocation`` every time
            so that restarts resume; apply the options with
            :func:`apply_kafka_options`.
        bootstrap_servers: The brokers the query reads or writes; by default
            those of ``login``.
        mechanism: The token's SASL mechanism in the query's options.
        security_protocol: The query's ``kafka.security.protocol``; by default
            that of ``login`` (``SASL_SSL`` if it is not a SASL protocol).
        extra_options: More Kafka client properties for the query (TLS trust
            store, ...), passed to :func:`kafka_options`.
        policy: Renewal, rotation and retry timings.
        clock_ms: Epoch milliseconds; injected by tests.
        wait: Sleeps up to the given seconds (may return early); by default
            waits on the supervisor's stop event. Injected by tests.
        timeout: Seconds for each token RPC connection.
    """

    def __init__(
        self,
        login: ClientConfig | Callable[[], TokenClient],
        start_query: Callable[[KafkaOptions], StreamingQueryLike],
        *,
        bootstrap_servers: str | None = None,
        mechanism: str = _DEFAULT_MECHANISM,
        security_protocol: str | None = None,
        extra_options: Mapping[str, str] | None = None,
        policy: SupervisorPolicy | None = None,
        clock_ms: Callable[[], int] = wall_clock_ms,
        wait: Callable[[float], object] | None = None,
        timeout: float = 30.0,
    ) -> None:
        accepted: Callable[[TokenLike, float], bool] | None = None
        if isinstance(login, ClientConfig):
            connect = token_rpc_connector(login, timeout)
            accepted = token_login_probe(login, timeout)
            bootstrap_servers = bootstrap_servers or login.bootstrap_servers
            if security_protocol is None:
                security_protocol = login.security_protocol
        else:
            connect = login
        if not bootstrap_servers:
            raise ClientConfigError("bootstrap.servers: required for the query's options")
        self.policy = policy or SupervisorPolicy()
        self._clock = clock_ms
        self._stop_event = threading.Event()
        self._wait = wait or self._stop_event.wait
        self._login = QueryLogin(
            start_query,
            bootstrap_servers,
            mechanism,
            security_protocol or _DEFAULT_PROTOCOL,
            extra_options,
        )
        self._tokens = TokenRotation(
            connect, self.policy, clock_ms, accepted, self._wait, self._login.release_clients
        )
        self._backoff = Backoff(self.policy)
        self._lock = threading.RLock()
        self._thread: threading.Thread | None = None
        self._states = _StateLog(clock_ms)
        self._query: StreamingQueryLike | None = None
        self.last_error: BaseException | None = None
        self.failure: object | None = None
        self.renewals = 0
        self.rotations = 0

    def __repr__(self) -> str:
        return (
            f"TokenSupervisor(state={self._states.state.value}, token_id={self.token_id!r}, "
            f"bootstrap_servers={self._login.bootstrap_servers!r}, rotations={self.rotations})"
        )

    # --- what callers may look at -------------------------------------------

    @property
    def state(self) -> SupervisorState:
        return self._states.state

    @property
    def query(self) -> StreamingQueryLike | None:
        """The query currently running under the supervisor."""
        return self._query

    @property
    def token_id(self) -> str | None:
        """The id of the token the query uses now (ids are not secrets)."""
        held = self._tokens.current
        return held.token_id if held else None

    @property
    def history(self) -> tuple[Transition, ...]:
        """The most recent state changes, oldest first."""
        return tuple(self._states.history)

    def next_renewal_ms(self) -> int | None:
        """Local time of the next renewal, or ``None`` without a token."""
        held = self._tokens.current
        return None if held is None else renewal_at_ms(held, self.policy)

    def next_rotation_ms(self) -> int | None:
        """Local time at which the token is replaced, or ``None`` without a token."""
        held = self._tokens.current
        return None if held is None else rotation_at_ms(held, self.policy)

    # --- lifecycle ----------------------------------------------------------

    def start(self, *, background: bool = True) -> TokenSupervisor:
        """Obtain the first token, start the query, then supervise.

        The first token and the first start are not retried: a wrong login or
        a broken query definition fails here, loudly.

        Args:
            background: Run the supervision loop in a daemon thread. With
                ``False``, call :meth:`run` or :meth:`step` yourself.

        Returns:
            ``self``, so that ``with TokenSupervisor(...).start() as s:`` works.

        Raises:
            SupervisorError: The token could not be obtained or the query not
                started; the cause is chained.
        """
        with self._lock:
            if self._states.state is not SupervisorState.NEW:
                raise SupervisorError(
                    f"cannot start a supervisor in state {self._states.state.value}"
                )
            try:
                self._states.enter(SupervisorState.OBTAINING, "obtaining the first token")
                self._tokens.current = self._tokens.create()
                self._launch()
            except Exception as exc:
                self.last_error = exc
                self._tokens.expire_all()
                self._states.enter(SupervisorState.FAILED, f"start failed: {_describe(exc)}")
                raise SupervisorError(f"could not start: {_describe(exc)}") from exc
            self._states.enter(SupervisorState.RUNNING, f"query {self._login.query_id}")
        if background:
            self._thread = threading.Thread(
                target=self.run, name="tokenauth-spark-supervisor", daemon=True
            )
            self._thread.start()
        return self

    def run(self) -> None:
        """Supervise until :meth:`stop` or the query ends: step, wait, repeat."""
        while not self._stop_event.is_set():
            try:
                due = self.step()
            except Exception as exc:  # a bug, not a broker failure: do not spin
                self.last_error = exc
                _log.error("token supervisor crashed: %s", _describe(exc))
                with self._lock:
                    self._states.enter(SupervisorState.FAILED, f"crashed: {_describe(exc)}")
                return
            if self._states.state in _FINAL:
                return
            self._wait(wait_ms(due, self._clock(), self.policy) / 1000.0)

    def stop(self, *, expire_tokens: bool = True, timeout: float | None = 60.0) -> None:
        """Stop supervising, stop the query and expire every token we hold.

        Idempotent. Safe to call from any thread, including a query listener.

        Args:
            expire_tokens: Expire the tokens (best effort; failures are logged).
            timeout: Seconds to wait for the supervision thread.
        """
        self._stop_event.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        with self._lock:
            if self._states.state is SupervisorState.STOPPED:
                return
            failed = self._states.state is SupervisorState.FAILED
            final = SupervisorState.FAILED if failed else SupervisorState.STOPPED
            self._states.enter(SupervisorState.STOPPING, "stop requested")
            query, self._query = self._query, None
            if query is not None:
                try:
                    if query.isActive:
                        stop_between_batches(query)
                except Exception as exc:
                    _log.warning("stopping the query failed: %s", _describe(exc))
            if expire_tokens:
                self._tokens.expire_all()
            self._states.enter(final, "stopped")

    def await_termination(self, timeout: float | None = None) -> bool:
        """Wait for the supervision thread to end.

        Returns:
            Whether it ended within ``timeout``.

        Raises:
            SupervisorError: The query failed (its exception is chained when it
                is an exception).
        """
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                return False
        if self._states.state is SupervisorState.FAILED:
            cause = self.failure if isinstance(self.failure, BaseException) else self.last_error
            raise SupervisorError("the supervised query or the supervisor failed") from cause
        return True

    def __enter__(self) -> TokenSupervisor:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    # --- the state machine --------------------------------------------------

    def step(self) -> int:
        """Do whatever is due now; return the local time (ms) of the next duty.

        In order: a missing token is created; a missing query is started;
        a query that ended by itself ends supervision; a due rotation creates
        the replacement, restarts the query and retires the old token; a due
        renewal renews; retired tokens are expired. A failing step backs off.
        """
        with self._lock:
            now = self._clock()
            if self._states.state in _FINAL or self._states.state is SupervisorState.NEW:
                return now + self.policy.check_interval_ms
            retry_at = self._backoff.waiting_until(now)
            if retry_at is not None:
                return retry_at
            try:
                self._advance(now)
            except Exception as exc:
                return self._back_off(exc)
            self._backoff.succeed()
            if self._states.state not in _FINAL:
                self._states.enter(SupervisorState.RUNNING, "")
            return self._next_due(self._clock())

    def _advance(self, now: int) -> None:
        tokens = self._tokens
        if tokens.current is None:
            self._states.enter(SupervisorState.OBTAINING, "no token")
            tokens.current = tokens.create()
        if self._query is None:
            self._launch()
        elif not self._query.isActive and not _stopped_for_restart(self._query, tokens):
            self._query_ended()
            return
        if rotation_due(tokens.current, self.policy, now, pending=tokens.pending is not None):
            self._rotate()
        elif now >= renewal_at_ms(tokens.current, self.policy):
            self._renew()
        tokens.expire_retired(
            lambda held: self._states.enter(
                SupervisorState.EXPIRING, f"replaced token {held.token_id}"
            )
        )

    def _next_due(self, now: int) -> int:
        held = self._tokens.current
        if held is None or self._query is None or not self._tokens.settled:
            return now
        return next_due_ms(held, self.policy, now)

    def _rotate(self) -> None:
        tokens, old, query = self._tokens, self._tokens.current, self._query
        assert old is not None and query is not None
        if tokens.pending is None:
            self._states.enter(SupervisorState.ROTATING, f"replacing token {old.token_id}")
            tokens.pending = tokens.create()
        self._states.enter(
            SupervisorState.RESTARTING,
            f"query {self._login.query_id}: token {old.token_id} -> {tokens.pending.token_id}",
        )
        # Waiting for the batch to end takes at most half the old token's
        # remaining life: the old run needs that token only until it stops
        # (the new run logs in with the new one), and the other half is the
        # margin for the stop itself. A fresh JVM's first batch can take
        # seconds, and one interrupted is re-run, with Spark's and Hadoop's
        # stack traces in the log.
        if query.isActive:  # a previous try may have stopped it, then raised
            wait_s = max(0.0, (old.expiry_ms - self._clock()) / 2000)
            stop_between_batches(query, wait_s, self._stop_event.is_set)
        if self._stop_event.is_set():
            return  # stop() takes over: no run with the new token just to stop it
        if query.isActive:
            raise SupervisorError("the query did not stop")
        self._query = None
        tokens.swap()
        self.rotations += 1
        # Expire the old token only once the query runs with the new one; if
        # this start fails, the next step retries it before expiring.
        self._launch()

    def _renew(self) -> None:
        held = self._tokens.current
        assert held is not None
        self._states.enter(SupervisorState.RENEWING, f"token {held.token_id}")
        if self._tokens.renew():
            self.renewals += 1
        else:
            self._rotate()

    def _launch(self) -> None:
        held = self._tokens.current
        assert held is not None
        self._states.enter(SupervisorState.STARTING, f"token {held.token_id}")
        self._query = self._login.launch(held.token)

    def _query_ended(self) -> None:
        query = self._query
        assert query is not None
        try:
            self.failure = query.exception()
        except Exception as exc:
            self.failure = exc
        self._query = None
        self._stop_event.set()
        self._tokens.expire_all()
        query_id = self._login.query_id
        if self.failure is not None:
            self._states.enter(SupervisorState.FAILED, f"query {query_id} failed")
        else:
            self._states.enter(SupervisorState.STOPPED, f"query {query_id} was stopped")

    def _back_off(self, exc: BaseException) -> int:
        self.last_error = exc
        held, now = self._tokens.current, self._clock()
        delay = self._backoff.fail(now, None if held is None or held.dead else held.expiry_ms)
        detail, level = _back_off_detail(held, now, self._backoff.near_expiry)
        self._states.enter(
            SupervisorState.BACKING_OFF,
            f"{self._states.state.value} failed ({_describe(exc)}); "
            f"attempt {self._backoff.failures}, retrying in {delay} ms{detail}",
            level=level,
        )
        return now + delay  # the back-off's retry_at


def _back_off_detail(held: _Held | None, now: int, near_expiry: bool) -> tuple[str, int]:
    """What a back-off adds to its log line, and the line's level: loud while
    there is still time to act, since a lapsed token fails the query at its
    next login (or KIP-368 re-authentication)."""
    if not near_expiry or held is None:
        return "", logging.WARNING
    return f"; token {held.token_id} expires in {held.expiry_ms - now} ms", logging.ERROR


def _stopped_for_restart(query: StreamingQueryLike, tokens: TokenRotation) -> bool:
    """Whether ``query`` ended because a rotation stopped it: a replacement is
    half-way and the query did not fail. ``StreamingQuery.stop`` may raise
    after the query stopped (py4j, ``spark.sql.streaming.stopTimeout``); the
    rotation then goes on, this is not the user's stop."""
    if tokens.pending is None:
        return False
    try:
        return query.exception() is None
    except Exception:
        return False
