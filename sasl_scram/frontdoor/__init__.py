"""The front door's sans-IO core: ``kafka-scram serve`` in front of a Kafka cluster.

Bytes in, bytes and events out; no sockets. :class:`ProxyConnection` owns a
forwarded connection's life after login (its :class:`Phase`, the actions its
adapter carries out), every bound in one :class:`ProxyBounds`, and each frame
through a :class:`FilterChain` of request and response filters (the edge's own
requests, the address rewriter). Requests and responses are split
into frames as they stream (:class:`RequestSplitter`, :class:`ResponseSplitter`),
matched in order (:class:`InFlightQueue`), passed on unparsed except the
responses that carry broker addresses (:class:`AddressRewriter`); the
ApiVersions answer is capped to what can be forwarded unparsed
(:func:`edge_api_versions`); whether the cluster answers, and when to look
again, is one :class:`Reachability` per set of addresses; the ``upstream.`` keys are typed by
:func:`upstream_config`; in ``upstream.identity=owner-token`` mode
:class:`OwnerTokens` keeps a cluster-issued token per edge user; whether the
principal the cluster sees is a cluster administrator is decided from the
cluster's own answer (:class:`ClusterOperations`, :func:`check_service_login`,
:func:`owner_refusal`). The
endpoint's adapter is ``sasl_scram/endpoint/proxy/_forward.py``.
"""

from __future__ import annotations

from sasl_scram.frontdoor._bounds import ProxyBounds
from sasl_scram.frontdoor._chain import BoundChain
from sasl_scram.frontdoor._chain import FilterChain
from sasl_scram.frontdoor._cluster_admin import ADMIN_OPERATIONS
from sasl_scram.frontdoor._cluster_admin import CLUSTER_OPERATIONS
from sasl_scram.frontdoor._cluster_admin import KAFKA_AUTHORIZERS
from sasl_scram.frontdoor._cluster_admin import NOT_COMPUTED
from sasl_scram.frontdoor._cluster_admin import ClusterOperations
from sasl_scram.frontdoor._cluster_admin import OwnerAdminRefused
from sasl_scram.frontdoor._cluster_admin import OwnerRefusal
from sasl_scram.frontdoor._cluster_admin import check_service_login
from sasl_scram.frontdoor._cluster_admin import describe_cluster_request
from sasl_scram.frontdoor._cluster_admin import describe_cluster_version
from sasl_scram.frontdoor._cluster_admin import edge_authorizer_enabled
from sasl_scram.frontdoor._cluster_admin import owner_refusal
from sasl_scram.frontdoor._cluster_admin import upstream_login_name
from sasl_scram.frontdoor._config import CLIENT_PROPERTIES_KEY
from sasl_scram.frontdoor._config import START_WAIT_KEY
from sasl_scram.frontdoor._config import UPSTREAM_KEYS
from sasl_scram.frontdoor._config import UPSTREAM_PREFIX
from sasl_scram.frontdoor._config import UpstreamConfig
from sasl_scram.frontdoor._config import UpstreamIdentity
from sasl_scram.frontdoor._config import read_upstream
from sasl_scram.frontdoor._config import upstream_config
from sasl_scram.frontdoor._errors import ClusterAdminError
from sasl_scram.frontdoor._errors import FrontDoorError
from sasl_scram.frontdoor._errors import OwnerTokenError
from sasl_scram.frontdoor._errors import PeerProtocolError
from sasl_scram.frontdoor._errors import UpstreamConfigError
from sasl_scram.frontdoor._filters import AT_EDGE
from sasl_scram.frontdoor._filters import PASS
from sasl_scram.frontdoor._filters import AddressRewriteFilter
from sasl_scram.frontdoor._filters import EdgeRequestFilter
from sasl_scram.frontdoor._filters import EdgeSession
from sasl_scram.frontdoor._filters import RequestFilter
from sasl_scram.frontdoor._filters import RequestOutcome
from sasl_scram.frontdoor._filters import Respond
from sasl_scram.frontdoor._filters import ResponseFilter
from sasl_scram.frontdoor._filters import Rewrite
from sasl_scram.frontdoor._inflight import InFlight
from sasl_scram.frontdoor._inflight import InFlightQueue
from sasl_scram.frontdoor._inflight import ResponseWatch
from sasl_scram.frontdoor._inflight import produce_acks
from sasl_scram.frontdoor._login import UpstreamLogin
from sasl_scram.frontdoor._login import UpstreamLoginError
from sasl_scram.frontdoor._owner_tokens import CHECK_OWNER
from sasl_scram.frontdoor._owner_tokens import PROPAGATION_MS
from sasl_scram.frontdoor._owner_tokens import IssuedToken
from sasl_scram.frontdoor._owner_tokens import OwnerToken
from sasl_scram.frontdoor._owner_tokens import OwnerTokenChange
from sasl_scram.frontdoor._owner_tokens import OwnerTokens
from sasl_scram.frontdoor._owner_tokens import TokenChange
from sasl_scram.frontdoor._owner_tokens import TokenIssuer
from sasl_scram.frontdoor._proxy import RELOGIN
from sasl_scram.frontdoor._proxy import Action
from sasl_scram.frontdoor._proxy import AnswerLocally
from sasl_scram.frontdoor._proxy import CloseConnection
from sasl_scram.frontdoor._proxy import Phase
from sasl_scram.frontdoor._proxy import ProxyConnection
from sasl_scram.frontdoor._proxy import ReadClient
from sasl_scram.frontdoor._proxy import ReadCluster
from sasl_scram.frontdoor._proxy import Relogin
from sasl_scram.frontdoor._proxy import SetTimer
from sasl_scram.frontdoor._proxy import ToClient
from sasl_scram.frontdoor._proxy import ToCluster
from sasl_scram.frontdoor._reachability import Backoff
from sasl_scram.frontdoor._reachability import Reachability
from sasl_scram.frontdoor._rewrite import REWRITTEN_APIS
from sasl_scram.frontdoor._rewrite import AddressRewriter
from sasl_scram.frontdoor._splitter import MAX_HEAD_BYTES
from sasl_scram.frontdoor._splitter import Chunk
from sasl_scram.frontdoor._splitter import LocalRequest
from sasl_scram.frontdoor._splitter import RequestSplitter
from sasl_scram.frontdoor._splitter import ResponseSplitter
from sasl_scram.frontdoor._versions import ACL_API_KEYS
from sasl_scram.frontdoor._versions import EDGE_API_KEYS
from sasl_scram.frontdoor._versions import FORWARD_CAPS
from sasl_scram.frontdoor._versions import NOT_FORWARDED
from sasl_scram.frontdoor._versions import edge_api_versions
from sasl_scram.frontdoor._versions import edge_ranges

