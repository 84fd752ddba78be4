"""Why a client could not log in: what the port at ``bootstrap.servers`` is.

kafka-python and aiokafka report a closed port, a KRaft controller's port and
a listener without SCRAM as a bootstrap timeout or a SASL state error, words
that send users to their password. :func:`check_listener` asks the port
itself, with the two requests every Kafka listener answers before a login
(KIP-511 ApiVersions, then KIP-152 SaslHandshake), and names what it found.
It sends no credential.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
from collections.abc import Iterable
from typing import Any

from sasl_scram.config import format_host_port
from sasl_scram.integrations._config import ConfigSource
from sasl_scram.integrations._config import load_client_config
from sasl_scram.integrations._errors import LOGIN_FIXES
from sasl_scram.integrations._errors import Cause
from sasl_scram.integrations._errors import ListenerError
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode
from sasl_scram.kafka import FrameBuffer
from sasl_scram.kafka import KafkaCodecError
from sasl_scram.kafka import decode_response
from sasl_scram.kafka import encode_request

__all__ = ["all_refused", "check_holds_topics", "check_listener", "listener_problem"]

# Produce is served by brokers only; a KRaft controller's listener answers
# ApiVersions with the quorum and registration APIs instead
# (ApiMessageType.ListenerType.CONTROLLER in Kafka).
_PRODUCE = 0
_CONTROLLER_APIS = {52: "Vote", 62: "BrokerRegistration", 63: "BrokerHeartbeat"}
_MAX_FRAME = 1 << 20


class _Closed(Exception):
    """The peer closed the connection or answered what is not Kafka."""


def check_listener(
    config: ConfigSource, *, bootstrap_servers: str | None = None, timeout: float = 5.0
) -> None:
    """Check that ``bootstrap.servers`` has a broker's SASL listener with the mechanism.

    Each address is tried in turn, as clients do; the check passes at the
    first one that offers ``sasl.mechanism``. Without SASL it checks nothing.

    Raises:
        ClientConfigError: A property is missing or invalid.
        ListenerError: No address does: its message says, for each address, that
            the connection was refused, that it is a KRaft controller, not a
            SASL listener, or which mechanisms it offers instead.
    """
    cfg = load_client_config(config, require_jaas=False)
    mechanism = cfg.mechanism_name
    if mechanism is None:
        return
    addresses = cfg.bootstrap_addresses(bootstrap_servers)
    problem = listener_problem(addresses, mechanism, cfg.ssl_context(), timeout)
    if problem is not None:
        raise ListenerError(problem)


def listener_problem(
    addresses: Iterable[tuple[str, int]],
    mechanism: str,
    context: ssl.SSLContext | None,
    timeout: float,
) -> str | None:
    """What :func:`check_listener` says of ``addresses``, ``None`` when one passes.

    For the integrations, which have the client's settings rather than a
    ``ClientConfig``: ``context`` is the TLS context, ``None`` without TLS.
    """
    problems = []
    for host, port in addresses:
        problem = _probe(host, port, mechanism, context, timeout)
        if problem is None:
            return None
        problems.append(problem)
    return "; ".join(problems)


def all_refused(addresses: Iterable[tuple[str, int]], timeout: float) -> str | None:
    """What :func:`check_listener` says when every address refuses a connection;
    ``None`` once one does not (it accepts, stays silent, or fails otherwise).

    Only a TCP connection, closed at once: nothing a broker logs or counts as
    a failed login.
    """
    problems = []
    for host, port in addresses:
        try:
            socket.create_connection((host, port), timeout=timeout).close()
        except ConnectionRefusedError as exc:
            problems.append(_unconnected(format_host_port(host, port), exc))
            continue
        except OSError:
            pass
        return None
    return "; ".join(problems) or None


def _unconnected(address: str, exc: OSError) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return LOGIN_FIXES[Cause.CONNECTION_REFUSED].format(address=address)
    reason = "no answer" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
    return LOGIN_FIXES[Cause.UNREACHABLE].format(address=address, reason=reason)


def _probe(
    host: str, port: int, mechanism: str, context: ssl.SSLContext | None, timeout: float
) -> str | None:
    address = format_host_port(host, port)
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError as exc:
        return _unconnected(address, exc)
    try:
        return _ask(sock, host, address, mechanism, context)
    except (_Closed, OSError, KafkaCodecError):
        return LOGIN_FIXES[Cause.NOT_KAFKA].format(address=address)
    finally:
        with contextlib.suppress(OSError):
            sock.close()


def _ask(
    sock: socket.socket,
    host: str,
    address: str,
    mechanism: str,
    context: ssl.SSLContext | None,
) -> str | None:
    if context is not None:
        try:
            sock = context.wrap_socket(sock, server_hostname=host)
        except ssl.SSLError as exc:
            return LOGIN_FIXES[Cause.TLS_FAILED].format(address=address, reason=exc.reason)
    frames = FrameBuffer(_MAX_FRAME)
    # ApiVersions v0 and SaslHandshake v1: what every Kafka since 1.0 answers.
    versions = _roundtrip(sock, frames, ApiKey.API_VERSIONS, 0, {})
    keys = {k["api_key"] for k in versions["api_keys"]}
    if _PRODUCE not in keys and keys & _CONTROLLER_APIS.keys():
        apis = ", ".join(name for key, name in _CONTROLLER_APIS.items() if key in keys)
        return LOGIN_FIXES[Cause.CONTROLLER].format(address=address, apis=apis)
    handshake = _roundtrip(sock, frames, ApiKey.SASL_HANDSHAKE, 1, {"mechanism": mechanism})
    if handshake["error_code"] == ErrorCode.NONE:
        return None
    if handshake["error_code"] == ErrorCode.UNSUPPORTED_SASL_MECHANISM:
        offered = ", ".join(handshake["mechanisms"]) or "no mechanism"
        return LOGIN_FIXES[Cause.MECHANISM_NOT_ENABLED].format(
            address=address, mechanism=mechanism, offered=offered
        )
    # ILLEGAL_SASL_STATE: Kafka's answer on a PLAINTEXT or SSL listener.
    return LOGIN_FIXES[Cause.NOT_SASL_LISTENER].format(address=address)


def _roundtrip(
    sock: socket.socket, frames: FrameBuffer, api_key: ApiKey, version: int, body: dict[str, Any]
) -> dict[str, Any]:
    correlation_id = int(api_key)
    sock.sendall(encode_request(api_key, version, correlation_id, "kafka-scram", body))
    while (payload := frames.next_frame()) is None:
        data = sock.recv(65536)
        if not data:
            raise _Closed
        frames.feed(data)
    got, response = decode_response(api_key, version, payload)
    if got != correlation_id:
        raise _Closed
    return response


# Fetch, with Produce, is what a broker serves and a kafka-scram serve
# without a front door does not advertise.
_FETCH = 1


def check_holds_topics(
    config: ConfigSource, *, bootstrap_servers: str | None = None, timeout: float = 5.0
) -> None:
    """Check that ``bootstrap.servers`` is not a kafka-scram serve without a front door.

    Such a serve logs users in and answers the delegation-token RPCs, so a
    client that needs topics (a Spark query) fails later and far from the
    cause. Its ApiVersions, asked before any login, lists neither Produce nor
    Fetch; a broker's, and a front door's, list both. The first address that
    answers decides, as a client learns the cluster from the first that
    answers; an address that does not is left to the client's own error.

    Raises:
        ClientConfigError: A property is missing or invalid.
        ListenerError: That address is a serve without a front door.
    """
    cfg = load_client_config(config, require_jaas=False)
    context = cfg.ssl_context()
    for host, port in cfg.bootstrap_addresses(bootstrap_servers):
        keys = _api_keys(host, port, context, timeout)
        if keys is None:
            continue
        if keys & {_PRODUCE, _FETCH} or keys & _CONTROLLER_APIS.keys():
            return  # a broker (or a controller, which check_listener names)
        address = format_host_port(host, port)
        raise ListenerError(LOGIN_FIXES[Cause.NO_FRONT_DOOR].format(address=address))


def _api_keys(
    host: str, port: int, context: ssl.SSLContext | None, timeout: float
) -> set[int] | None:
    """The API keys the port advertises, ``None`` if it answers no ApiVersions."""
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError:
        return None
    try:
        if context is not None:
            sock = context.wrap_socket(sock, server_hostname=host)
        versions = _roundtrip(sock, FrameBuffer(_MAX_FRAME), ApiKey.API_VERSIONS, 0, {})
    except (_Closed, OSError, KafkaCodecError):
        return None
    finally:
        sock.close()
    return {k["api_key"] for k in versions["api_keys"]}
