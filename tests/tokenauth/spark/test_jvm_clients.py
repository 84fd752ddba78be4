"""Closing the clients of a token in Spark's real consumer pool, over py4j.

test_quiet_rotation.py shows the release's logic on a stand-in; here the
reflection reaches the connector's own ``InternalKafkaConsumerPool`` in a
real driver JVM, with a client borrowed as a task borrows it and given back
later: a source's consumer (``KafkaDataConsumer.acquire``, then its
consumer) and a sink's producer (``InternalKafkaProducerPool.acquire``).
"""

from __future__ import annotations

import threading
from typing import Any

from tests.support.kafka_broker import KafkaBroker
from tests.support.kafka_broker import unique_name
from tokenauth.spark._jvm_clients import close_idle_clients

_DATA_CONSUMER = "org.apache.spark.sql.kafka010.consumer.KafkaDataConsumer$"
_PRODUCERS = "org.apache.spark.sql.kafka010.producer.InternalKafkaProducerPool$"
_SERDE = "org.apache.kafka.common.serialization.ByteArray"


class _Query:
    """What close_idle_clients reads of a pyspark StreamingQuery: its JVM object."""

    def __init__(self, jobject: Any) -> None:
        self._jsq = jobject


def _params(spark: Any, broker: KafkaBroker, token_id: str) -> Any:
    """A Kafka client's parameters, as the connector passes them: a Java map."""
    params = spark._jvm.java.util.HashMap()
    for key, value in {
        "bootstrap.servers": broker.bootstrap,
        "group.id": unique_name("spark-kafka-source"),
        "key.deserializer": f"{_SERDE}Deserializer",
        "value.deserializer": f"{_SERDE}Deserializer",
        "key.serializer": f"{_SERDE}Serializer",
        "value.serializer": f"{_SERDE}Serializer",
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
        f'required username="{token_id}" password="not-used" tokenauth=true;',
    }.items():
        params.put(key, value)
    return params


def _module(spark: Any, name: str) -> Any:
    loader = spark._jvm.java.lang.Thread.currentThread().getContextClassLoader()
    return loader.loadClass(name).getField("MODULE$").get(None)


def _given_back_during_the_release(spark: Any, token_id: str, give_back: Any) -> int:
    task_end = threading.Timer(0.5, give_back)  # the cancelled task ends
    task_end.start()
    try:
        return close_idle_clients(_Query(spark._jsparkSession), [token_id], wait_s=30)
    finally:
        task_end.cancel()
        task_end.join()


def test_a_consumer_given_back_after_the_release_starts_is_closed_in_the_real_pool(
    spark: Any, kraft_broker: KafkaBroker
) -> None:
    token_id = unique_name("borrowed-token")
    partition = spark._jvm.org.apache.kafka.common.TopicPartition(unique_name("borrowed"), 0)
    held = _module(spark, _DATA_CONSUMER).acquire(partition, _params(spark, kraft_broker, token_id))
    held.getOrRetrieveConsumer()  # borrowed from the pool, as a task's first read does
    assert _given_back_during_the_release(spark, token_id, held.release) == 1
    # Nothing of that token is left in the pool, idle or borrowed.
    assert close_idle_clients(_Query(spark._jsparkSession), [token_id], wait_s=0) == 0


def test_a_producer_given_back_after_the_release_starts_is_closed_in_the_real_pool(
    spark: Any, kraft_broker: KafkaBroker
) -> None:
    token_id = unique_name("borrowed-token")
    producers = _module(spark, _PRODUCERS)
    held = producers.acquire(_params(spark, kraft_broker, token_id))  # a sink task's writer
    assert _given_back_during_the_release(spark, token_id, lambda: producers.release(held)) == 1
    assert close_idle_clients(_Query(spark._jsparkSession), [token_id], wait_s=0) == 0
