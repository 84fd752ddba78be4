"""One client connection of the endpoint, as a sans-IO state machine.

It enforces Kafka's per-connection SASL rules (``SaslServerAuthenticator``,
docs/kafka-facts.md §9.4): only ApiVersions and SaslHandshake before the
handshake, then only SaslAuthenticate (or raw tokens after a v0 handshake),
then everything; KIP-368 session lifetime and re-authentication, at most one
re-authentication start per second (``KafkaChannel``); error 58 with Kafka's
generic text on a failed authentication, then close. Authenticated users that
are not super users get smaller frame and array caps, so that one request
cannot make the server allocate much.

Bytes go in through :meth:`ServerConnection.receive`; what the adapter must do
comes out as :class:`Output` values. The credential lookup and API handlers
are steps the adapter answers, so no I/O happens here.
"""

from __future__ import annotations

import enum
import logging
import struct
import time
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import TYPE_CHECKING
from typing import Any

from sasl_scram._errors import LEGACY_LIBRDKAFKA_NONCE
from sasl_scram._errors import AuthenticationFailed
from sasl_scram._errors import ScramStateError
from sasl_scram._mechanism import ScramMechanism
from sasl_scram._server import CredentialRequest
from sasl_scram._server import DecoyCredentials
from sasl_scram._server import Grant
from sasl_scram._server import ScramServer
from sasl_scram._server import ScramSession
from sasl_scram.config import USER_TYPE
from sasl_scram.endpoint._config import LEGACY_NONCE_KEY
from sasl_scram.endpoint.login._error_responses import error_response
from sasl_scram.kafka import API_SPECS
from sasl_scram.kafka import SOFTWARE_PATTERN
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ApiSpec
from sasl_scram.kafka import ErrorCode
from sasl_scram.kafka import FrameBuffer
from sasl_scram.kafka import KafkaCodecError
from sasl_scram.kafka import RequestHeader
from sasl_scram.kafka import UnsupportedRequest
from sasl_scram.kafka import api_versions_unsupported_response
from sasl_scram.kafka import decode_request
from sasl_scram.kafka import encode_body
from sasl_scram.kafka import encode_response
from sasl_scram.kafka import encode_sasl_authenticate_response
from sasl_scram.kafka import frame
from sasl_scram.kafka import frame_response
from sasl_scram.kafka import message_spec

if TYPE_CHECKING:
    from sasl_scram.endpoint._config import EndpointConfig

__all__ = [
    "ApiCall",
    "Authenticated",
    "Close",
    "ConnectionSettings",
    "CredentialNeeded",
    "Output",
    "Send",
    "ServerConnection",
]

log = logging.getLogger("sasl_scram.endpoint")

# Outputs per drain before yielding to the transport's flow control. Answers
# given without a handler are small (at most a few hundred bytes), and a
# handler's answer ends a drain, so one drain writes at most about 128 KiB.
MAX_ANSWERS_PER_DRAIN = 256
# KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS, in ms.
MIN_REAUTH_INTERVAL_MS = 1000
# SaslServerAuthenticator's words for a SaslAuthenticate on an authenticated session.
_AUTHENTICATED_ALREADY = "SaslAuthenticate request received after successful authentication"
#: The serve key that lets librdkafka < 2.6.1's client-final nonce in (docs/security.md).
# What a refused librdkafka < 2.6.1 login adds to its "Failed authentication"
# line, so the operator learns the cause and the remedy; the peer only gets
# Kafka's generic text, as from Kafka 4.x.
_LEGACY_NONCE_HINT = (
    "; the client-final nonce repeats the client nonce, as librdkafka < 2.6.1 sends it "
    "(confluentinc/librdkafka#4895) and Kafka 3.7.2-3.9.x accept but Kafka 4.x refuses: "
    f"upgrade the client to librdkafka 2.6.1 or later, or set {LEGACY_NONCE_KEY}=true"
)
# A cached response's frame size and correlation id, packed in one call.
_CORRELATION = struct.Struct(">ii")
_SIZE_PREFIX = struct.Struct(">i")
# Software pairs already found valid, bounded: a peer cannot grow it past this.
_VALID_SOFTWARE: set[tuple[str | None, str | None]] = set()
_MAX_VALID_SOFTWARE = 64


