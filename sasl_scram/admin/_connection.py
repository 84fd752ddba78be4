"""A blocking Kafka connection that authenticates with our SCRAM client.

Used by our own tools (``kafka-scram configs --bootstrap-server``, the
delegation-token client) to speak to any Kafka 3.x/4.x broker or to our
endpoint: ApiVersions, SaslHandshake v1 pipelined with the first
SaslAuthenticate, the second SaslAuthenticate, then requests at the highest
version both sides support.
"""

from __future__ import annotations

import contextlib
import itertools
import socket
import ssl
from typing import Any

from sasl_scram._client import ScramClient
from sasl_scram._errors import ScramError
from sasl_scram.config import ClientConfig
from sasl_scram.config import SaslCredentials
from sasl_scram.config import bootstrap_servers
from sasl_scram.config import format_host_port
from sasl_scram.kafka import API_SPECS
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode
from sasl_scram.kafka import FrameBuffer
from sasl_scram.kafka import KafkaCodecError
from sasl_scram.kafka import client_software
from sasl_scram.kafka import decode_response
from sasl_scram.kafka import encode_request

__all__ = ["KafkaConnection", "KafkaConnectionError", "SaslCredentials"]

_CLIENT_ID = "kafka-scram"
_MAX_RESPONSE = 104857600


class KafkaConnectionError(ScramError):
    """The broker could not be reached, refused us, or answered nonsense.

    Attributes:
        error_code: The Kafka error code when the broker sent one.
    """

    def __init__(self, message: str, error_code: int | None = None) -> None:
        super().__init__(message)
        self.error_code = error_code

    @property
    def kafka_error(self) -> ErrorCode | None:
        """The broker's error as one of Kafka's codes; None when it sent none, or
        one this table does not know (the tools then print the message alone)."""
        if self.error_code is None:
            return None
        try:
            return ErrorCode(self.error_code)
        except ValueError:
            return None


def _split_bootstrap(bootstrap: str) -> list[tuple[str, int]]:
    try:
        return bootstrap_servers(bootstrap)
    except ValueError as exc:
        raise KafkaConnectionError(f"bootstrap servers: {exc}") from None


