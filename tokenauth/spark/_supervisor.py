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
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Mapping
from types import TracebackType

from sasl_scram.config import ClientConfig, ClientConfigError
from tokenauth._client import DelegationTokenClient, TokenRequestError
from tokenauth._manager import wall_clock_ms
from tokenauth.spark._options import KafkaOptions, kafka_options
from tokenauth.spark._policy import (
    _FINAL,
    _HISTORY,
    _MAX_EXPIRE_ATTEMPTS,
    _TOKEN_GONE,
    StreamingQueryLike,
    SupervisorError,
    SupervisorPolicy,
    SupervisorState,
    TokenClient,
    Transition,
    _describe,
    _Held,
)

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
        mechanism: str = "SCRAM-SHA-512",
        security_protocol: str | None = None,
        extra_options: Mapping[str, str] | None = None,
        policy: SupervisorPolicy | None = None,
        clock_ms: Callable[[], int] = wall_clock_ms,
        wait: Callable[[float], object] | None = None,
        timeout: float = 30.0,
    ) -> None:
        if isinstance(login, ClientConfig):
            config = login
            if not config.uses_sasl:
                raise ClientConfigError("security.protocol: the token login needs SASL")
            if config.token_auth:
                # Kafka refuses token requests over token logins
                # (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED): require the user's own.
                raise ClientConfigError(
                    "sasl.jaas.config: a token login cannot create tokens; "
                    "use the user's SCRAM login"
                )
            config.require_credentials()
            self._connect: Callable[[], TokenClient] = lambda: DelegationTokenClient.connect(
                config, timeout=timeout
            )
            bootstrap_servers = bootstrap_servers or config.bootstrap_servers
            if security_protocol is None:
                security_protocol = config.security_protocol
        else:
            self._connect = login
        if not bootstrap_servers:
            raise ClientConfigError("bootstrap.servers: required for the query's options")
        self._bootstrap = bootstrap_servers
        self._mechanism = mechanism
        self._protocol = security_protocol or "SASL_SSL"
        self._extra = dict(extra_options or {})
        self._start_query = start_query
        self.policy = policy or SupervisorPolicy()
        self._clock = clock_ms
        self._stop_event = threading.Event()
        self._wait = wait or self._stop_event.wait
        self._lock = threading.RLock()
        self._thread: threading.Thread | None = None
        self._state = SupervisorState.NEW
        self._history: deque[Transition] = deque(maxlen=_HISTORY)
        self._current: _Held | None = None
        self._pending: _Held | None = None  # replacement, created, not yet in use
        self._retired: list[_Held] = []  # replaced, still to expire
        self._query: StreamingQueryLike | None = None
        self._query_id: str | None = None
        self._failures = 0
        self._retry_at: int | None = None
        self._retry_state = SupervisorState.RUNNING
        self.last_error: BaseException | None = None
        self.failure: object | None = None
        self.renewals = 0
        self.rotations = 0

    def __repr__(self) -> str:
        return (
            f"TokenSupervisor(state={self._state.value}, token_id={self.token_id!r}, "
            f"bootstrap_servers={self._bootstrap!r}, rotations={self.rotations})"
        )

    # --- what callers may look at -------------------------------------------

    @property
    def state(self) -> SupervisorState:
        return self._state

    @property
    def query(self) -> StreamingQueryLike | None:
        """The query currently running under the supervisor."""
        return self._query

    @property
    def token_id(self) -> str | None:
        """The id of the token the query uses now (ids are not secrets)."""
        return self._current.token_id if self._current else None

    @property
    def history(self) -> tuple[Transition, ...]:
        """The most recent state changes, oldest first."""
        return tuple(self._history)

    def next_renewal_ms(self) -> int | None:
        """Local time of the next renewal, or ``None`` without a token."""
        held = self._current
        if held is None:
            return None
        ratio = self.policy.renew_ratio
        return held.last_renewed_ms + int(ratio * (held.expiry_ms - held.last_renewed_ms))

    def next_rotation_ms(self) -> int | None:
        """Local time at which the token is replaced, or ``None`` without a token."""
        held = self._current
        if held is None:
            return None
        return held.issued_ms + int(self.policy.rotate_ratio * (held.max_ms - held.issued_ms))

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
            if self._state is not SupervisorState.NEW:
                raise SupervisorError(f"cannot start a supervisor in state {self._state.value}")
            try:
                self._set_state(SupervisorState.OBTAINING, "obtaining the first token")
                self._current = self._create_token()
                self._set_state(SupervisorState.STARTING, f"token {self.token_id}")
                self._launch()
            except Exception as exc:
                self.last_error = exc
                self._expire_all()
                self._set_state(SupervisorState.FAILED, f"start failed: {_describe(exc)}")
                raise SupervisorError(f"could not start: {_describe(exc)}") from exc
            self._set_state(SupervisorState.RUNNING, f"query {self._query_id}")
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
                    self._set_state(SupervisorState.FAILED, f"crashed: {_describe(exc)}")
                return
            if self._state in _FINAL:
                return
            now = self._clock()
            delay_ms = min(
                max(due - now, self.policy.min_interval_ms), self.policy.check_interval_ms
            )
            self._wait(delay_ms / 1000.0)

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
            if self._state is SupervisorState.STOPPED:
                return
            final = (
                SupervisorState.FAILED
                if self._state is SupervisorState.FAILED
                else SupervisorState.STOPPED
            )
            self._set_state(SupervisorState.STOPPING, "stop requested")
            query, self._query = self._query, None
            if query is not None:
                try:
                    if query.isActive:
                        query.stop()
                except Exception as exc:
                    _log.warning("stopping the query failed: %s", _describe(exc))
            if expire_tokens:
                self._expire_all()
            self._set_state(final, "stopped")

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
        if self._state is SupervisorState.FAILED:
            cause = self.failure if isinstance(self.failure, BaseException) else self.last_error
            raise SupervisorError("the supervised query or the supervisor failed") from cause
        return True

    def __enter__(self) -> TokenSupervisor:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
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
            if self._state in _FINAL or self._state is SupervisorState.NEW:
                return now + self.policy.check_interval_ms
            if self._retry_at is not None:
                if now < self._retry_at:
                    return self._retry_at
                self._retry_at = None
            try:
                self._advance(now)
            except Exception as exc:
                return self._back_off(exc)
            self._failures = 0
            if self._state not in _FINAL:
                self._set_state(SupervisorState.RUNNING, "")
            return self._next_due(self._clock())

    def _advance(self, now: int) -> None:
        if self._current is None:
            self._set_state(SupervisorState.OBTAINING, "no token")
            self._current = self._create_token()
        if self._query is None:
            self._set_state(SupervisorState.STARTING, f"token {self.token_id}")
            self._launch()
        elif not self._query.isActive:
            self._query_ended()
            return
        if self._rotation_due(now):
            self._rotate()
        elif now >= (self.next_renewal_ms() or now):
            self._renew()
        while self._retired:
            held = self._retired[0]
            self._set_state(SupervisorState.EXPIRING, f"replaced token {held.token_id}")
            self._expire(held)
            self._retired.pop(0)

    def _next_due(self, now: int) -> int:
        if self._current is None or self._query is None or self._retired or self._pending:
            return now
        renew = self.next_renewal_ms() or now
        rotate = self.next_rotation_ms() or now
        return min(renew, rotate, now + self.policy.check_interval_ms)

    def _rotation_due(self, now: int) -> bool:
        held = self._current
        assert held is not None
        if held.dead or self._pending is not None:
            return True
        if now >= (self.next_rotation_ms() or now):
            return True
        # A renewal is due but cannot move the expiry: replace instead.
        return now >= (self.next_renewal_ms() or now) and held.expiry_ms >= held.max_ms

    def _rotate(self) -> None:
        old = self._current
        assert old is not None and self._query is not None
        if self._pending is None:
            self._set_state(SupervisorState.ROTATING, f"replacing token {old.token_id}")
            self._pending = self._create_token()
        self._set_state(
            SupervisorState.RESTARTING,
            f"query {self._query_id}: token {old.token_id} -> {self._pending.token_id}",
        )
        query = self._query
        query.stop()
        if query.isActive:
            raise SupervisorError("the query did not stop")
        self._query = None
        self._retired.append(old)
        self._current, self._pending = self._pending, None
        self.rotations += 1
        # Expire the old token only once the query runs with the new one; if
        # this start fails, the next step retries it before expiring.
        self._set_state(SupervisorState.STARTING, f"token {self.token_id}")
        self._launch()

    def _renew(self) -> None:
        held = self._current
        assert held is not None
        self._set_state(SupervisorState.RENEWING, f"token {held.token_id}")
        try:
            with self._connect() as client:
                expiry = client.renew_token(held.token.hmac, self.policy.renew_period_ms)
        except TokenRequestError as exc:
            if exc.error_code in _TOKEN_GONE:
                held.dead = True
                _log.warning("token %s is gone (%s); replacing it", held.token_id, exc.error_code)
                self._rotate()
                return
            raise
        held.last_renewed_ms = self._clock()
        held.expiry_ms = expiry - held.skew_ms
        self.renewals += 1
        _log.info(
            "renewed token %s; expires in %d ms", held.token_id, held.expiry_ms - self._clock()
        )

    def _create_token(self) -> _Held:
        with self._connect() as client:
            token = client.create_token(self.policy.renewers, self.policy.max_lifetime_ms)
        held = _Held.of(token, self._clock())
        _log.info(
            "created token %s; expires in %d ms, max lifetime %d ms",
            held.token_id,
            held.expiry_ms - held.issued_ms,
            held.max_ms - held.issued_ms,
        )
        return held

    def _launch(self) -> None:
        assert self._current is not None
        options = kafka_options(
            self._current.token,
            self._bootstrap,
            self._mechanism,
            self._protocol,
            extra=self._extra,
        )
        query = self._start_query(options)
        self._query = query
        if self._query_id is None:
            self._query_id = str(query.id)
        elif str(query.id) != self._query_id:
            # The id is kept in the checkpoint's metadata: a new id means the
            # factory did not restart from the same checkpoint.
            _log.warning(
                "query id changed from %s to %s: start_query is not reusing its checkpoint",
                self._query_id,
                query.id,
            )
            self._query_id = str(query.id)
        _log.info("query %s running (run %s) with token %s", query.id, query.runId, self.token_id)

    def _expire(self, held: _Held, *, last_try: bool = False) -> None:
        """Expire ``held`` now; a token already gone counts as done.

        Raises the failure for a retry, except on the last allowed attempt,
        where it is logged: an unexpired token still lapses at its expiry.
        """
        held.expire_attempts += 1
        try:
            with self._connect() as client:
                client.expire_token(held.token.hmac)
        except Exception as exc:
            if isinstance(exc, TokenRequestError) and exc.error_code in _TOKEN_GONE:
                _log.info("token %s was already gone", held.token_id)
                return
            if not last_try and held.expire_attempts < _MAX_EXPIRE_ATTEMPTS:
                raise
            _log.warning(
                "could not expire token %s (%s, attempt %d); it lapses at its expiry",
                held.token_id,
                _describe(exc),
                held.expire_attempts,
            )
            return
        _log.info("expired token %s", held.token_id)

    def _expire_all(self) -> None:
        """Best effort, for stop and failure: expire every token we hold, once."""
        held_all = [h for h in (self._current, self._pending, *self._retired) if h is not None]
        self._current = self._pending = None
        self._retired = []
        for held in held_all:
            self._expire(held, last_try=True)

    def _query_ended(self) -> None:
        query = self._query
        assert query is not None
        try:
            self.failure = query.exception()
        except Exception as exc:
            self.failure = exc
        self._query = None
        self._stop_event.set()
        self._expire_all()
        if self.failure is not None:
            self._set_state(SupervisorState.FAILED, f"query {self._query_id} failed")
        else:
            self._set_state(SupervisorState.STOPPED, f"query {self._query_id} was stopped")

    def _back_off(self, exc: BaseException) -> int:
        self.last_error = exc
        self._failures += 1
        p = self.policy
        delay = min(p.max_backoff_ms, p.initial_backoff_ms * 2 ** min(self._failures - 1, 30))
        self._retry_state = self._state
        self._retry_at = self._clock() + delay
        self._set_state(
            SupervisorState.BACKING_OFF,
            f"{self._retry_state.value} failed ({_describe(exc)}); "
            f"attempt {self._failures}, retrying in {delay} ms",
            level=logging.WARNING,
        )
        return self._retry_at

    def _set_state(self, state: SupervisorState, detail: str, level: int = logging.INFO) -> None:
        old = self._state
        if old is state:
            return
        self._state = state
        self._history.append(Transition(self._clock(), old, state, detail))
        _log.log(
            level,
            "spark token supervisor: %s -> %s%s",
            old.value,
            state.value,
            f" ({detail})" if detail else "",
        )