class Send:
    """Write these bytes.

    Send, CredentialNeeded and Authenticated come out of every login, so they
    are plain classes with slots, built in one step: about 20 ns compiled and
    55 ns as Python, where a named tuple's ``__new__`` runs as Python code
    (85-90 ns either way) and a frozen dataclass sets each field through
    ``object.__setattr__``. Treat them as read-only values.
    """

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Send) and other.data == self.data

    def __repr__(self) -> str:
        return f"Send(<{len(self.data)} bytes>)"


@dataclass(frozen=True, slots=True)
class Close:
    """Close the connection.

    Attributes:
        reason: For the log.
        after_failed_authentication: Kafka delays this close by
            ``connection.failed.authentication.delay.ms`` (KIP-306) so the client
            reads the error first and brute force is slowed down.
        mechanism: The SASL mechanism of a failed authentication.
        username: The name (or token id) a failed authentication claimed.
    """

    reason: str
    after_failed_authentication: bool = False
    mechanism: str | None = None
    username: str | None = None
    #: Whether the failure ended a re-authentication (for the metrics).
    reauthentication: bool = False
    #: The edge took the login and the cluster refused the front door's own
    #: login for it: not the edge's verdict, so not counted in Kafka's
    #: failed-authentication-total (the front door counts it apart).
    cluster_refused: bool = False
    #: The server could not build its own answer: logged at ERROR, as Kafka's
    #: request handler logs a failure of its own, not a client's.
    server_fault: bool = False


class CredentialNeeded:
    """Answer with :meth:`ServerConnection.provide_credential`."""

    __slots__ = ("request",)

    def __init__(self, request: CredentialRequest) -> None:
        self.request = request

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CredentialNeeded) and other.request == self.request

    def __repr__(self) -> str:
        return f"CredentialNeeded({self.request!r})"


class Authenticated:
    """A login or KIP-368 re-authentication completed.

    Attributes:
        session: The session the exchange established.
        reauthentication: It was a re-authentication.
        client_supports_reauth: False after SaslAuthenticate v0 or raw tokens
            (``SaslServerAuthenticator.connectedClientSupportsReauthentication``).
        reauth_began: Monotonic time of the re-authentication's SaslHandshake,
            for ``reauthentication-latency``.
    """

    __slots__ = ("client_supports_reauth", "reauth_began", "reauthentication", "session")

    def __init__(
        self,
        session: ScramSession,
        reauthentication: bool,
        client_supports_reauth: bool = True,
        reauth_began: float = 0.0,
    ) -> None:
        self.session = session
        self.reauthentication = reauthentication
        self.client_supports_reauth = client_supports_reauth
        self.reauth_began = reauth_began

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Authenticated) and (
            other.session,
            other.reauthentication,
            other.client_supports_reauth,
            other.reauth_began,
        ) == (self.session, self.reauthentication, self.client_supports_reauth, self.reauth_began)

    def __repr__(self) -> str:
        return (
            f"Authenticated(User:{self.session.authorization_id}, "
            f"reauthentication={self.reauthentication})"
        )


@dataclass(frozen=True, slots=True)
class ApiCall:
    """An authenticated request for a handler; answer with :meth:`ServerConnection.respond`."""

    header: RequestHeader
    spec: ApiSpec
    body: dict[str, Any]
    session: ScramSession
    #: The session's principal is a super user (``super.users``), decided once
    #: per login: handlers authorize with it, and it set the request caps.
    super_user: bool = False


Output = Send | Close | CredentialNeeded | Authenticated | ApiCall


# The fields of ConnectionSettings that EndpointConfig has, by the same name.
_FROM_CONFIG = (
    "sasl_max_receive",
    "max_request",
    "max_reauth_ms",
    "user_max_request",
    "user_max_array",
    "legacy_librdkafka_nonce",
)


