"""Refusing some of a request's topics (or groups, or ids), as Kafka answers
them: each refused item echoed in the response with its error, in that
response's own shape; the rest goes on to the cluster.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Final

from sasl_scram.frontdoor.authorization._check import RequestCheck
from sasl_scram.frontdoor.authorization._verdicts import ALLOWED
from sasl_scram.frontdoor.authorization._verdicts import Body
from sasl_scram.frontdoor.authorization._verdicts import Partly
from sasl_scram.frontdoor.authorization._verdicts import Refused
from sasl_scram.frontdoor.authorization._verdicts import Verdict
from sasl_scram.frontdoor.authorization._verdicts import and_then
from sasl_scram.kafka import ErrorCode

__all__ = ["TopicPartitions", "answered_first", "by_id", "duplicated", "split_items"]

_UNKNOWN_TOPIC_ID: Final = int(ErrorCode.UNKNOWN_TOPIC_ID)


@dataclass(frozen=True, slots=True)
class TopicPartitions:
    """Where an API's request and response keep topics and their partitions.

    Attributes:
        request_topics, request_name, request_partitions: the request's array of
            topics, each topic's name, and its array of partitions.
        request_index: a partition's index in the request (``None``: the
            partitions array holds the indexes themselves).
        response_topics, response_name, response_partitions, response_index:
            the same in the response.
        refused: a refused partition's other fields, as Kafka's error response
            fills them (``-1`` offsets, empty records).
    """

    request_topics: str
    request_name: str
    request_partitions: str
    request_index: str | None
    response_topics: str
    response_name: str
    response_partitions: str
    response_index: str
    refused: dict[str, Any] = field(default_factory=dict)

    def names(self, request: Body) -> list[str]:
        return [topic[self.request_name] for topic in request[self.request_topics]]

    def entry(self, topic: Body, error: int) -> Body:
        """The response's entry for a refused request topic: every partition asked
        for carries ``error``."""
        partitions = []
        for partition in topic[self.request_partitions]:
            index = partition if self.request_index is None else partition[self.request_index]
            partitions.append({self.response_index: index, "error_code": error, **self.refused})
        return {self.response_name: topic[self.request_name], self.response_partitions: partitions}

    def verdict(
        self,
        request: Body,
        allowed: Callable[[str], bool],
        error: int,
        response: Body | None = None,
    ) -> Verdict:
        """Refuse the topics ``allowed`` refuses; ``response``: the rest of a
        whole refusal's body (``throttle_time_ms`` and the like)."""
        return split_items(
            request,
            self.request_topics,
            lambda topic: allowed(topic[self.request_name]),
            lambda topic: self.entry(topic, error),
            self.response_topics,
            response,
        )

    def judged(
        self,
        request: Body,
        error_of: Callable[[Any], int],
        response: Body | None = None,
    ) -> Verdict:
        """Refuse each topic whose ``error_of(name or id)`` is an error (not 0)
        with that error; ``response`` as for :meth:`verdict`."""
        errors: dict[int, int] = {}

        def allowed(topic: Body) -> bool:
            error = errors[id(topic)] = error_of(topic[self.request_name])
            return error == 0

        return split_items(
            request,
            self.request_topics,
            allowed,
            lambda topic: self.entry(topic, errors[id(topic)]),
            self.response_topics,
            response,
        )

    def refuse_all(self, request: Body, error: int, response: Body | None = None) -> Refused:
        """Every topic refused with ``error`` (a whole-request error)."""
        entries = [self.entry(topic, error) for topic in request[self.request_topics]]
        return Refused({**(response or {}), self.response_topics: entries})


def split_items(
    request: Body,
    items_key: str,
    allowed: Callable[[Any], bool],
    refused_entry: Callable[[Any], Any],
    response_key: str,
    response: Body | None = None,
) -> Verdict:
    """Split ``request[items_key]`` by ``allowed``; refused items become
    ``refused_entry(item)`` in ``response[response_key]``."""
    items: Iterable[Any] = request[items_key] or ()
    kept: list[Any] = []
    refused: list[Any] = []
    for item in items:
        (kept if allowed(item) else refused).append(item)
    if not refused:
        return ALLOWED
    entries = [refused_entry(item) for item in refused]
    if not kept:
        return Refused({**(response or {}), response_key: entries})

    def merge(answer: Body) -> None:
        answer[response_key] = [*(answer.get(response_key) or ()), *entries]

    return Partly({**request, items_key: kept}, merge)


def by_id(
    check: RequestCheck, allowed: Callable[[str], bool], error: int
) -> Callable[[bytes], int]:
    """The error for a topic named by id, in ``KafkaApis``' order: an id the
    cluster's metadata does not hold is UNKNOWN_TOPIC_ID before any
    authorization (``handleFetchRequest``, ``handleOffsetCommitRequest``); a
    known one is decided on its name, ``error`` when ``allowed`` refuses it.
    The edge answers an id it does not know (yet) as a broker whose metadata
    does not: the client refreshes its metadata and asks again, by which time
    the refresh the miss started has taught the edge the id."""

    def error_of(topic_id: bytes) -> int:
        name = check.topic_names.name(topic_id)
        if name is None:
            return _UNKNOWN_TOPIC_ID
        return 0 if allowed(name) else error

    return error_of


def duplicated(keys: Iterable[Any]) -> list[Any]:
    """The keys ``keys`` holds more than once, in the order they first repeat."""
    seen: set[Any] = set()
    found: dict[Any, None] = {}
    for key in keys:
        if key in seen:
            found[key] = None
        seen.add(key)
    return list(found)


def answered_first(
    request: Body,
    items_key: str,
    response_key: str,
    early: Callable[[Any], bool],
    entries: list[Body],
    decide: Callable[[Body], Verdict],
) -> Verdict:
    """Items Kafka answers before it authorizes anything (a duplicate, a name it
    never accepts): those ``early`` picks are answered with ``entries`` and never
    forwarded nor decided; ``decide`` decides the request without them."""
    if not entries:
        return decide(request)
    rest = {**request, items_key: [i for i in request[items_key] or () if not early(i)]}
    if not rest[items_key]:
        return Refused({response_key: entries})
    verdict = decide(rest)
    if isinstance(verdict, Refused):
        body = verdict.response
        return Refused({**body, response_key: [*(body.get(response_key) or ()), *entries]})

    def merge(answer: Body) -> None:
        answer[response_key] = [*(answer.get(response_key) or ()), *entries]

    return and_then(verdict, rest, merge)
