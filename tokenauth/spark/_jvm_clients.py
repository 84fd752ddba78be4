"""The Kafka clients Spark keeps after a query run stops, closed before their token is expired.

Spark's Kafka connector pools its clients in the JVM: the source's consumers
in ``KafkaDataConsumer``'s pool (one per consumer group and partition; each
run has its own group), kept idle until ``spark.kafka.consumer.cache.timeout``
(5 minutes) or the JVM's shutdown hook; the sink's producers in
``InternalKafkaProducerPool``, keyed by their parameters (the JAAS line
included), kept until ``spark.kafka.producer.cache.timeout`` (10 minutes).
A stopped run's clients therefore outlive its token. Closing a consumer ends
its fetch sessions with one last request to each broker (KIP-227); the broker
ended the connection's session at the token's expiry (KIP-368), so the client
logs in again first, and with an expired token that login is refused: Kafka's
``NetworkClient`` and Spark's pool log ``SaslAuthenticationException`` at
ERROR with stack traces, after the application has ended.

So before the supervisor expires a token, the clients of the driver's JVM
that log in with it and sit idle in those pools are closed here, while the
token still logs in. A stop cancels the run's tasks, but a task inside a
Kafka poll runs on (Spark reads uninterruptibly) and returns its consumer
when it ends; closed before then, that consumer would sit idle until the
JVM's shutdown and close with the expired token. So this first waits,
bounded, until no client of those tokens is borrowed any more (Commons
Pool's ``numActive(key)``, the producer's reference count), then closes the
idle ones. A pooled consumer of a stopped run is never borrowed again (its
group is gone with the run), and a producer still in use after the wait is
left to its pool. Executors in other
JVMs (a cluster, not ``local[*]``) are out of the driver's reach; their idle
clients close at the pools' timeouts (see docs/spark.md).

The pools are private to Spark's connector, so they are reached by Java
reflection over py4j, like the builders' options (``_options``). Everything
here is best effort: a query without a JVM (Spark Connect, a test's fake),
a Spark without the connector or with other internals closes nothing, and
the supervisor goes on as before.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from collections.abc import Iterable
from typing import Any
from typing import TypeVar

from tokenauth.spark._policy import _describe

__all__ = ["close_idle_clients"]

_log = logging.getLogger("tokenauth.spark")
_T = TypeVar("_T")

_CONSUMERS = "org.apache.spark.sql.kafka010.consumer.KafkaDataConsumer$"
_CONSUMER_POOL = "org.apache.spark.sql.kafka010.consumer.InternalKafkaConsumerPool"
_PRODUCERS = "org.apache.spark.sql.kafka010.producer.InternalKafkaProducerPool$"
_PRODUCER_POOL = "org.apache.spark.sql.kafka010.producer.InternalKafkaProducerPool"
_PRODUCER_ENTRY = (
    "org.apache.spark.sql.kafka010.producer.InternalKafkaProducerPool$CachedProducerEntry"
)
_JAAS_KEY = "sasl.jaas.config"
# Below any System.nanoTime(): the entry counts as idle for longer than its timeout.
_LONG_AGO_NS = -(2**63)
# How long to wait for the stopped run's tasks to give their clients back, and
# how often to look. A cancelled task's poll returns within a fetch's wait
# (``fetch.max.wait.ms``, 500 ms by default) once its records are there.
_BORROWED_WAIT_S = 10.0
_BORROWED_POLL_S = 0.05


def close_idle_clients(
    query: object, token_ids: Iterable[str], wait_s: float = _BORROWED_WAIT_S
) -> int:
    """Close the pooled Kafka clients of ``query``'s JVM that log in with one
    of ``token_ids``, once they are idle or ``wait_s`` seconds have passed;
    return how many were closed (0 when the JVM or the pools cannot be reached)."""
    marks = tuple(f'username="{token_id}"' for token_id in token_ids)
    jquery = getattr(query, "_jsq", None)
    if jquery is None or not marks:
        return 0
    pools = [_reach(pool, jquery, marks) for pool in (_ConsumerPool, _ProducerPool)]
    _wait_until_returned([pool for pool in pools if pool is not None], wait_s)
    closed = sum(_best_effort(pool.close_idle, 0) for pool in pools if pool is not None)
    if closed:
        _log.info("closed %d idle Kafka clients in Spark's pools before expiring the token", closed)
    return closed


def _reach(
    pool: Callable[[Any, tuple[str, ...]], _Pool], jquery: Any, marks: tuple[str, ...]
) -> _Pool | None:
    reached: _Pool | None = None
    return _best_effort(lambda: pool(_class_loader(jquery), marks), reached)


def _best_effort(call: Callable[[], _T], fallback: _T) -> _T:
    try:
        return call()
    except Exception as exc:  # Spark's internals differ, or the JVM is gone
        _log.debug("could not reach Spark's Kafka client pools: %s", _describe(exc))
        return fallback


def _wait_until_returned(pools: list[_Pool], wait_s: float) -> None:
    deadline = time.monotonic() + wait_s
    while True:
        borrowed = sum(_best_effort(pool.borrowed, 0) for pool in pools)
        if not borrowed:
            return
        if time.monotonic() >= deadline:
            break
        time.sleep(_BORROWED_POLL_S)
    one = borrowed == 1
    _log.warning(
        "%d Kafka %s of Spark's pools still in use %s s after the query stopped; "
        "%s later, and %s close may log a failed re-authentication",
        borrowed,
        "client" if one else "clients",
        f"{wait_s:g}",
        "it closes" if one else "they close",
        "its" if one else "their",
    )


def _class_loader(jobject: Any) -> Any:
    """The JVM thread's context class loader, which sees the connector's jars
    (``spark.jars.packages``); reached from any object, without a py4j import."""
    thread = jobject.getClass().getClassLoader().loadClass("java.lang.Thread")
    current = thread.getMethod("currentThread", None).invoke(None, None)
    return current.getContextClassLoader()


def _private(loader: Any, class_name: str, target: Any, name: str) -> Any:
    field = loader.loadClass(class_name).getDeclaredField(name)
    field.setAccessible(True)
    return field.get(target)


def _module(loader: Any, class_name: str) -> Any:
    """A Scala ``object``'s instance."""
    return loader.loadClass(class_name).getField("MODULE$").get(None)