@dataclass(frozen=True, kw_only=True)
class ConnectionSettings:
    """What a connection needs to know about the server.

    The limits have the names of ``EndpointConfig``'s fields (and no defaults
    here: the key table is the one place for them); :meth:`from_config` copies
    them.

    Attributes:
        mechanisms: Enabled SASL mechanisms, in the order advertised.
        api_versions: ``(api_key, min, max)`` advertised in ApiVersions.
        sasl_max_receive: Frame limit until authenticated
            (``sasl.server.max.receive.size``).
        max_request: Frame limit afterwards (``socket.request.max.bytes``).
        max_reauth_ms: ``connections.max.reauth.ms``; 0 disables re-authentication.
        decoy: Decoy credentials for unknown users (shared by all connections).
        super_user_names: Authorization ids of the ``User:`` principals of
            ``super.users`` (``EndpointConfig.super_users`` holds the
            principals): they keep ``max_request`` and unbounded arrays.
        user_max_request: Frame limit for other authenticated users.
        user_max_array: The most elements one array of their requests may hold.
        min_reauth_interval_ms: Kafka's fixed second between re-authentication
            starts; only embedders that measure the exchange itself lower it.
        legacy_librdkafka_nonce: Accept librdkafka < 2.6.1's client-final
            nonce too (``scram.legacy.librdkafka.nonce.enable``, see
            :class:`~sasl_scram.ScramServer`).
    """

    mechanisms: tuple[ScramMechanism, ...]
    api_versions: tuple[tuple[int, int, int], ...]
    sasl_max_receive: int
    max_request: int
    max_reauth_ms: int
    decoy: DecoyCredentials = field(default_factory=DecoyCredentials)
    super_user_names: frozenset[str] = frozenset()
    user_max_request: int
    user_max_array: int
    min_reauth_interval_ms: int = MIN_REAUTH_INTERVAL_MS
    legacy_librdkafka_nonce: bool
    #: The front door: after the first login, stop at the frames that follow
    #: it and let the adapter take them (:meth:`ServerConnection.hand_off`);
    #: from then on it feeds only the requests the edge answers itself.
    hand_off_after_login: bool = False
    #: Responses that never change but for the correlation id (ApiVersions,
    #: SaslHandshake), per (api key, version, error): the frame's size and the
    #: bytes after the correlation id, built once per process.
    cached_responses: dict[tuple[int, int, int], tuple[int, bytes]] = field(
        default_factory=dict, compare=False, repr=False
    )

    #: The enabled mechanisms by SASL name, for SaslHandshake: a field filled
    #: once, because compiled code would run a cached_property's body each time.
    by_name: dict[str, ScramMechanism] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", {m.mechanism_name: m for m in self.mechanisms})

    @classmethod
    def from_config(
        cls,
        config: EndpointConfig,
        api_versions: tuple[tuple[int, int, int], ...],
        decoy: DecoyCredentials,
    ) -> ConnectionSettings:
        """The settings of ``serve``'s connections: the limits by their shared names."""
        return cls(
            mechanisms=config.mechanisms,
            api_versions=api_versions,
            decoy=decoy,
            super_user_names=frozenset(
                p.name for p in config.super_users if p.principal_type == USER_TYPE
            ),
            **{name: getattr(config, name) for name in _FROM_CONFIG},
        )

    def scram_server(self, mechanism: ScramMechanism) -> ScramServer:
        """The SCRAM exchange of one SaslHandshake."""
        return ScramServer(
            mechanism, decoy=self.decoy, legacy_librdkafka_nonce=self.legacy_librdkafka_nonce
        )


def _log_reason(message: str, exc: AuthenticationFailed) -> str:
    """A failed login's reason for the log line; the peer got ``message`` alone."""
    if exc.cause == LEGACY_LIBRDKAFKA_NONCE:
        return message + _LEGACY_NONCE_HINT
    return message


class _State(enum.Enum):
    HANDSHAKE_OR_VERSIONS = "HANDSHAKE_OR_VERSIONS_REQUEST"
    HANDSHAKE = "HANDSHAKE_REQUEST"
    AUTHENTICATE = "AUTHENTICATE"
    RAW_AUTHENTICATE = "RAW_AUTHENTICATE"
    AUTHENTICATED = "COMPLETE"
    CLOSED = "CLOSED"


