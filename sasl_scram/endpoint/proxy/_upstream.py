"""Connections from the front door to the cluster: the thin asyncio adapter.

One :class:`UpstreamProtocol` per forwarded client connection (and one for
the start-up look at the cluster). It logs in with the sans-IO
:class:`~sasl_scram.frontdoor.UpstreamLogin`, can then answer a few requests
of its own (:meth:`UpstreamProtocol.request`, for the start-up look), and
finally hands every byte to a sink: the client's :class:`ProxyAdapter`.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import ssl
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import cast

from sasl_scram.config import ClientConfig
from sasl_scram.config import SaslCredentials
from sasl_scram.config import format_host_port
from sasl_scram.frontdoor import ClusterOperations
from sasl_scram.frontdoor import FrontDoorError
from sasl_scram.frontdoor import UpstreamLogin
from sasl_scram.frontdoor import UpstreamLoginError
from sasl_scram.frontdoor import describe_cluster_request
from sasl_scram.frontdoor import describe_cluster_version
from sasl_scram.kafka import API_SPECS
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode
from sasl_scram.kafka import FrameBuffer
from sasl_scram.kafka import KafkaCodecError
from sasl_scram.kafka import client_software
from sasl_scram.kafka import decode_response
from sasl_scram.kafka import encode_request

__all__ = [
    "ClusterView",
    "UpstreamLink",
    "UpstreamProtocol",
    "UpstreamUnavailable",
    "UpstreamUntrusted",
    "cluster_operations",
    "look_at_cluster",
    "open_upstream",
    "why_unreachable",
]

log = logging.getLogger("sasl_scram.endpoint")

# The login's and the start-up look's answers are small; Metadata of a big
# cluster is not, but stays far below this.
_MAX_CONTROL_FRAME = 64 * 1024 * 1024
_CLIENT_ID = "kafka-scram-front-door"


class UpstreamUnavailable(FrontDoorError):
    """No broker of the cluster could be reached, or it refused our login."""


#: How :func:`open_upstream`'s failure begins; :func:`why_unreachable` drops it.
CANNOT_REACH = "cannot reach the cluster: "


def why_unreachable(exc: BaseException) -> str:
    """What :func:`open_upstream` found at each address, without its opening words."""
    return str(exc).removeprefix(CANNOT_REACH)


class UpstreamUntrusted(UpstreamUnavailable):
    """A broker's certificate is not trusted (``upstream.ssl.truststore.location``):
    a configuration to fix, which waiting for the cluster would not."""


Sink = Callable[[bytes], None]


class UpstreamProtocol(asyncio.Protocol):
    """One connection to a broker: its login, then a byte pipe to a sink."""

    def __init__(self, login: UpstreamLogin | None, loop: asyncio.AbstractEventLoop) -> None:
        self._login = login
        self.ready: asyncio.Future[None] = loop.create_future()
        self._frames = FrameBuffer(_MAX_CONTROL_FRAME)
        self._calls: collections.deque[tuple[int, int, int, asyncio.Future[Any]]] = (
            collections.deque()
        )
        self._ids = 1 << 20  # above the login's ids
        self.transport: asyncio.Transport | None = None
        self._sink: Sink | None = None
        #: Called with the reason once the connection is gone.
        self.on_lost: Callable[[str], None] | None = None
        #: Called once when the connection is gone, whoever closed it (an owner
        #: token's user releases it).
        self.on_gone: Callable[[], None] | None = None
        #: Called with True when the broker stops reading, False when it reads again.
        self.on_writable: Callable[[bool], None] | None = None
        self.lost = False

    # -- asyncio callbacks --------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        if self._login is None:
            self.ready.set_result(None)
        else:
            self.transport.write(self._login.start())

    def data_received(self, data: bytes) -> None:
        sink = self._sink
        if sink is not None:
            sink(data)
            return
        self._frames.feed(data)
        try:
            while (payload := self._frames.next_frame()) is not None:
                self._control_frame(payload)
        except (FrontDoorError, KafkaCodecError) as exc:
            self._fail(exc)

    def _control_frame(self, payload: bytes) -> None:
        login = self._login
        if login is not None and not login.done:
            reply = login.receive(payload)
            if reply:
                self._write(reply)
            if login.done and not self.ready.done():
                self.ready.set_result(None)
            return
        if not self._calls:
            raise UpstreamLoginError("the broker sent a response nobody asked for")
        correlation_id, api_key, version, future = self._calls.popleft()
        got, body = decode_response(api_key, version, payload)
        if got != correlation_id:
            raise UpstreamLoginError(f"correlation id {got} does not match {correlation_id}")
        if not future.done():
            future.set_result(body)

    def _fail(self, exc: BaseException) -> None:
        if not self.ready.done():
            self.ready.set_exception(exc)
        for *_, future in self._calls:
            if not future.done():
                future.set_exception(exc)
        self._calls.clear()
        self.close()

    def pause_writing(self) -> None:
        if self.on_writable is not None:
            self.on_writable(False)

    def resume_writing(self) -> None:
        if self.on_writable is not None:
            self.on_writable(True)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        gone, self.on_gone = self.on_gone, None
        if gone is not None:
            gone()
        reason = f"the broker closed the connection: {exc}" if exc else "the broker closed it"
        self._fail(UpstreamUnavailable(reason))
        if self.on_lost is not None:
            self.on_lost(reason)

    # -- use --------------------------------------------------------------------
    def _write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    async def request(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        """One request of our own on a logged-in connection (before :meth:`attach`)."""
        self._ids += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._calls.append((self._ids, api_key, version, future))
        self._write(encode_request(api_key, version, self._ids, _CLIENT_ID, body))
        return cast(dict[str, Any], await future)

    @property
    def session_lifetime_ms(self) -> int:
        """KIP-368: how long the broker keeps our login (0: for ever)."""
        return self._login.session_lifetime_ms if self._login is not None else 0

    async def relogin(self, login: UpstreamLogin) -> None:
        """KIP-368 re-authentication, in band, with nothing in flight: the
        sink gets no bytes until the new login is done."""
        sink, self._sink = self._sink, None
        self._login = login
        self.ready = asyncio.get_running_loop().create_future()
        self._write(login.start())
        await self.ready
        if sink is not None:
            self.attach(sink)

    def attach(self, sink: Sink) -> None:
        """From now on every byte from the broker goes to ``sink``."""
        self._sink = sink
        rest = self._frames.take()
        if rest:
            sink(rest)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


def upstream_secret(client: ClientConfig) -> SaslCredentials | None:
    """The ``upstream.`` login, or ``None`` for PLAINTEXT and SSL (no SASL)."""
    if not client.uses_sasl:
        return None
    mechanism, username, password = client.require_credentials()
    return SaslCredentials(mechanism, username, password, client.token_auth)


@dataclass(frozen=True)
class UpstreamLink:
    """How the front door reaches the cluster: its login (``None``: no SASL),
    its TLS (``None``: plain TCP) and how long one attempt may take."""

    secret: SaslCredentials | None
    ssl_context: ssl.SSLContext | None = field(repr=False)
    timeout: float

    @classmethod
    def of(cls, client: ClientConfig, timeout: float) -> UpstreamLink:
        return cls(upstream_secret(client), client.ssl_context(), timeout)


async def open_upstream(
    link: UpstreamLink, addresses: Sequence[tuple[str, int]]
) -> UpstreamProtocol:
    """A logged-in connection to the first of ``addresses`` that answers.

    Raises:
        UpstreamUnavailable: none could be reached (each one's reason named);
            ``UpstreamUntrusted`` when a broker's certificate was not trusted.
        UpstreamLoginError: the cluster refused the login.
    """
    loop = asyncio.get_running_loop()
    problems = []
    untrusted = False
    for host, port in addresses:
        protocol = UpstreamProtocol(UpstreamLogin(link.secret) if link.secret else None, loop)
        try:
            async with asyncio.timeout(link.timeout):
                await loop.create_connection(
                    lambda p=protocol: p,
                    host,
                    port,
                    ssl=link.ssl_context,
                    server_hostname=host if link.ssl_context is not None else None,
                )
                await protocol.ready
        except (UpstreamLoginError, asyncio.CancelledError):
            # Cancelled: the client left while we connected or logged in, and
            # this connection is nobody's; the broker would keep it for
            # connections.max.idle.ms (10 minutes).
            protocol.close()
            raise
        except (OSError, TimeoutError, UpstreamUnavailable, ssl.SSLError) as exc:
            protocol.close()
            untrusted = untrusted or isinstance(exc, ssl.SSLCertVerificationError)
            why = f"no answer within {link.timeout:g} s" if isinstance(exc, TimeoutError) else exc
            problems.append(f"{format_host_port(host, port)}: {why}")
            continue
        return protocol
    error = UpstreamUntrusted if untrusted else UpstreamUnavailable
    raise error(CANNOT_REACH + "; ".join(problems))


class ClusterView:
    """What the front door learns of the cluster at start.

    Attributes:
        api_keys: the cluster's ApiVersions ``api_keys`` entries.
        brokers: node id to ``(host, port)``, from Metadata.
        operations: what the ``upstream.`` login holds on the Cluster, when asked
            and the cluster has DescribeCluster.
    """

    def __init__(
        self,
        api_keys: list[dict[str, int]],
        brokers: dict[int, tuple[str, int]],
        operations: ClusterOperations | None = None,
    ):
        self.api_keys = api_keys
        self.brokers = brokers
        self.operations = operations


async def cluster_operations(
    upstream: UpstreamProtocol, version: int | None, timeout: float
) -> ClusterOperations | None:
    """What the session of ``upstream`` holds on the Cluster (KIP-430's bit field
    of DescribeCluster); ``None`` when the cluster has no DescribeCluster
    (``version`` ``None``: Kafka before 2.8).

    Raises:
        UpstreamUnavailable: no answer in time, or an error instead of one.
    """
    if version is None:
        return None
    try:
        async with asyncio.timeout(timeout):
            request = describe_cluster_request()
            body = await upstream.request(ApiKey.DESCRIBE_CLUSTER, version, request)
    except TimeoutError:
        raise UpstreamUnavailable(f"DescribeCluster: no answer within {timeout:g} s") from None
    if body["error_code"] != ErrorCode.NONE:
        raise UpstreamUnavailable(f"DescribeCluster failed with error {body['error_code']}")
    try:
        return ClusterOperations.from_bits(body["cluster_authorized_operations"])
    except ValueError as exc:
        raise UpstreamUnavailable(f"DescribeCluster: {exc}") from None


async def look_at_cluster(
    link: UpstreamLink, addresses: Sequence[tuple[str, int]], *, ask_operations: bool = False
) -> ClusterView:
    """The cluster's API versions and brokers, through one logged-in connection;
    with ``ask_operations``, what the ``upstream.`` login holds on the Cluster too."""
    timeout = link.timeout
    upstream = await open_upstream(link, addresses)
    try:
        async with asyncio.timeout(timeout):
            versions = await upstream.request(ApiKey.API_VERSIONS, 3, client_software())
            if versions["error_code"] != ErrorCode.NONE:
                raise UpstreamUnavailable(f"ApiVersions failed with error {versions['error_code']}")
            theirs = {k["api_key"]: k["max_version"] for k in versions["api_keys"]}
            version = min(theirs.get(ApiKey.METADATA, 0), API_SPECS[ApiKey.METADATA].max_version)
            metadata = await upstream.request(
                ApiKey.METADATA,
                version,
                {
                    "topics": [],
                    "allow_auto_topic_creation": False,
                    "include_cluster_authorized_operations": False,
                    "include_topic_authorized_operations": False,
                },
            )
        operations = None
        if ask_operations:
            asked = describe_cluster_version(versions["api_keys"])
            operations = await cluster_operations(upstream, asked, timeout)
    except TimeoutError:
        raise UpstreamUnavailable(f"the cluster did not answer within {timeout:g} s") from None
    finally:
        upstream.close()
    brokers = {b["node_id"]: (b["host"], b["port"]) for b in metadata["brokers"]}
    return ClusterView(list(versions["api_keys"]), brokers, operations)