__all__ = [
    "ACL_API_KEYS",
    "ADMIN_OPERATIONS",
    "AT_EDGE",
    "CHECK_OWNER",
    "CLIENT_PROPERTIES_KEY",
    "CLUSTER_OPERATIONS",
    "EDGE_API_KEYS",
    "FORWARD_CAPS",
    "KAFKA_AUTHORIZERS",
    "MAX_HEAD_BYTES",
    "NOT_COMPUTED",
    "NOT_FORWARDED",
    "PASS",
    "PROPAGATION_MS",
    "RELOGIN",
    "REWRITTEN_APIS",
    "START_WAIT_KEY",
    "UPSTREAM_KEYS",
    "UPSTREAM_PREFIX",
    "Action",
    "AddressRewriteFilter",
    "AddressRewriter",
    "AnswerLocally",
    "Backoff",
    "BoundChain",
    "Chunk",
    "CloseConnection",
    "ClusterAdminError",
    "ClusterOperations",
    "EdgeRequestFilter",
    "EdgeSession",
    "FilterChain",
    "FrontDoorError",
    "InFlight",
    "InFlightQueue",
    "IssuedToken",
    "LocalRequest",
    "OwnerAdminRefused",
    "OwnerRefusal",
    "OwnerToken",
    "OwnerTokenChange",
    "OwnerTokenError",
    "OwnerTokens",
    "PeerProtocolError",
    "Phase",
    "ProxyBounds",
    "ProxyConnection",
    "Reachability",
    "ReadClient",
    "ReadCluster",
    "Relogin",
    "RequestFilter",
    "RequestOutcome",
    "RequestSplitter",
    "Respond",
    "ResponseFilter",
    "ResponseSplitter",
    "ResponseWatch",
    "Rewrite",
    "SetTimer",
    "ToClient",
    "ToCluster",
    "TokenChange",
    "TokenIssuer",
    "UpstreamConfig",
    "UpstreamConfigError",
    "UpstreamIdentity",
    "UpstreamLogin",
    "UpstreamLoginError",
    "check_service_login",
    "describe_cluster_request",
    "describe_cluster_version",
    "edge_api_versions",
    "edge_authorizer_enabled",
    "edge_ranges",
    "owner_refusal",
    "produce_acks",
    "read_upstream",
    "upstream_config",
    "upstream_login_name",
]
