"""A stand-in for the part of Spark's JVM that ``_jvm_clients`` reaches by reflection.

Only the consumer pool is modelled (``KafkaDataConsumer``'s
``InternalKafkaConsumerPool``, a Commons Pool ``GenericKeyedObjectPool`` keyed
by consumer group and partition); reaching the producer pool fails, as it does
on a Spark without the sink's pool, and closes nothing.
"""

from __future__ import annotations

import threading
from typing import Any

CONSUMERS = "org.apache.spark.sql.kafka010.consumer.KafkaDataConsumer$"
CONSUMER_POOL = "org.apache.spark.sql.kafka010.consumer.InternalKafkaConsumerPool"


class FakeConsumerPool:
    """Pooled consumers per key: idle ones, borrowed ones, and those closed."""

    def __init__(self, jaas_by_key: dict[str, str]) -> None:
        self.params = {key: {"sasl.jaas.config": jaas} for key, jaas in jaas_by_key.items()}
        self.idle = dict.fromkeys(jaas_by_key, 0)
        self.borrowed = dict.fromkeys(jaas_by_key, 0)
        self.closed = dict.fromkeys(jaas_by_key, 0)
        self._lock = threading.Lock()

    # InternalKafkaConsumerPool's public methods, as reached over py4j (Java names).
    def numIdle(self, key: str) -> int:
        return self.idle[key]

    def numActive(self, key: str) -> int:
        return self.borrowed[key]

    def invalidateKey(self, key: str) -> None:
        # Commons Pool's clear(key): destroys the idle objects only.
        with self._lock:
            self.closed[key] += self.idle[key]
            self.idle[key] = 0

    def give_back(self, key: str) -> None:
        """A task ends and returns its consumer (``KafkaDataConsumer.release``)."""
        with self._lock:
            self.borrowed[key] -= 1
            self.idle[key] += 1

    def keyToKafkaParams(self) -> JavaMap:
        return JavaMap(self.params)


class JavaMap:
    def __init__(self, entries: dict[str, Any]) -> None:
        self._entries = entries

    def keySet(self) -> JavaMap:
        return self

    def toArray(self) -> list[str]:
        return list(self._entries)

    def get(self, key: str) -> Any:
        return self._entries.get(key)


class _Field:
    def __init__(self, value: object) -> None:
        self._value = value

    def setAccessible(self, flag: bool) -> None:
        pass

    def get(self, target: object) -> object:
        return self._value


class _Class:
    def __init__(self, jvm: FakeJvm, name: str) -> None:
        self._jvm = jvm
        self._name = name

    def getField(self, name: str) -> _Field:
        return _Field(self._jvm.modules[self._name])

    def getDeclaredField(self, name: str) -> _Field:
        return _Field(self._jvm.fields[self._name, name])

    def getMethod(self, name: str, types: object) -> _Class:
        return self  # Thread.currentThread

    def invoke(self, target: object, args: object) -> _Class:
        return self

    def getContextClassLoader(self) -> FakeJvm:
        return self._jvm

    def getClassLoader(self) -> FakeJvm:
        return self._jvm


class FakeJvm:
    """A class loader that knows the consumer pool, and a query (``_jsq``) in it."""

    def __init__(self, pool: FakeConsumerPool) -> None:
        consumers = object()
        self.modules: dict[str, object] = {CONSUMERS: consumers}
        self.fields: dict[tuple[str, str], object] = {
            (CONSUMERS, "consumerPool"): pool,
            (CONSUMER_POOL, "objectFactory"): pool,
        }

    def loadClass(self, name: str) -> _Class:
        if name.endswith("InternalKafkaProducerPool$"):
            raise LookupError(f"ClassNotFoundException: {name}")
        return _Class(self, name)

    def getClass(self) -> _Class:
        return _Class(self, "StreamingQuery")


class FakeQuery:
    """A pyspark ``StreamingQuery`` whose JVM object is ``jvm``."""

    def __init__(self, jvm: FakeJvm) -> None:
        self._jsq = jvm
