"""Broker addresses in responses become the front door's own.

Upstream node N is served on the front door's host at ``port_base + N``, so
a client that follows an address it was given reaches the front door, never
the cluster. The responses are read and written with their full schemas
(``sasl_scram.kafka.ADDRESS_API_SPECS``); everything but host and port,
tagged fields included, is written back as it came.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sasl_scram.frontdoor._errors import PeerProtocolError
from sasl_scram.kafka import ADDRESS_API_SPECS
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import KafkaCodecError

__all__ = ["REWRITTEN_APIS", "AddressRewriter"]

#: API keys whose responses carry broker addresses and are rewritten.
REWRITTEN_APIS = frozenset(ADDRESS_API_SPECS)
# FindCoordinatorResponse: node id -1 (with host "" and port -1) when there is
# no coordinator; it names no broker and stays as it is.
_NO_NODE = -1
_MAX_PORT = 65535

Body = dict[str, Any]


class AddressRewriter:
    """Rewrites the broker endpoints of Metadata, FindCoordinator and DescribeCluster.

    Args:
        host: the host clients reach the front door on (the listener's, or
            its advertised one).
        port_base: ``upstream.node.port.base``; node N is served on base + N.
        learn: told each broker's real ``(node id, host, port)`` before it is
            rewritten: where a node port forwards to.
    """

    __slots__ = ("_learn", "_walkers", "host", "port_base")

    def __init__(
        self, host: str, port_base: int, learn: Callable[[int, str, int], None] | None = None
    ) -> None:
        self.host = host
        self.port_base = port_base
        self._learn = learn
        self._walkers: dict[int, Callable[[Body, int], None]] = {
            ApiKey.METADATA: self._metadata,
            ApiKey.FIND_COORDINATOR: self._find_coordinator,
            ApiKey.DESCRIBE_CLUSTER: self._describe_cluster,
        }

    def port(self, node_id: int) -> int:
        port = self.port_base + node_id
        if not 0 < port <= _MAX_PORT:
            raise PeerProtocolError(
                f"node {node_id} has no port: {self.port_base} + {node_id} is not a TCP port"
            )
        return port

    def rewrite(self, api_key: int, version: int, payload: bytes) -> bytes:
        """A response payload (correlation id on, without the size) with each
        broker endpoint replaced; the header's bytes are kept as they are."""
        spec = ADDRESS_API_SPECS.get(api_key)
        if spec is None or not spec.supports(version):
            raise PeerProtocolError(f"cannot rewrite API {api_key} version {version}")
        try:
            start, body, end = spec.read_response_body(version, payload)
        except KafkaCodecError as exc:
            raise PeerProtocolError(f"malformed response to API {api_key}: {exc}") from None
        self._walkers[api_key](body, version)
        # Trailing bytes Kafka's readers would ignore are passed on too.
        return payload[:start] + spec.write_response_body(version, body) + payload[end:]

    def _endpoint(self, node: Body, id_field: str) -> None:
        node_id = node[id_field]
        if node_id != _NO_NODE:
            if self._learn is not None:
                self._learn(node_id, node["host"], node["port"])
            node["host"] = self.host
            node["port"] = self.port(node_id)

    def _metadata(self, body: Body, version: int) -> None:
        for broker in body["brokers"]:
            self._endpoint(broker, "node_id")

    def _find_coordinator(self, body: Body, version: int) -> None:
        # KIP-699: one coordinator at the top level up to v3, a batch from v4.
        if version <= 3:
            self._endpoint(body, "node_id")
        for coordinator in body["coordinators"]:
            self._endpoint(coordinator, "node_id")

    def _describe_cluster(self, body: Body, version: int) -> None:
        for broker in body["brokers"]:
            self._endpoint(broker, "broker_id")
