"""The filter chain: the ordered filters of one front door (``_filters.py``),
asked in order for each frame a filter must see, and bound to one connection.

Compiled with mypyc (``tools/build_native.py``): it runs for every request a
filter reads (a Produce's head, a Fetch, an administrative request). The
filters it calls are instances of ``_filters.py``'s classes, which stay
interpreted so that interpreted subclasses (and their class-level ``api_keys``)
behave as Python classes; compiled code reaches them through ordinary
attribute lookups.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from sasl_scram.frontdoor._filters import PASS
from sasl_scram.frontdoor._filters import EdgeRequestFilter
from sasl_scram.frontdoor._filters import EdgeSession
from sasl_scram.frontdoor._filters import RequestFilter
from sasl_scram.frontdoor._filters import RequestOutcome
from sasl_scram.frontdoor._filters import ResponseFilter
from sasl_scram.frontdoor._filters import Rewrite
from sasl_scram.frontdoor._inflight import InFlight

__all__ = ["BoundChain", "FilterChain"]


F = TypeVar("F", RequestFilter, ResponseFilter)


class FilterChain:
    """The ordered filters of one front door, shared by its connections.

    Filters hold no per-connection state; each is asked in order, and the
    first that does not pass decides.
    """

    __slots__ = (
        "_by_request_key",
        "_by_response_key",
        "edge_keys",
        "head_keys",
        "request_keys",
        "response_keys",
        "watched_keys",
    )

    def __init__(
        self,
        requests: Sequence[RequestFilter] = (),
        responses: Sequence[ResponseFilter] = (),
    ) -> None:
        self._by_request_key = _by_key(requests)
        self._by_response_key = _by_key(responses)
        #: The API keys some request filter sees whole; the rest stream through.
        self.request_keys = frozenset(self._by_request_key)
        #: Likewise for responses.
        self.response_keys = frozenset(self._by_response_key)
        #: Request keys a filter may let stream after reading their heads.
        self.head_keys = frozenset(key for each in requests for key in each.head_keys)
        #: The API keys the edge's own machinery answers (bounded as such).
        self.edge_keys = frozenset(
            key for each in requests if isinstance(each, EdgeRequestFilter) for key in each.api_keys
        )
        #: The request keys only watchers see: one too large to read whole streams.
        self.watched_keys = frozenset(
            key
            for key, chain in self._by_request_key.items()
            if all(each.watcher for each in chain)
        )

    def bind(self, session: EdgeSession) -> BoundChain:
        """The chain as one connection uses it."""
        return BoundChain(self, session)

    def on_request(self, session: EdgeSession, entry: InFlight, payload: bytes) -> RequestOutcome:
        rewritten: Rewrite | None = None
        for request_filter in self._by_request_key.get(entry.api_key, ()):
            outcome = request_filter.on_request(session, entry, payload)
            if type(outcome) is Rewrite:
                rewritten = outcome
                payload = outcome.payload
            elif outcome is not PASS:
                return outcome
        # Only passed: the splitter forwards the frame as it came.
        return PASS if rewritten is None else rewritten

    def on_head(
        self, session: EdgeSession, api_key: int, version: int, buf: bytes, start: int, end: int
    ) -> bool | None:
        """Whether some filter must see the request whole (``None``: more bytes)."""
        whole: bool | None = False
        for request_filter in self._by_request_key.get(api_key, ()):
            if api_key not in request_filter.head_keys:
                return True
            said = request_filter.on_head(session, api_key, version, buf, start, end)
            if said:
                return True
            if said is None:
                whole = None
        return whole

    def on_unread(self, session: EdgeSession, entry: InFlight) -> None:
        for request_filter in self._by_request_key.get(entry.api_key, ()):
            request_filter.on_unread(session, entry)

    def on_response(self, session: EdgeSession, entry: InFlight, payload: bytes) -> bytes:
        for response_filter in self._by_response_key.get(entry.api_key, ()):
            payload = response_filter.on_response(session, entry, payload)
        reshape = entry.reshape
        if reshape is not None:
            payload = reshape(payload)
        watch = entry.watch
        if watch is not None:
            watch.response(payload)
        return payload


class BoundChain:
    """A :class:`FilterChain` and one connection's :class:`EdgeSession`: what a
    :class:`~sasl_scram.frontdoor.ProxyConnection` calls."""

    __slots__ = (
        "_chain",
        "edge_keys",
        "head_keys",
        "request_keys",
        "response_keys",
        "session",
        "watched_keys",
    )

    def __init__(self, chain: FilterChain, session: EdgeSession) -> None:
        self._chain = chain
        self.session = session
        self.request_keys = chain.request_keys
        self.response_keys = chain.response_keys
        self.edge_keys = chain.edge_keys
        self.head_keys = chain.head_keys
        self.watched_keys = chain.watched_keys

    def on_head(self, api_key: int, version: int, buf: bytes, start: int, end: int) -> bool | None:
        return self._chain.on_head(self.session, api_key, version, buf, start, end)

    def on_request(self, entry: InFlight, payload: bytes) -> RequestOutcome:
        return self._chain.on_request(self.session, entry, payload)

    def on_unread(self, entry: InFlight) -> None:
        self._chain.on_unread(self.session, entry)

    def on_response(self, entry: InFlight, payload: bytes) -> bytes:
        return self._chain.on_response(self.session, entry, payload)


def _by_key(filters: Sequence[F]) -> dict[int, tuple[F, ...]]:
    by_key: dict[int, list[F]] = {}
    for each in filters:
        for key in sorted(each.api_keys):
            by_key.setdefault(key, []).append(each)
    return {key: tuple(chain) for key, chain in by_key.items()}
