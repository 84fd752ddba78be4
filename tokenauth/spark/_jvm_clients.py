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
token still logs in. Only idle clients are touched: a pooled consumer of a
stopped run is never borrowed again (its group is gone with the run), and a
producer in use keeps its reference count above zero. Executors in other
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
from collections.abc import Iterable
from typing import Any

from tokenauth.spark._policy import _describe

__all__ = ["close_idle_clients"]

_log = logging.getLogger("tokenauth.spark")

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


def close_idle_clients(query: object, token_ids: Iterable[str]) -> int:
    """Close the idle pooled Kafka clients of ``query``'s JVM that log in
    with one of ``token_ids``; return how many were closed (0 when the JVM or
    the pools cannot be reached)."""
    marks = tuple(f'username="{token_id}"' for token_id in token_ids)
    jquery = getattr(query, "_jsq", None)
    if jquery is None or not marks:
        return 0
    closed = 0
    for close in (_close_consumers, _close_producers):
        try:
            closed += close(_class_loader(jquery), marks)
        except Exception as exc:  # Spark's internals differ, or the JVM is gone
            _log.debug("could not reach Spark's Kafka client pools: %s", _describe(exc))
    if closed:
        _log.info("closed %d idle Kafka clients in Spark's pools before expiring the token", closed)
    return closed


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


def _close_consumers(loader: Any, marks: tuple[str, ...]) -> int:
    pool = _private(loader, _CONSUMERS, _module(loader, _CONSUMERS), "consumerPool")
    params_by_key = _private(loader, _CONSUMER_POOL, pool, "objectFactory").keyToKafkaParams()
    closed = 0
    for key in params_by_key.keySet().toArray():
        params = params_by_key.get(key)
        if params is not None and _logs_in_with(params.get(_JAAS_KEY), marks):
            idle = pool.numIdle(key)
            # Commons Pool's clear(key): destroys (closes) the key's idle consumers.
            pool.invalidateKey(key)
            closed += idle
    return closed


def _close_producers(loader: Any, marks: tuple[str, ...]) -> int:
    pool = _private(loader, _PRODUCERS, _module(loader, _PRODUCERS), "pool")
    pairs = pool.getAsMap().iterator()
    due = 0
    while pairs.hasNext():
        pair = pairs.next()
        # The key is the producer's parameters, as (name, value) pairs.
        key, entry = pair._1(), pair._2()
        if entry.refCount() == 0 and _logs_in_with(key.toString(), marks):
            expire_at = loader.loadClass(_PRODUCER_ENTRY).getDeclaredField("_expireAt")
            expire_at.setAccessible(True)
            expire_at.setLong(entry, _LONG_AGO_NS)
            due += 1
    if due:
        # The pool's own eviction: under its lock, it removes and closes the
        # unused entries past their expiry (a producer borrowed meanwhile is not).
        evict = loader.loadClass(_PRODUCER_POOL).getDeclaredMethod("evictExpired", None)
        evict.setAccessible(True)
        evict.invoke(pool, None)
    return due
