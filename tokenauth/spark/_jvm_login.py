"""The query's own login: the token options its Kafka clients in the JVM use.

A query's ``kafka.sasl.jaas.config`` is fixed when the query starts (Spark's
``KafkaSourceProvider`` hands the options to the JVM Kafka client once), so a
new token reaches the JVM only through a restart of the query from its
checkpoint. This module builds those options, (re)starts and stops the query,
and closes the Kafka clients Spark keeps from stopped runs (``_jvm_clients``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping

from tokenauth.spark._jvm_clients import close_idle_clients
from tokenauth.spark._options import KafkaOptions
from tokenauth.spark._options import TokenLike
from tokenauth.spark._options import kafka_options
from tokenauth.spark._policy import StreamingQueryLike

__all__ = ["QueryLogin"]

_log = logging.getLogger("tokenauth.spark")

# How long a stop waits for the running micro-batch to end, and how often it
# looks: ``StreamingQuery.stop`` interrupts a running batch, which Spark logs
# at ERROR (``FileFormatWriter: Aborting job``) though the checkpoint re-runs it.
_BATCH_END_WAIT_S = 5.0
_BATCH_END_POLL_S = 0.02


class QueryLogin:
    """Start the query with a token's options, and watch that restarts resume."""

    def __init__(
        self,
        start_query: Callable[[KafkaOptions], StreamingQueryLike],
        bootstrap_servers: str,
        mechanism: str,
        security_protocol: str,
        extra_options: Mapping[str, str] | None,
    ) -> None:
        self.start_query = start_query
        self.bootstrap_servers = bootstrap_servers
        self.mechanism = mechanism
        self.protocol = security_protocol
        self.extra = dict(extra_options or {})
        self.query_id: str | None = None
        self.query: StreamingQueryLike | None = None  # the last one started

    def launch(self, token: TokenLike) -> StreamingQueryLike:
        """Start the query logged in with ``token``."""
        options = kafka_options(
            token, self.bootstrap_servers, self.mechanism, self.protocol, extra=self.extra
        )
        query = self.start_query(options)
        self.query = query
        if self.query_id is None:
            self.query_id = str(query.id)
        elif str(query.id) != self.query_id:
            # The id is kept in the checkpoint's metadata: a new id means the
            # factory did not restart from the same checkpoint.
            _log.warning(
                "query id changed from %s to %s: start_query is not reusing its checkpoint",
                self.query_id,
                query.id,
            )
            self.query_id = str(query.id)
        _log.info("query %s running (run %s) with token %s", query.id, query.runId, token.token_id)
        return query

    def release_clients(self, token_ids: Iterable[str]) -> None:
        """Close the idle Kafka clients Spark keeps that log in with ``token_ids``
        (stopped runs' clients), before those tokens are expired."""
        if self.query is not None:
            close_idle_clients(self.query, token_ids)


def stop_between_batches(
    query: StreamingQueryLike,
    wait_s: float = _BATCH_END_WAIT_S,
    stopping: Callable[[], bool] = lambda: False,
) -> None:
    """Stop ``query`` right after a micro-batch ends, waiting at most ``wait_s`` seconds.

    The next trigger starts at the trigger interval's next boundary, so a
    stop just after a batch ends meets none; a query found idle may be about
    to start one, so the wait is for a batch to end, not for an idle moment.
    A query that does not report its status (a test's fake) stops at once,
    and so does any query once ``stopping()`` is true: a rotation's wait can
    last a trigger interval, which ``TokenSupervisor.stop`` must not.
    """
    deadline = time.monotonic() + wait_s
    seen_batch = False
    while time.monotonic() < deadline:
        active = _in_batch(query)
        if active is None or (seen_batch and not active) or stopping():
            break
        seen_batch = seen_batch or active
        time.sleep(_BATCH_END_POLL_S)
    query.stop()


def _in_batch(query: object) -> bool | None:
    """Whether a micro-batch runs now (pyspark's ``status["isTriggerActive"]``),
    or ``None`` when the query does not say."""
    try:
        status = getattr(query, "status", None)
        return bool(status.get("isTriggerActive")) if isinstance(status, dict) else None
    except Exception:  # the query ended meanwhile, or its JVM is gone
        return None
