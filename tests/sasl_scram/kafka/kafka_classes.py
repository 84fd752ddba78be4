"""Python side of tests/java/CodecHarness.java: Kafka's generated message classes as a peer.

Each Kafka version runs in its own JVM with its own ``kafka-clients`` jar (and the
Jackson jars its ``*JsonConverter`` classes need), from the broker jars that
``make brokers`` caches: Kafka 4.x dropped old versions of several APIs
(KIP-896) that 3.9 still reads and writes.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from typing import Any

from sasl_scram.kafka._schema import Array
from sasl_scram.kafka._schema import Field
from sasl_scram.kafka._schema import Struct
from tests.support.javaharness import JavaHarness
from tests.support.javaharness import b64
from tests.support.javaharness import unb64
from tools.fetch_kafka_broker import KAFKA_VERSIONS
from tools.fetch_kafka_broker import is_fetched
from tools.fetch_kafka_broker import libs_dir

#: Kafka's JSON converters need Jackson, and the records fields' MemoryRecords
#: a logger (slf4j, through slf4j-simple to stderr, as the brokers log).
_JAR_PREFIXES = (
    "kafka-clients-",
    "jackson-core-",
    "jackson-databind-",
    "jackson-annotations-",
    "slf4j-api-",
    "slf4j-simple-",
)


@dataclass(frozen=True)
class Written:
    """Kafka's answer to one payload: what it writes back after reading it, and what it
    writes for the same message given as JSON."""

    reread: bytes
    from_json: bytes


class KafkaMessageClasses:
    """One Kafka version's generated message classes, one JVM for many messages."""

    def __init__(self, version: str, compile_version: str | None = None) -> None:
        self.version = version
        # The harness uses only classes and methods both 3.9 and 4.x have: one
        # compilation (against ``compile_version``) serves them all.
        compile_classpath = _classpath(compile_version) if compile_version else None
        self._harness = JavaHarness(
            "CodecHarness", _classpath(version), compile_classpath=compile_classpath
        )
        self._ranges: dict[int, tuple[int, int]] = {}

    def __repr__(self) -> str:
        return f"KafkaMessageClasses({self.version})"

    def supported(self, api_key: int) -> tuple[int, int]:
        """The lowest and highest version Kafka's classes read and write."""
        if api_key not in self._ranges:
            status, low, high = self._harness.call("range", str(api_key))
            assert status == "ok", (status, low)
            self._ranges[api_key] = (int(low), int(high))
        return self._ranges[api_key]

    def stable(self, api_key: int) -> tuple[int, int] | None:
        """The lowest and highest stable version (``highestSupportedVersion(false)``),
        or None for an API this Kafka has no ``ApiMessageType`` of."""
        fields = self._harness.call("stable", str(api_key))
        if fields[0] != "ok":
            return None
        return int(fields[1]), int(fields[2])

    def empty(self, kind: str, api_key: int, version: int) -> bytes:
        """What Kafka writes for a new message object (every field at its default):
        ``kind`` is ``req`` or ``resp``; the body alone, no header."""
        fields = self._harness.call("empty", str(api_key), str(version), kind)
        if fields[0] != "ok":
            raise AssertionError(f"Kafka {self.version}: {unb64(fields[1]).decode()}")
        return unb64(fields[1])

    def write(
        self, kind: str, api_key: int, version: int, payload: bytes, message: dict[str, Any]
    ) -> Written:
        """``kind`` is ``req`` or ``resp``; ``message`` the Kafka JSON (:func:`kafka_json`)."""
        text = json.dumps(message)
        fields = self._harness.call(kind, str(api_key), str(version), b64(payload), b64(text))
        if fields[0] != "ok":
            raise AssertionError(
                f"Kafka {self.version} refused {kind} {api_key} v{version}: "
                f"{unb64(fields[1]).decode()}\npayload {payload.hex()}\njson {text}"
            )
        return Written(unb64(fields[1]), unb64(fields[2]))

    def close(self) -> None:
        self._harness.close()


def _classpath(version: str) -> str:
    if not is_fetched(version):
        raise RuntimeError(f"Kafka {version} jars not in {libs_dir(version)}; run `make brokers`")
    jars = sorted(p for p in libs_dir(version).glob("*.jar") if p.name.startswith(_JAR_PREFIXES))
    return os.pathsep.join(map(str, jars))


def open_all() -> list[KafkaMessageClasses]:
    """The message classes of every Kafka version the suite runs brokers of."""
    versions = sorted(set(KAFKA_VERSIONS.values()))
    return [KafkaMessageClasses(v, compile_version=versions[-1]) for v in versions]


def camel(name: str) -> str:
    """Our snake_case field name as Kafka's JSON converters spell it (``topic_id`` ->
    ``topicId``): the JSON schema's ``TopicId`` with a lower-case first letter."""
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def kafka_uuid(raw: bytes) -> str:
    """``org.apache.kafka.common.Uuid.toString``: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def kafka_json(struct: Struct, value: dict[str, Any], version: int, flexible: bool) -> Any:
    """``value`` in the JSON form Kafka's ``*JsonConverter.read`` takes: every field the
    version has (tagged fields only in flexible versions), bytes in base64, UUIDs as
    ``Uuid.toString``."""
    out: dict[str, Any] = {}
    for f in struct.fields:
        if not f.present(version) or (f.tag is not None and not flexible):
            continue
        raw = value.get(f.name, f.default_value())
        out[camel(f.name)] = _json_value(f, f.type, raw, version, flexible)
    return out


def _json_value(f: Field, t: Any, raw: Any, version: int, flexible: bool) -> Any:
    if raw is None and isinstance(t, Struct) and not f.nullable(version):
        raw = {}  # the codec's None for a struct that cannot be null: its defaults
    if raw is None:
        return None
    if isinstance(t, Array):
        return [_json_value(f, t.element, item, version, flexible) for item in raw]
    if isinstance(t, Struct):
        return kafka_json(t, raw, version, flexible)
    if t.name in ("bytes", "records"):
        return base64.b64encode(raw).decode("ascii")
    if t.name == "uuid":
        return kafka_uuid(raw)
    return raw