class ServerConnection:
    """The protocol state of one accepted connection.

    Args:
        settings: Shared server settings.
        clock_ms: Returns the current time in ms (injected for KIP-368 tests).
        security_protocol: The listener's protocol, for handlers that care.
        monotonic: Seconds, for the re-authentication latency metric.
    """

    def __init__(
        self,
        settings: ConnectionSettings,
        clock_ms: Callable[[], int],
        security_protocol: str = "SASL_PLAINTEXT",
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._settings = settings
        self._clock_ms = clock_ms
        self.security_protocol = security_protocol
        self._frames = FrameBuffer(settings.sasl_max_receive)
        self._state = _State.HANDSHAKE_OR_VERSIONS
        self._mechanism: ScramMechanism | None = None
        self._scram: ScramServer | None = None
        self._auth_header: RequestHeader | None = None
        self._auth_version = 0
        self._session: ScramSession | None = None
        self._session_expiry_ms: int | None = None
        self._reauth = False
        self._reauth_started_ms: int | None = None
        self._max_array: int | None = settings.user_max_array
        self._super_user = False
        self._waiting: CredentialNeeded | ApiCall | None = None
        #: The last drain stopped at its output budget: call :meth:`drain` again.
        self.backlog = False
        self._monotonic = monotonic
        self._reauth_began = 0.0
        self._handing_off = False  # a front door's first login: see hand_off

    # -- introspection ------------------------------------------------------
    @property
    def session(self) -> ScramSession | None:
        return self._session

    @property
    def authenticated(self) -> bool:
        return self._state is _State.AUTHENTICATED

    @property
    def closed(self) -> bool:
        return self._state is _State.CLOSED

    @property
    def waiting(self) -> bool:
        """True while an answer to CredentialNeeded or ApiCall is outstanding."""
        return self._waiting is not None

    def buffered(self) -> int:
        return len(self._frames)

    def completes_frame(self, n: int) -> bool:
        """Whether ``n`` more bytes may complete a frame (and so need decoding).
        While fewer than 4 bytes are buffered a frame's size is unknown: yes."""
        frames = self._frames
        return len(frames) < 4 or n >= frames.missing()

    def hand_off(self) -> bytes:
        """A front door takes the bytes after the first login; the edge's requests return."""
        self._handing_off = False
        return self._frames.take()

    def session_expired(self) -> bool:
        """KIP-368: the session's lifetime has passed (it may only re-authenticate)."""
        expiry = self._session_expiry_ms
        return expiry is not None and self._clock_ms() >= expiry

    # -- input --------------------------------------------------------------
    def receive(self, data: bytes) -> list[Output]:
        """Feed bytes from the socket; returns what to do next."""
        if self._state is _State.CLOSED:
            return []
        if self._waiting is None:
            # The usual case: one whole request in one read, nothing buffered.
            payload = self._frames.whole(data)
            if payload is not None:
                self.backlog = False
                return self._handle_frame(payload)
        self._frames.feed(data)
        return self._drain()

    def drain(self) -> list[Output]:
        """Answer frames already buffered, at most :data:`MAX_ANSWERS_PER_DRAIN` per
        call, so the caller can stop while the peer does not read.
        :attr:`backlog` says whether frames may be left."""
        return self._drain()

    def _drain(self) -> list[Output]:
        out: list[Output] = []
        self.backlog = False
        while self._waiting is None and self._state is not _State.CLOSED and not self._handing_off:
            if len(out) >= MAX_ANSWERS_PER_DRAIN:
                self.backlog = True
                break
            try:
                payload = self._frames.next_frame()
            except KafkaCodecError as exc:
                out.append(self._close(f"bad frame: {exc}"))
                break
            if payload is None:
                break
            out.extend(self._handle_frame(payload))
        return out

    def _close(self, reason: str, failed_authentication: bool = False) -> Close:
        self._state = _State.CLOSED
        self._waiting = None
        self._scram = None
        return Close(reason, failed_authentication)

    def _handle_frame(self, payload: bytes) -> list[Output]:
        if self._state is _State.RAW_AUTHENTICATE:
            return self._raw_token(payload)
        try:
            header, spec, body = decode_request(payload, self._max_array)
        except UnsupportedRequest as exc:
            bad: RequestHeader | None = exc.header
            if bad is not None and bad.api_key == ApiKey.API_VERSIONS and self._versions_allowed():
                # KIP-511: answer a too-new ApiVersions with v0 + error 35 and keep the state.
                return [Send(api_versions_unsupported_response(bad.correlation_id))]
            # Kafka closes the connection without a response (InvalidRequestException).
            return [self._close(str(exc))]
        except KafkaCodecError as exc:
            return [self._close(f"malformed request: {exc}")]
        key = header.api_key
        if self._state is _State.AUTHENTICATED:
            return self._authenticated_request(header, spec, body)
        if key == ApiKey.API_VERSIONS and self._versions_allowed():
            return [self._api_versions(header, body)]
        if key == ApiKey.SASL_HANDSHAKE and self._state in (
            _State.HANDSHAKE_OR_VERSIONS,
            _State.HANDSHAKE,
        ):
            return self._handshake(header, body)
        if key == ApiKey.SASL_AUTHENTICATE and self._state is _State.AUTHENTICATE:
            return self._authenticate(header, body["auth_bytes"])
        name = ApiKey(key).name  # SaslServerAuthenticator names its ApiKeys constant
        if self._state is _State.AUTHENTICATE:
            # After a v1 handshake: the request's own error response, then close.
            reason = f"Unexpected Kafka request of type {name} during SASL authentication."
            return self._illegal_state(header, spec, reason, body)
        return [self._close(f"Unexpected Kafka request of type {name} during SASL handshake.")]

    def _versions_allowed(self) -> bool:
        return self._state in (_State.HANDSHAKE_OR_VERSIONS, _State.AUTHENTICATED)

    # -- ApiVersions ----------------------------------------------------------
    def _api_versions(self, header: RequestHeader, body: dict[str, Any]) -> Send:
        error = ErrorCode.NONE
        if header.api_version >= 3 and not _valid_software(
            body["client_software_name"], body["client_software_version"]
        ):
            error = ErrorCode.INVALID_REQUEST
        if error == ErrorCode.NONE and self._state is _State.HANDSHAKE_OR_VERSIONS:
            # Kafka: once ApiVersions succeeded, the next request must be SaslHandshake.
            self._state = _State.HANDSHAKE
        return _cached_answer(self._settings, header, error, _api_versions_body)

    # -- SaslHandshake ----------------------------------------------------------
    def _handshake(self, header: RequestHeader, body: dict[str, Any]) -> list[Output]:
        requested = body["mechanism"]
        mechanism = self._settings.by_name.get(requested)
        if mechanism is not None and self._reauth and mechanism is not self._mechanism:
            # Re-authentication must keep the mechanism (SaslServerAuthenticator).
            mechanism = None
        if mechanism is None:
            response = {
                "error_code": ErrorCode.UNSUPPORTED_SASL_MECHANISM,
                "mechanisms": list(self._settings.by_name),
            }
            data = encode_response(
                header.api_key, header.api_version, header.correlation_id, response
            )
            return [Send(data), self._close(f"unsupported SASL mechanism {requested!r}")]
        self._mechanism = mechanism
        self._scram = self._settings.scram_server(mechanism)
        self._state = _State.RAW_AUTHENTICATE if header.api_version == 0 else _State.AUTHENTICATE
        self._auth_header = None
        self._auth_version = 0
        return [_cached_answer(self._settings, header, ErrorCode.NONE, _handshake_body)]

    # -- SaslAuthenticate -------------------------------------------------------
    def _authenticate(self, header: RequestHeader, token: bytes) -> list[Output]:
        self._auth_header = header
        self._auth_version = header.api_version
        return self._scram_step(token)

    def _raw_token(self, payload: bytes) -> list[Output]:
        self._auth_header = None
        return self._scram_step(payload)

    def _scram_step(self, token: bytes) -> list[Output]:
        scram = self._scram
        assert scram is not None
        try:
            if scram.expects_client_first:
                request = scram.receive_client_first(token)
                self._waiting = CredentialNeeded(request)
                return [self._waiting]
            final = scram.receive_client_final(token)
        except AuthenticationFailed as exc:
            return self._auth_failed(exc)
        except ScramStateError as exc:
            return [self._close(f"SASL state error: {exc}")]
        return self._auth_succeeded(final)

    def provide_credential(self, grant: Grant | None) -> list[Output]:
        """Answer a :class:`CredentialNeeded`; ``None`` for an unknown user or token."""
        if not isinstance(self._waiting, CredentialNeeded) or self._scram is None:
            raise ScramStateError("no credential request is outstanding")
        self._waiting = None
        server_first = self._scram.provide(grant)
        out: list[Output] = [
            Send(_auth_reply(self._auth_header, server_first, ErrorCode.NONE, None, 0))
        ]
        return self._then_drain(out)

    def _then_drain(self, out: list[Output]) -> list[Output]:
        """``out``, then the answers to frames that came in meanwhile (usually none)."""
        if len(self._frames):
            out.extend(self._drain())
        else:
            self.backlog = False
        return out

    def _auth_failed(self, exc: AuthenticationFailed, user: str | None = None) -> list[Output]:
        """Refuse the login; ``user``: the claimed name once the exchange is over."""
        mech = self._mechanism.mechanism_name if self._mechanism else "?"
        phase = "re-authentication" if self._reauth else "authentication"
        # Kafka sends its generic text for every SaslException; only the authzid
        # mismatch (a SaslAuthenticationException) carries its own message.
        message = exc.kafka_error_message or (
            f"Authentication failed during {phase} due to invalid credentials "
            f"with SASL mechanism {mech}"
        )
        out: list[Output] = []
        if self._auth_header is not None:
            out.append(
                Send(
                    _auth_reply(
                        self._auth_header, b"", ErrorCode.SASL_AUTHENTICATION_FAILED, message, 0
                    )
                )
            )
        user = self._scram.requested_username if self._scram is not None else user
        close = self._close(message, failed_authentication=True)
        out.append(Close(_log_reason(close.reason, exc), True, mech, user, self._reauth))
        return out

    def _auth_succeeded(self, server_final: bytes) -> list[Output]:
        assert self._scram is not None
        session = self._scram.session
        self._scram = None
        changed = _principal_change(self._session, session) if self._reauth else None
        if changed is not None:
            return self._auth_failed(changed, session.username)
        now = self._clock_ms()
        reauth_ms = self._settings.max_reauth_ms
        lifetime = session.session_lifetime_ms(now, reauth_ms)
        # v0 clients cannot re-authenticate: Kafka still expires their session.
        self._session_expiry_ms = now + lifetime if lifetime > 0 else None
        if session.expiry_ms is not None and lifetime == 0:
            self._session_expiry_ms = now  # a token that expired in between
        was_reauth = self._reauth
        self._handing_off = self._settings.hand_off_after_login and not was_reauth
        self._session = session
        self._reauth = False
        self._state = _State.AUTHENTICATED
        self._super_user = session.authorization_id in self._settings.super_user_names
        self._frames.max_size, self._max_array = _limits(self._settings, self._super_user)
        send_lifetime = lifetime if self._auth_version >= 1 else 0
        out: list[Output] = [
            Send(_auth_reply(self._auth_header, server_final, ErrorCode.NONE, None, send_lifetime)),
            Authenticated(session, was_reauth, self._auth_version > 0, self._reauth_began),
        ]
        return out

    # -- authenticated requests -----------------------------------------------
    def _authenticated_request(
        self, header: RequestHeader, spec: ApiSpec, body: dict[str, Any]
    ) -> list[Output]:
        key = header.api_key
        expired = (
            self._session_expiry_ms is not None and self._clock_ms() >= self._session_expiry_ms
        )
        if key == ApiKey.SASL_HANDSHAKE:
            if self._session_expiry_ms is None:
                # No re-authentication without an expiry: KafkaApis answers 34, session kept.
                return [_handshake_refused(header)]
            if header.api_version == 0:
                # KIP-368 re-authenticates through SaslAuthenticate frames; after a v0
                # handshake the tokens would come unframed, among the requests.
                return self._illegal_state(header, spec, _REAUTH_NEEDS_V1, body)
            now = self._clock_ms()
            started = self._reauth_started_ms
            if started is not None and now - started < self._settings.min_reauth_interval_ms:
                # KafkaChannel.maybeBeginServerReauthentication refuses; SocketServer
                # then closes an expired session, or KafkaApis answers the handshake
                # with 34 and no mechanisms and the session stays.
                if expired:
                    return [self._close("session expired without re-authentication")]
                return [_handshake_refused(header)]
            self._reauth_started_ms = now
            self._reauth = True
            self._reauth_began = self._monotonic()
            self._frames.max_size = self._settings.sasl_max_receive
            return self._handshake(header, body)
        if expired:
            # KIP-368: an expired session may only re-authenticate.
            return [self._close("session expired without re-authentication")]
        if key == ApiKey.API_VERSIONS:
            return [self._api_versions(header, body)]
        if key == ApiKey.SASL_AUTHENTICATE:
            # KafkaApis.handleSaslAuthenticateRequest: 34, and the connection stays.
            return [_illegal_state_answer(header, spec, _AUTHENTICATED_ALREADY, body)]
        assert self._session is not None
        self._waiting = ApiCall(header, spec, body, self._session, self._super_user)
        return [self._waiting]

    def respond(self, body: dict[str, Any]) -> list[Output]:
        """Answer the outstanding :class:`ApiCall` with its response body."""
        call = self._waiting
        if not isinstance(call, ApiCall):
            raise ScramStateError("no API call is outstanding")
        self._waiting = None
        if self._state is _State.CLOSED:
            return []
        data = _encoded_answer(call.header, body)
        if isinstance(data, str):
            return [replace(self._close(data), server_fault=True)]
        return self._then_drain([Send(data)])

    def fail_call(self, reason: str) -> list[Output]:
        """The handler for the outstanding call failed unexpectedly: close, like Kafka."""
        self._waiting = None
        return [self._close(reason)]

    def _illegal_state(
        self, header: RequestHeader, spec: ApiSpec, reason: str, request: dict[str, Any]
    ) -> list[Output]:
        return [_illegal_state_answer(header, spec, reason, request), self._close(reason)]


def _encoded_answer(header: RequestHeader, body: dict[str, Any]) -> bytes | str:
    """A handler's answer as sent, or why it cannot be (the connection then
    closes, as Kafka closes one whose response it cannot build).

    A body its handler built wrong (a value out of its type's range, a wrong
    type) can raise anything from the codec; the reason names the API, never
    the values, which may be secrets."""
    try:
        return encode_response(header.api_key, header.api_version, header.correlation_id, body)
    except Exception:
        name = message_spec(header.api_key).name
        return f"the answer to {name} v{header.api_version} could not be encoded"


def _illegal_state_answer(
    header: RequestHeader, spec: ApiSpec, reason: str, request: dict[str, Any]
) -> Send:
    """ILLEGAL_SASL_STATE in the request's own response shape."""
    body = error_response(spec, ErrorCode.ILLEGAL_SASL_STATE, reason, request)
    return Send(encode_response(header.api_key, header.api_version, header.correlation_id, body))


def _auth_reply(
    header: RequestHeader | None, token: bytes, error: int, message: str | None, lifetime: int
) -> bytes:
    """A login step's answer, framed as the login was: a raw token after a
    SaslHandshake v0 (``header`` None), else a SaslAuthenticate response."""
    if header is None:
        return frame(token)
    return encode_sasl_authenticate_response(
        header.api_version, header.correlation_id, error, message, token, lifetime
    )


def refuse_forwarded_login(conn: ServerConnection, message: str | None) -> list[Output]:
    """A front door could not log in to the cluster for a login the edge
    accepted: the client gets a failed login with ``message`` (``None``: Kafka's
    text for invalid credentials, a wrong password's answer), then the close."""
    session = conn.session
    out = conn._auth_failed(AuthenticationFailed(message), session.username if session else None)
    return [replace(o, cluster_refused=True) if isinstance(o, Close) else o for o in out]


def _principal_change(old: ScramSession | None, new: ScramSession) -> AuthenticationFailed | None:
    """KIP-368: the principal may not change during re-authentication;
    SaslServerAuthenticator.ReauthInfo's text, principals as type.name.

    Kafka's ``KafkaPrincipal.equals`` ignores how the principal logged in; here
    a password session stays one and a token session stays one (what the
    session may do, create tokens, and at the front door how it reaches the
    cluster, are decided at its first login), and the text says which changed."""
    if old is None or (
        new.authorization_id == old.authorization_id
        and new.token_authenticated == old.token_authenticated
    ):
        return None
    return AuthenticationFailed(
        "Cannot change principals during re-authentication from "
        f"User.{old.authorization_id}{_kind(old)}: User.{new.authorization_id}{_kind(new)}"
    )


def _kind(session: ScramSession) -> str:
    return " (delegation token)" if session.token_authenticated else ""


def _limits(settings: ConnectionSettings, super_user: bool) -> tuple[int, int | None]:
    """(frame limit, array cap): Kafka's for super users, our smaller caps for the rest."""
    if super_user:
        return settings.max_request, None
    return min(settings.max_request, settings.user_max_request), settings.user_max_array


def _valid_software(name: str | None, version: str | None) -> bool:
    """KIP-511's check of the client software name and version (the Java broker's
    pattern). The few pairs seen pass once through the regex, then a set lookup:
    every connection of a Java client sends the same pair."""
    key = (name, version)
    if key in _VALID_SOFTWARE:
        return True
    valid = bool(
        SOFTWARE_PATTERN.fullmatch(name or "") and SOFTWARE_PATTERN.fullmatch(version or "")
    )
    if valid and len(_VALID_SOFTWARE) < _MAX_VALID_SOFTWARE:
        _VALID_SOFTWARE.add(key)
    return valid


def _api_versions_body(settings: ConnectionSettings, error: int) -> dict[str, Any]:
    # ApiVersionsRequest.getErrorResponse lists keys only for UNSUPPORTED_VERSION
    # (answered apart): an INVALID_REQUEST answer carries none.
    keys = settings.api_versions if error == ErrorCode.NONE else ()
    return {
        "error_code": error,
        "api_keys": [{"api_key": k, "min_version": lo, "max_version": hi} for k, lo, hi in keys],
        "throttle_time_ms": 0,
    }


_REAUTH_NEEDS_V1 = (
    "Re-authentication needs SaslHandshake v1 or later (KIP-368): v0's tokens are unframed"
)


def _handshake_body(settings: ConnectionSettings, error: int) -> dict[str, Any]:
    return {"error_code": error, "mechanisms": list(settings.by_name)}


def _cached_answer(
    settings: ConnectionSettings,
    header: RequestHeader,
    error: int,
    build: Callable[[ConnectionSettings, int], dict[str, Any]],
) -> Send:
    """An answer whose body depends only on the API, version and error: framed once
    per process; later answers only pack the frame size and correlation id in front."""
    key = (header.api_key, header.api_version, error)
    cached = settings.cached_responses.get(key)
    if cached is None:
        encoded = encode_body(header.api_key, header.api_version, build(settings, error))
        framed = frame_response(header.api_key, header.api_version, 0, encoded)
        cached = (_SIZE_PREFIX.unpack_from(framed)[0], framed[8:])
        settings.cached_responses[key] = cached
    return Send(_CORRELATION.pack(cached[0], header.correlation_id) + cached[1])


def _handshake_refused(header: RequestHeader) -> Send:
    """KafkaApis.handleSaslHandshakeRequest: a SaslHandshake on an authenticated
    session that starts no re-authentication gets 34 and no mechanisms."""
    body = {"error_code": ErrorCode.ILLEGAL_SASL_STATE, "mechanisms": []}
    return Send(encode_response(header.api_key, header.api_version, header.correlation_id, body))


def advertised_versions(keys: Sequence[int]) -> tuple[tuple[int, int, int], ...]:
    """``(key, min, max)`` for the given API keys, from the schema table.

    Minimum 0 for 17, 18 and 36 (librdkafka feature checks, docs/kafka-facts.md §9.5).
    """
    return tuple((k, API_SPECS[k].min_version, API_SPECS[k].max_version) for k in sorted(keys))