class KafkaConnection:
    """One authenticated connection.

    Args:
        bootstrap: ``host:port[,host:port...]``; the first reachable one is used.
        credentials: SCRAM login.
        ssl_context: For SASL_SSL; ``None`` means SASL_PLAINTEXT.
        timeout: Socket timeout in seconds.
    """

    def __init__(
        self,
        bootstrap: str,
        credentials: SaslCredentials,
        *,
        ssl_context: ssl.SSLContext | None = None,
        timeout: float = 30.0,
    ) -> None:
        self._credentials = credentials
        self._ids = itertools.count(1)
        self._frames = FrameBuffer(_MAX_RESPONSE)
        self._versions: dict[int, tuple[int, int]] = {}
        self._timeout = timeout
        self._address = bootstrap  # then the one server connected to
        self._sock = self._connect(bootstrap, ssl_context, timeout)
        try:
            self._negotiate()
            self._authenticate()
        except BaseException:
            self.close()
            raise

    def _connect(
        self, bootstrap: str, ssl_context: ssl.SSLContext | None, timeout: float
    ) -> socket.socket:
        errors = []
        for host, port in _split_bootstrap(bootstrap):
            try:
                sock = socket.create_connection((host, port), timeout=timeout)
            except OSError as exc:
                errors.append(f"{format_host_port(host, port)}: {exc.strerror or exc}")
                continue
            # Named again if the peer turns out not to be Kafka.
            self._address = format_host_port(host, port)
            if ssl_context is not None:
                try:
                    sock = ssl_context.wrap_socket(sock, server_hostname=host)
                except (ssl.SSLError, OSError) as exc:
                    sock.close()
                    raise KafkaConnectionError(
                        f"TLS handshake with {format_host_port(host, port)} failed: {exc}"
                    ) from None
            return sock
        raise KafkaConnectionError("cannot connect to " + "; ".join(errors))

    @classmethod
    def from_config(
        cls, config: ClientConfig, bootstrap_servers: str | None = None, timeout: float = 30.0
    ) -> KafkaConnection:
        """Log in with a client configuration (``client.properties`` keys).

        Args:
            config: Supplies the SCRAM login, ``security.protocol`` and ``ssl.*``.
            bootstrap_servers: Overrides ``bootstrap.servers`` (a tool's
                ``--bootstrap-server``); checked as it is.
            timeout: Socket timeout in seconds.

        Raises:
            ClientConfigError: ``bootstrap.servers`` (or the override) is empty or
                not ``host:port`` entries, or the configuration has no SCRAM login.
            KafkaConnectionError: No broker could be reached or the login failed.
        """
        bootstrap = ",".join(config.bootstrap_list(bootstrap_servers or None))
        mechanism, username, password = config.require_credentials()
        return cls(
            bootstrap,
            SaslCredentials(mechanism, username, password, config.token_auth),
            ssl_context=config.ssl_context(),
            timeout=timeout,
        )

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()

    def __enter__(self) -> KafkaConnection:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- transport --------------------------------------------------------------
    def _roundtrip(self, api_key: int, version: int, body: dict[str, Any]) -> dict[str, Any]:
        correlation_id, data = self._encode(api_key, version, body)
        self._send(data)
        return self._receive(api_key, version, correlation_id)

    def _encode(self, api_key: int, version: int, body: dict[str, Any]) -> tuple[int, bytes]:
        correlation_id = next(self._ids)
        return correlation_id, encode_request(api_key, version, correlation_id, _CLIENT_ID, body)

    def _send(self, data: bytes) -> None:
        try:
            self._sock.sendall(data)
        except OSError as exc:
            raise KafkaConnectionError(f"connection failed: {exc}") from None

    def _receive(self, api_key: int, version: int, correlation_id: int) -> dict[str, Any]:
        try:
            got, response = decode_response(api_key, version, self._read_frame())
        except KafkaCodecError as exc:
            raise KafkaConnectionError(f"malformed response: {exc}") from None
        if got != correlation_id:
            raise KafkaConnectionError(f"correlation id {got} does not match {correlation_id}")
        return response

    def _read_frame(self) -> bytes:
        """The next response payload; the socket's time-out and errors as
        ``KafkaConnectionError`` (a frame over the limit stays a codec error)."""
        try:
            return self._next_frame()
        except TimeoutError:
            raise KafkaConnectionError(f"no answer within {self._timeout:g} s") from None
        except OSError as exc:
            raise KafkaConnectionError(f"connection failed: {exc}") from None

    def _next_frame(self) -> bytes:
        while True:
            payload = self._frames.next_frame()
            if payload is not None:
                return payload
            data = self._sock.recv(65536)
            if not data:
                raise KafkaConnectionError("the broker closed the connection")
            self._frames.feed(data)

    # -- session set-up -----------------------------------------------------------
    def _negotiate(self) -> None:
        spec = API_SPECS[ApiKey.API_VERSIONS]
        version = spec.max_version
        try:
            response = self._roundtrip(ApiKey.API_VERSIONS, version, client_software())
        except KafkaConnectionError as exc:
            # The first request: a peer that cannot answer it is not a Kafka
            # listener, or one that expects TLS (or not) where we did otherwise.
            raise KafkaConnectionError(
                f"{exc}; check that {self._address} is a Kafka listener and that "
                "security.protocol matches it (SASL_SSL for a TLS listener)"
            ) from None
        if response["error_code"] == ErrorCode.UNSUPPORTED_VERSION:
            theirs = {k["api_key"]: k["max_version"] for k in response["api_keys"]}
            version = min(theirs.get(ApiKey.API_VERSIONS, 0), version)
            response = self._roundtrip(ApiKey.API_VERSIONS, version, client_software())
        if response["error_code"] != ErrorCode.NONE:
            raise KafkaConnectionError("ApiVersions failed", response["error_code"])
        self._versions = {
            k["api_key"]: (k["min_version"], k["max_version"]) for k in response["api_keys"]
        }

    def version_for(self, api_key: int) -> int:
        """The highest version both we and the broker support."""
        spec = API_SPECS[api_key]
        theirs = self._versions.get(api_key)
        if theirs is None:
            raise KafkaConnectionError(f"the broker does not support API key {api_key}")
        low, high = max(spec.min_version, theirs[0]), min(spec.max_version, theirs[1])
        if low > high:
            raise KafkaConnectionError(f"no common version for API key {api_key}")
        return high

    def _authenticate(self) -> None:
        creds = self._credentials
        client = ScramClient(
            creds.mechanism, creds.username, creds.password, token_auth=creds.token_auth
        )
        handshake_version = min(1, self.version_for(ApiKey.SASL_HANDSHAKE))
        version = self.version_for(ApiKey.SASL_AUTHENTICATE)
        token: bytes | None = client.step(b"")
        assert token is not None
        # SaslHandshake and the client-first SaslAuthenticate leave together: one
        # round trip less per login. Kafka's broker reads one frame per step
        # (SaslServerAuthenticator) and re-polls a channel with bytes still
        # waiting (Selector.keysWithBufferedRead), so the second frame simply
        # waits its turn; a refused mechanism closes the connection unread.
        handshake_id, handshake_frame = self._encode(
            ApiKey.SASL_HANDSHAKE, handshake_version, {"mechanism": creds.mechanism.mechanism_name}
        )
        auth_id, auth_frame = self._encode(ApiKey.SASL_AUTHENTICATE, version, {"auth_bytes": token})
        self._send(handshake_frame + auth_frame)
        handshake = self._receive(ApiKey.SASL_HANDSHAKE, handshake_version, handshake_id)
        if handshake["error_code"] != ErrorCode.NONE:
            raise KafkaConnectionError(
                f"the broker does not enable {creds.mechanism.mechanism_name}; it offers "
                f"{', '.join(handshake['mechanisms']) or 'nothing'}",
                handshake["error_code"],
            )
        self.session_lifetime_ms = 0
        response = self._receive(ApiKey.SASL_AUTHENTICATE, version, auth_id)
        while True:
            if response["error_code"] != ErrorCode.NONE:
                raise KafkaConnectionError(
                    response["error_message"] or "SASL authentication failed",
                    response["error_code"],
                )
            token = client.step(response["auth_bytes"])
            self.session_lifetime_ms = response.get("session_lifetime_ms", 0)
            if token is None:
                break
            response = self._roundtrip(ApiKey.SASL_AUTHENTICATE, version, {"auth_bytes": token})
        if not client.complete:
            raise KafkaConnectionError("SCRAM exchange did not complete")

    # -- requests -------------------------------------------------------------------
    @property
    def broker_versions(self) -> dict[int, tuple[int, int]]:
        """The broker's ``(min, max)`` version per API key, from its ApiVersions answer."""
        return dict(self._versions)

    def raw_request(self, request_frame: bytes) -> bytes:
        """Send one framed request as it is; return the response payload as it came
        (correlation id on, size off), for APIs outside our schema table and for
        callers that need the exact bytes (a proxy's tests)."""
        self._send(request_frame)
        return self._read_frame()

    def request(
        self, api_key: int, body: dict[str, Any], version: int | None = None
    ) -> dict[str, Any]:
        """Send one request at the best common version and return the response body."""
        return self._roundtrip(
            api_key, self.version_for(api_key) if version is None else version, body
        )
