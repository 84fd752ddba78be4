"""The front door's sans-IO core: ``kafka-scram serve`` in front of a Kafka cluster.

Bytes in, bytes and events out; no sockets. Requests and responses are split
into frames as they stream (:class:`RequestSplitter`, :class:`ResponseSplitter`),
matched in order (:class:`InFlightQueue`), passed on unparsed except the
responses that carry broker addresses (:class:`AddressRewriter`); the
ApiVersions answer is capped to what can be forwarded unparsed
(:func:`edge_api_versions`); the ``upstream.`` keys are typed by
:func:`upstream_config`. The endpoint's adapter is ``sasl_scram/endpoint/_forward.py``.
"""

from __future__ import annotations

from sasl_scram.frontdoor._config import UPSTREAM_PREFIX
from sasl_scram.frontdoor._config import UpstreamConfig
from sasl_scram.frontdoor._config import UpstreamIdentity
from sasl_scram.frontdoor._config import upstream_config
from sasl_scram.frontdoor._errors import FrontDoorError
from sasl_scram.frontdoor._errors import PeerProtocolError
from sasl_scram.frontdoor._errors import UpstreamConfigError
from sasl_scram.frontdoor._inflight import InFlight
from sasl_scram.frontdoor._inflight import InFlightQueue
from sasl_scram.frontdoor._inflight import produce_acks
from sasl_scram.frontdoor._login import UpstreamLogin
from sasl_scram.frontdoor._login import UpstreamLoginError
from sasl_scram.frontdoor._rewrite import REWRITTEN_APIS
from sasl_scram.frontdoor._rewrite import AddressRewriter
from sasl_scram.frontdoor._splitter import MAX_HEAD_BYTES
from sasl_scram.frontdoor._splitter import LocalRequest
from sasl_scram.frontdoor._splitter import RequestSplitter
from sasl_scram.frontdoor._splitter import ResponseSplitter
from sasl_scram.frontdoor._versions import EDGE_API_KEYS
from sasl_scram.frontdoor._versions import FORWARD_CAPS
from sasl_scram.frontdoor._versions import NOT_FORWARDED
from sasl_scram.frontdoor._versions import edge_api_versions
from sasl_scram.frontdoor._versions import edge_ranges

__all__ = [
    "EDGE_API_KEYS",
    "FORWARD_CAPS",
    "MAX_HEAD_BYTES",
    "NOT_FORWARDED",
    "REWRITTEN_APIS",
    "UPSTREAM_PREFIX",
    "AddressRewriter",
    "FrontDoorError",
    "InFlight",
    "InFlightQueue",
    "LocalRequest",
    "PeerProtocolError",
    "RequestSplitter",
    "ResponseSplitter",
    "UpstreamConfig",
    "UpstreamConfigError",
    "UpstreamIdentity",
    "UpstreamLogin",
    "UpstreamLoginError",
    "edge_api_versions",
    "edge_ranges",
    "produce_acks",
    "upstream_config",
]
