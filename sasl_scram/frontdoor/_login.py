"""The front door's own login to a broker, sans-IO: frames out, frames in.

Each upstream connection logs in before it forwards anything, as Kafka's
``SaslClientAuthenticator`` does: SaslHandshake v1 naming the mechanism,
then SaslAuthenticate rounds with our SCRAM client (RFC 5802 §3; KIP-48's
``tokenauth=true`` for an owner token). The handshake and the client-first
message leave together, one round trip less, as ``sasl_scram.admin`` does:
a broker reads one frame per step and the second simply waits its turn.
"""

from __future__ import annotations

import itertools

from sasl_scram._client import ScramClient
from sasl_scram.config import SaslCredentials
from sasl_scram.frontdoor._errors import FrontDoorError
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode
from sasl_scram.kafka import KafkaCodecError
from sasl_scram.kafka import decode_response
from sasl_scram.kafka import encode_request

__all__ = ["UpstreamLogin", "UpstreamLoginError"]

_CLIENT_ID = "kafka-scram-front-door"
# SaslHandshake v1 (KIP-152: the token then travels in SaslAuthenticate) and
# SaslAuthenticate v1 (its answer carries session_lifetime_ms), which every
# Kafka 3.x and 4.x broker speaks.
_HANDSHAKE_VERSION = 1
_AUTHENTICATE_VERSION = 1


class UpstreamLoginError(FrontDoorError):
    """The cluster refused the front door's login, or broke the exchange.

    Attributes:
        error_code: Kafka's error code, when the broker sent one.
    """

    def __init__(self, message: str, error_code: int | None = None) -> None:
        super().__init__(message)
        self.error_code = error_code


class UpstreamLogin:
    """One login: :meth:`start`, then :meth:`receive` each response payload.

    ``receive`` returns the frames to send next (possibly none); :attr:`done`
    says when the session is authenticated. Failures raise
    :class:`UpstreamLoginError` with Kafka's own message and the login's name.
    """

    def __init__(self, secret: SaslCredentials) -> None:
        self._secret = secret
        self._client = ScramClient(
            secret.mechanism, secret.username, secret.password, token_auth=secret.token_auth
        )
        self._ids = itertools.count(1)
        self._expected: list[tuple[int, int, int]] = []  # (correlation id, key, version)
        self.done = False
        #: The broker's ``session_lifetime_ms`` (KIP-368), 0 for none.
        self.session_lifetime_ms = 0

    def _request(self, api_key: int, version: int, body: dict[str, object]) -> bytes:
        correlation_id = next(self._ids)
        self._expected.append((correlation_id, api_key, version))
        return encode_request(api_key, version, correlation_id, _CLIENT_ID, body)

    def start(self) -> bytes:
        first = self._client.step(b"")
        assert first is not None
        name = self._secret.mechanism.mechanism_name
        return self._request(
            ApiKey.SASL_HANDSHAKE, _HANDSHAKE_VERSION, {"mechanism": name}
        ) + self._request(ApiKey.SASL_AUTHENTICATE, _AUTHENTICATE_VERSION, {"auth_bytes": first})

    def receive(self, payload: bytes) -> bytes:
        if not self._expected:
            raise UpstreamLoginError("the broker answered a request it was not sent")
        correlation_id, api_key, version = self._expected.pop(0)
        try:
            got, body = decode_response(api_key, version, payload)
        except KafkaCodecError as exc:
            raise UpstreamLoginError(f"malformed login response: {exc}") from None
        if got != correlation_id:
            raise UpstreamLoginError(f"correlation id {got} does not match {correlation_id}")
        if api_key == ApiKey.SASL_HANDSHAKE:
            if body["error_code"] != ErrorCode.NONE:
                offered = ", ".join(body["mechanisms"]) or "nothing"
                raise UpstreamLoginError(
                    f"the broker does not enable {self._secret.mechanism.mechanism_name} "
                    f"(it offers {offered}): set upstream.sasl.mechanism to one it offers",
                    body["error_code"],
                )
            return b""
        return self._authenticate(body)

    def _authenticate(self, body: dict[str, object]) -> bytes:
        error = body["error_code"]
        if error != ErrorCode.NONE:
            message = body.get("error_message") or "SASL authentication failed"
            raise UpstreamLoginError(
                f"the cluster refused the login of {self._secret.username!r}: {message}",
                int(error),  # type: ignore[call-overload]
            )
        auth_bytes = body["auth_bytes"]
        assert isinstance(auth_bytes, bytes)
        lifetime = body.get("session_lifetime_ms", 0)
        self.session_lifetime_ms = int(lifetime)  # type: ignore[call-overload]
        try:
            token = self._client.step(auth_bytes)
        except Exception as exc:  # a server-final that does not verify
            raise UpstreamLoginError(
                f"the cluster's SCRAM answer did not verify for {self._secret.username!r}: "
                f"{type(exc).__name__}"
            ) from None
        if token is None:
            self.done = True
            return b""
        return self._request(ApiKey.SASL_AUTHENTICATE, _AUTHENTICATE_VERSION, {"auth_bytes": token})