def _logs_in_with(jaas: object, marks: tuple[str, ...]) -> bool:
    # Compared here and dropped: the JAAS line holds the token's HMAC.
    return jaas is not None and any(mark in str(jaas) for mark in marks)


class _Pool:
    """One of the connector's pools, narrowed to the clients of some tokens.
    Built at each release: a stopped run's keys do not change after it."""

    def borrowed(self) -> int:
        raise NotImplementedError

    def close_idle(self) -> int:
        raise NotImplementedError


class _ConsumerPool(_Pool):
    def __init__(self, loader: Any, marks: tuple[str, ...]) -> None:
        self._pool = _private(loader, _CONSUMERS, _module(loader, _CONSUMERS), "consumerPool")
        params_by_key = _private(
            loader, _CONSUMER_POOL, self._pool, "objectFactory"
        ).keyToKafkaParams()
        self._keys = []
        for key in params_by_key.keySet().toArray():
            params = params_by_key.get(key)
            if params is not None and _logs_in_with(params.get(_JAAS_KEY), marks):
                self._keys.append(key)

    def borrowed(self) -> int:
        return sum(self._pool.numActive(key) for key in self._keys)

    def close_idle(self) -> int:
        closed = 0
        for key in self._keys:
            idle = self._pool.numIdle(key)
            # Commons Pool's clear(key): destroys (closes) the key's idle consumers.
            self._pool.invalidateKey(key)
            closed += idle
        return closed


class _ProducerPool(_Pool):
    def __init__(self, loader: Any, marks: tuple[str, ...]) -> None:
        self._loader = loader
        self._pool = _private(loader, _PRODUCERS, _module(loader, _PRODUCERS), "pool")
        self._marks = marks

    def _entries(self) -> list[Any]:
        pairs = self._pool.getAsMap().iterator()
        entries = []
        while pairs.hasNext():
            pair = pairs.next()
            # The key is the producer's parameters, as (name, value) pairs.
            if _logs_in_with(pair._1().toString(), self._marks):
                entries.append(pair._2())
        return entries

    def borrowed(self) -> int:
        return sum(1 for entry in self._entries() if entry.refCount() > 0)

    def close_idle(self) -> int:
        due = 0
        for entry in self._entries():
            if entry.refCount() == 0:
                expire_at = self._loader.loadClass(_PRODUCER_ENTRY).getDeclaredField("_expireAt")
                expire_at.setAccessible(True)
                expire_at.setLong(entry, _LONG_AGO_NS)
                due += 1
        if due:
            # The pool's own eviction: under its lock, it removes and closes the
            # unused entries past their expiry (a producer borrowed meanwhile is not).
            evict = self._loader.loadClass(_PRODUCER_POOL).getDeclaredMethod("evictExpired", None)
            evict.setAccessible(True)
            evict.invoke(self._pool, None)
        return due
