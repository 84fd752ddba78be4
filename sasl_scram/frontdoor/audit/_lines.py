"""The pieces of an administrative request's audit lines, before and after the
cluster's answer, and how a line's result is told from that answer."""

from __future__ import annotations

import base64
from collections.abc import Hashable
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Final

from sasl_scram.audit import error_name
from sasl_scram.kafka import ErrorCode

__all__ = [
    "AUTHORIZATION_FAILURES",
    "Details",
    "Key",
    "Line",
    "Results",
    "joined",
    "kafka_uuid",
    "outcome",
    "partition_keys",
]

Details = tuple[tuple[str, object], ...]
Key = Hashable

#: The errors with which Kafka's ``KafkaApis`` answers what its authorizer
#: denied: a line whose results are all of these is ``Denied``.
AUTHORIZATION_FAILURES: Final = frozenset(
    {
        ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        ErrorCode.GROUP_AUTHORIZATION_FAILED,
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
    }
)


@dataclass(frozen=True, slots=True)
class Line:
    """One audit line of a request, before the cluster answers it.

    Attributes:
        kind: the resource's type, as Kafka's authorizer log spells it
            (``Topic``, ``Group``, ``Cluster``) or what the request changes
            (``Broker``, ``ClientQuota``, ``Feature``).
        name: the resource's name.
        details: what the request asks of it (never a configuration's value:
            it may be a password).
        keys: where the response gives this line's result, each with the label
            a mixed result names it by (a partition); empty: the response has
            one result for the whole request.
        pattern: the resource's pattern type (an ACL's may be ``PREFIXED``).
    """

    kind: str
    name: str
    details: Details = ()
    keys: tuple[tuple[Key, str], ...] = ()
    pattern: str = "LITERAL"


@dataclass(slots=True)
class Results:
    """A response's error codes: per key of the request's lines, and the one
    the response gives for all of it (``top``)."""

    codes: Mapping[Key, int] = field(default_factory=dict)
    top: int = 0


def outcome(line: Line, results: Results) -> tuple[str, bool]:
    """The line's ``result`` (Kafka's error names) and whether the cluster
    denied it: one name when every result agrees, else ``label:NAME`` each."""
    if results.top or not line.keys:
        found: list[tuple[str, int | None]] = [("", results.top)]
    else:
        found = [(label, results.codes.get(key)) for key, label in line.keys]
    names = [(label, "missing" if code is None else error_name(code)) for label, code in found]
    if len({name for _, name in names}) == 1:
        text = names[0][1]
    else:
        text = ",".join(f"{label}:{name}" for label, name in names)
    denied = all(code in AUTHORIZATION_FAILURES for _, code in found)
    return text, denied


def partition_keys(topic: str, partitions: Iterable[int]) -> tuple[tuple[Key, str], ...]:
    """The keys of a topic's partitions, labelled by partition."""
    return tuple(((topic, p), str(p)) for p in partitions)


def joined(values: Iterable[object]) -> str:
    return ",".join(map(str, values))


def kafka_uuid(raw: bytes) -> str:
    """``org.apache.kafka.common.Uuid.toString``: URL-safe base64, unpadded."""
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")
