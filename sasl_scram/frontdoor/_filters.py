"""The filter seam: what the front door does with each request and response.

A forwarded connection passes each request through an ordered chain of
request filters and each response through a chain of response filters. A
filter names the API keys it must see whole (:attr:`RequestFilter.api_keys`);
every other frame passes through the splitters as slices of what was read, with
no copy and no parse. For a frame it sees, a request filter answers:

* :data:`PASS`: on to the next filter (after the last, to the cluster);
* a :class:`Rewrite`: the payload the cluster gets instead (the next filters
  see it too);
* a :class:`Respond`: the edge answers it with this response payload, in the
  request's place among those in flight; the cluster never sees it;
* :data:`AT_EDGE`: the edge's own request machinery answers it (the login,
  KIP-368 re-authentication, the token RPCs, KIP-554), once every request
  before it has been answered, as Kafka answers a connection's requests in
  order.

A response filter sees whole responses to its API keys and returns the
payload the client gets. A request filter may also ask to see the one response
to a request it let through (:attr:`InFlight.reshape`): how a request of
which the edge refused a part gets the refused part's errors merged into the
cluster's answer, with no cost for the responses nobody asked for. The
address rewriter is the first response filter; authorization at the edge is
one more request filter.

A *watcher* (:attr:`RequestFilter.watcher`: the audit trail) only reads: it
never rewrites nor answers, so traffic never depends on it. A request of its
keys that is too large to read whole (past the splitter's ``max_buffered``)
streams through unread and the watcher is told so (:meth:`RequestFilter.on_unread`);
it may watch a response likewise (:attr:`InFlight.watch`), read whole only
when it is small enough, and told when the connection closes before it came.

Filters are shared by every connection of a front door and hold no state of a
connection's own; :meth:`FilterChain.bind` (``_chain.py``) pairs the chain
with one connection's :class:`EdgeSession` (who logged in, from where), which
every filter call is given.

The chain itself is compiled (``tools/build_native.py``); this module is not:
its filter classes are subclassed by interpreted code (the edge's
authorization, the audit, tests), and a class-level :attr:`RequestFilter.api_keys`
of such a subclass is an ordinary class attribute only on an ordinary class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from sasl_scram.config import KafkaPrincipal
from sasl_scram.frontdoor._inflight import InFlight
from sasl_scram.frontdoor._rewrite import REWRITTEN_APIS
from sasl_scram.frontdoor._rewrite import AddressRewriter
from sasl_scram.frontdoor._versions import EDGE_API_KEYS

__all__ = [
    "AT_EDGE",
    "PASS",
    "AddressRewriteFilter",
    "EdgeRequestFilter",
    "EdgeSession",
    "RequestFilter",
    "RequestOutcome",
    "Respond",
    "ResponseFilter",
    "Rewrite",
]


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


#: The filter lets the request go on unchanged.
PASS: Final = _Marker("PASS")
#: The edge's own request machinery answers the request (never forwarded).
AT_EDGE: Final = _Marker("AT_EDGE")


@dataclass(frozen=True, slots=True)
class Rewrite:
    """Forward ``payload`` (header included, without the size) instead."""

    payload: bytes


@dataclass(frozen=True, slots=True)
class Respond:
    """Answer at the edge with ``payload``: the response without its size,
    correlation id first, in the request's own response schema."""

    payload: bytes


RequestOutcome = _Marker | Rewrite | Respond


@dataclass(frozen=True, slots=True)
class EdgeSession:
    """Who sends a forwarded connection's requests, as the filters see them.

    Attributes:
        principal: the edge login's principal (``User:<name>``; a token login's
            is its owner's, as Kafka's ``DelegationTokenManager`` makes it).
        client_host: the client's address as Kafka's ``RequestContext`` gives
            it to the authorizer (``InetAddress.getHostAddress``).
        connection_id: the edge connection's id, as the logs name it.
        token_id: the delegation token the client logged in with, if any.
        cluster_principal: who the cluster sees: the upstream login in
            ``service`` mode, the owner in ``owner-token`` mode.
        cluster_token_id: when the upstream login is a delegation token
            (whose owner only the cluster knows): its id.
    """

    principal: KafkaPrincipal
    client_host: str
    connection_id: str
    token_id: str | None = None
    cluster_principal: KafkaPrincipal | None = None
    cluster_token_id: str | None = None


class RequestFilter:
    """A policy on requests; subclasses set :attr:`api_keys` and override :meth:`on_request`."""

    #: The API keys whose whole requests this filter sees.
    api_keys: frozenset[int] = frozenset()
    #: Of those, the keys whose requests may stream through unread when
    #: :meth:`on_head` says so from their first bytes (a Produce's head names
    #: its topics before its record batches).
    head_keys: frozenset[int] = frozenset()

    def on_head(
        self, session: EdgeSession, api_key: int, version: int, buf: bytes, start: int, end: int
    ) -> bool | None:
        """From ``buf[start:end]`` (the request from its client id on): whether
        :meth:`on_request` must see it whole; ``None`` while more bytes are needed."""
        return True

    #: The filter only reads: :meth:`on_request` always passes. A request of
    #: its keys too large to read whole then streams through unread (when no
    #: other filter needs it whole) and :meth:`on_unread` is told instead.
    watcher: bool = False

    def on_request(self, session: EdgeSession, entry: InFlight, payload: bytes) -> RequestOutcome:
        """``payload``: the request without its size, header included."""
        return PASS

    def on_unread(self, session: EdgeSession, entry: InFlight) -> None:
        """A watcher's request, forwarded unread: it was too large to read whole."""


class ResponseFilter:
    """A policy on responses; subclasses set :attr:`api_keys` and override :meth:`on_response`."""

    api_keys: frozenset[int] = frozenset()

    def on_response(self, session: EdgeSession, entry: InFlight, payload: bytes) -> bytes:
        """``payload``: the response without its size, correlation id first."""
        return payload


class EdgeRequestFilter(RequestFilter):
    """What stays at the edge: ApiVersions and the login, the delegation-token
    RPCs and KIP-554's credential RPCs (``EDGE_API_KEYS``)."""

    def __init__(self, api_keys: frozenset[int] = EDGE_API_KEYS) -> None:
        self.api_keys = api_keys

    def on_request(self, session: EdgeSession, entry: InFlight, payload: bytes) -> RequestOutcome:
        return AT_EDGE


class AddressRewriteFilter(ResponseFilter):
    """Broker addresses in Metadata, FindCoordinator and DescribeCluster
    responses become the front door's own (:class:`AddressRewriter`)."""

    api_keys = REWRITTEN_APIS

    def __init__(self, rewriter: AddressRewriter) -> None:
        self.rewriter = rewriter

    def on_response(self, session: EdgeSession, entry: InFlight, payload: bytes) -> bytes:
        return self.rewriter.rewrite(entry.api_key, entry.api_version, payload)
