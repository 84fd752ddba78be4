"""The refresh of the edge's topic ids: the front door's own Metadata request
for every topic, with its own upstream login, when a request names an id the
edge has not learned (``sasl_scram.frontdoor.authorization``'s
``TopicNames``, which bounds how often it asks: one refresh at a time, one
started a second at most).

The request is Metadata for all topics (null), with no auto-creation and no
authorized operations: the cheapest answer that names every topic with its id
(Metadata v10+; KIP-516). It is the cluster's view for the ``upstream.``
login, which may see more topics than a user; the edge then decides each user's
request on the name, as Kafka would.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Final

from sasl_scram.endpoint.proxy._upstream import UpstreamLink
from sasl_scram.endpoint.proxy._upstream import UpstreamUnavailable
from sasl_scram.endpoint.proxy._upstream import open_upstream
from sasl_scram.frontdoor import UpstreamLoginError
from sasl_scram.frontdoor.authorization import TopicNames
from sasl_scram.kafka import API_SPECS
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode

__all__ = ["MIN_METADATA_WITH_IDS", "TopicIdRefresh"]

log = logging.getLogger("sasl_scram.endpoint")

#: Metadata v10 is the first whose topics carry their ids.
MIN_METADATA_WITH_IDS: Final = 10
_ALL_TOPICS: Final = {
    "topics": None,
    "allow_auto_topic_creation": False,
    "include_cluster_authorized_operations": False,
    "include_topic_authorized_operations": False,
}


class TopicIdRefresh:
    """Refreshes ``names`` from the cluster when it asks (its ``refresh``).

    Args:
        names: the process's map of topic ids.
        link: the front door's login, TLS and time-out towards the cluster.
        addresses: the cluster's bootstrap addresses.
        cluster_api_keys: the cluster's ApiVersions entries (the Metadata
            version asked; below v10 there are no ids to learn and no refresh).
    """

    def __init__(
        self,
        names: TopicNames,
        link: UpstreamLink,
        addresses: Sequence[tuple[str, int]],
        cluster_api_keys: list[dict[str, int]],
    ) -> None:
        self._names = names
        self._link = link
        self._addresses = list(addresses)
        theirs = {k["api_key"]: k["max_version"] for k in cluster_api_keys}
        self.version = min(theirs.get(ApiKey.METADATA, 0), API_SPECS[ApiKey.METADATA].max_version)
        self._task: asyncio.Task[None] | None = None
        self._failing = False
        if self.version >= MIN_METADATA_WITH_IDS:
            names.clock = time.monotonic
            names.refresh = self.start

    def start(self) -> None:
        """Called by the map (on the event loop, within a request's handling)."""
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        try:
            topics = await self._ask()
        except (OSError, TimeoutError, UpstreamUnavailable, UpstreamLoginError) as exc:
            self._names.refresh_failed()
            if not self._failing:
                self._failing = True
                log.warning("cannot learn the cluster's topic ids (retried on need): %s", exc)
            return
        except BaseException:
            self._names.refresh_failed()
            raise
        self._names.refreshed(topics)
        if self._failing:
            self._failing = False
            log.info("learning the cluster's topic ids again")

    async def _ask(self) -> list[dict[str, object]]:
        upstream = await open_upstream(self._link, self._addresses)
        try:
            async with asyncio.timeout(self._link.timeout):
                body = await upstream.request(ApiKey.METADATA, self.version, dict(_ALL_TOPICS))
        finally:
            upstream.close()
        error = body.get("error_code", 0)
        if error != ErrorCode.NONE:
            raise UpstreamUnavailable(f"Metadata failed with error {error}")
        return list(body["topics"])

    async def wait(self) -> None:
        """Until the refresh running, if any, is done (tests, the stop)."""
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
