"""The query's own login: the token options its Kafka clients in the JVM use.

A query's ``kafka.sasl.jaas.config`` is fixed when the query starts (Spark's
``KafkaSourceProvider`` hands the options to the JVM Kafka client once), so a
new token reaches the JVM only through a restart of the query from its
checkpoint. This module builds those options and (re)starts the query.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from collections.abc import Mapping

from tokenauth.spark._options import KafkaOptions
from tokenauth.spark._options import TokenLike
from tokenauth.spark._options import kafka_options
from tokenauth.spark._policy import StreamingQueryLike

__all__ = ["QueryLogin"]

_log = logging.getLogger("tokenauth.spark")


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

    def launch(self, token: TokenLike) -> StreamingQueryLike:
        """Start the query logged in with ``token``."""
        options = kafka_options(
            token, self.bootstrap_servers, self.mechanism, self.protocol, extra=self.extra
        )
        query = self.start_query(options)
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
