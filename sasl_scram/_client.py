"""A sans-IO SCRAM client (RFC 5802 section 3) speaking Kafka's dialect.

Bytes in, bytes out; the caller moves them. Mirrors Kafka's ``ScramSaslClient``
(docs/kafka-facts.md §3.2) and adds what kafka-python's client lacks: username
escaping, extensions such as ``tokenauth=true``, ``e=`` handling and a cache
of derived keys.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from collections.abc import Mapping

from sasl_scram import _crypto
from sasl_scram._errors import ScramError
from sasl_scram._errors import ScramProtocolError
from sasl_scram._errors import ScramServerError
from sasl_scram._errors import ScramStateError
from sasl_scram._errors import ScramUsageError
from sasl_scram._keycache import DEFAULT_KEY_CACHE
from sasl_scram._keycache import SaltedPasswordCache
from sasl_scram._mechanism import MIN_ITERATIONS
from sasl_scram._mechanism import ScramMechanism
from sasl_scram._messages import ClientFinalMessage
from sasl_scram._messages import ClientFirstMessage
from sasl_scram._messages import ServerFinalMessage
from sasl_scram._messages import ServerFirstMessage
from sasl_scram._messages import java_hashmap_order
from sasl_scram._saslprep import Normalization
from sasl_scram._saslprep import normalize_password
from sasl_scram._saslprep import saslprep

__all__ = ["ScramClient"]

TOKEN_AUTH = "tokenauth"  # noqa: S105 - an extension name, not a secret
# Kafka's client has no upper bound; a hostile server could then make a client
# spin for minutes. kafka-python caps at 1,000,000; so do we, configurably.
DEFAULT_MAX_ITERATIONS = 1_000_000


class _State(enum.Enum):
    SEND_CLIENT_FIRST = "SEND_CLIENT_FIRST_MESSAGE"
    RECEIVE_SERVER_FIRST = "RECEIVE_SERVER_FIRST_MESSAGE"
    RECEIVE_SERVER_FINAL = "RECEIVE_SERVER_FINAL_MESSAGE"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


class ScramClient:
    """One SCRAM authentication exchange, client side.

    Call in wire order: :meth:`client_first`, :meth:`receive_server_first`
    (returns the client-final message), :meth:`receive_server_final`; or call
    :meth:`step` repeatedly as a generic SASL client would. Any failure is
    sticky: later calls raise :class:`ScramStateError`.

    Args:
        mechanism: SCRAM-SHA-256 or SCRAM-SHA-512.
        username: The user name, or the token id for delegation tokens.
        password: The password, or the token's base64 HMAC.
        token_auth: Send Kafka's ``tokenauth=true`` extension (KIP-48).
        extensions: Further extensions, sent in Java ``HashMap`` order.
        nonce_factory: Returns the client nonce; Kafka's 130-bit base-36 by default.
        key_cache: Where derived keys are kept between connections; ``None``
            disables caching.
        normalization: Kafka's plain UTF-8 (default) or RFC 4013 SASLprep.
        max_iterations: Refuse servers that ask for more PBKDF2 iterations.
        jdk: The Java release of the Kafka peer, for extension ordering.
    """

    def __init__(
        self,
        mechanism: ScramMechanism,
        username: str,
        password: str | bytes,
        *,
        token_auth: bool = False,
        extensions: Mapping[str, str] | None = None,
        nonce_factory: Callable[[], str] = _crypto.kafka_random_string,
        key_cache: SaltedPasswordCache | None = DEFAULT_KEY_CACHE,
        normalization: Normalization = Normalization.KAFKA,
        max_iterations: int = DEFAULT_MAX_ITERATIONS,
        jdk: int = 17,
    ) -> None:
        if not isinstance(mechanism, ScramMechanism):
            raise ScramUsageError("mechanism must be a ScramMechanism")
        if not isinstance(username, str) or not username:
            raise ScramUsageError("username must be a non-empty string")
        if not isinstance(password, str | bytes):
            raise ScramUsageError("password must be str or bytes")
        if normalization is Normalization.SASLPREP:
            username = saslprep(username)
        merged = dict(extensions or {})
        if token_auth:
            merged[TOKEN_AUTH] = "true"
        ordered = tuple((k, merged[k]) for k in java_hashmap_order(merged, jdk))
        self._mechanism = mechanism
        self._password = normalize_password(password, normalization)
        self._first = ClientFirstMessage.create(username, nonce_factory(), ordered)
        self._key_cache = key_cache
        self._max_iterations = max_iterations
        self._state = _State.SEND_CLIENT_FIRST
        self._server_key: bytes | None = None
        self._auth_message: bytes | None = None

    def __repr__(self) -> str:
        return (
            f"ScramClient({self._mechanism.mechanism_name}, user={self._first.username!r}, "
            f"state={self._state.value})"
        )

    @property
    def mechanism(self) -> ScramMechanism:
        return self._mechanism

    @property
    def complete(self) -> bool:
        """True once the server's signature has been verified."""
        return self._state is _State.COMPLETE

    def _expect(self, state: _State) -> None:
        if self._state is not state:
            raise ScramStateError(f"Unexpected challenge in Sasl client state {self._state.value}")

    def client_first(self) -> bytes:
        """The client-first message: ``n,,n=<user>,r=<nonce>[,extensions]``."""
        self._expect(_State.SEND_CLIENT_FIRST)
        self._state = _State.RECEIVE_SERVER_FIRST
        return self._first.to_bytes()

    def receive_server_first(self, data: bytes) -> bytes:
        """Check the server-first message and return the client-final message."""
        self._expect(_State.RECEIVE_SERVER_FIRST)
        try:
            result = self._handle_server_first(data)
        except ScramError:
            self._state = _State.FAILED
            raise
        self._state = _State.RECEIVE_SERVER_FINAL
        return result

    def _handle_server_first(self, data: bytes) -> bytes:
        mech = self._mechanism
        first = ServerFirstMessage.parse(data)
        if not first.nonce.startswith(self._first.nonce):
            raise ScramProtocolError("Invalid server nonce: does not start with client nonce")
        if first.iterations < MIN_ITERATIONS:
            raise ScramProtocolError(
                f"Requested iterations {first.iterations} is less than the minimum "
                f"{MIN_ITERATIONS} for {mech.java_name}"
            )
        if first.iterations > self._max_iterations:
            raise ScramProtocolError(
                f"Requested iterations {first.iterations} is more than the configured "
                f"maximum {self._max_iterations}"
            )
        client_key, server_key = self._derive_keys(first.salt, first.iterations)
        final = ClientFinalMessage.create(first.nonce, b"")
        # RFC 5802 3: AuthMessage = client-first-bare "," server-first "," final-without-proof.
        auth_message = f"{self._first.bare},{first.text},{final.without_proof}".encode("ascii")
        stored_key = _crypto.hash_digest(mech, client_key)
        signature = _crypto.hmac_digest(mech, stored_key, auth_message)
        proof = _crypto.xor(client_key, signature)
        self._server_key = server_key
        self._auth_message = auth_message
        return final.with_proof(proof).to_bytes()

    def _derive_keys(self, salt: bytes, iterations: int) -> tuple[bytes, bytes]:
        mech = self._mechanism
        cache = self._key_cache
        cache_key = None
        if cache is not None:
            cache_key = cache.make_key(mech, salt, iterations, self._password)
            hit = cache.get(cache_key)
            if hit is not None:
                return hit
        salted = _crypto.salted_password(mech, self._password, salt, iterations)
        keys = (_crypto.client_key(mech, salted), _crypto.server_key(mech, salted))
        if cache is not None and cache_key is not None:
            cache.put(cache_key, keys)
        return keys

    def receive_server_final(self, data: bytes) -> None:
        """Verify the server signature; raises unless the server proved itself."""
        self._expect(_State.RECEIVE_SERVER_FINAL)
        try:
            final = ServerFinalMessage.parse(data)
            if final.error is not None:
                raise ScramServerError(self._mechanism.java_name, final.error)
            assert final.signature is not None
            assert self._server_key is not None and self._auth_message is not None
            expected = _crypto.hmac_digest(self._mechanism, self._server_key, self._auth_message)
            if not _crypto.constant_time_equal(expected, final.signature):
                raise ScramProtocolError("Invalid server signature in server final message")
        except ScramError:
            self._state = _State.FAILED
            raise
        finally:
            self._server_key = None
        self._state = _State.COMPLETE

    def step(self, challenge: bytes) -> bytes | None:
        """Generic SASL step: the initial response for an empty challenge, then
        the client-final message, then ``None`` once the server is verified."""
        if self._state is _State.SEND_CLIENT_FIRST:
            if challenge:
                self._state = _State.FAILED
                raise ScramProtocolError("Expected empty challenge")
            return self.client_first()
        if self._state is _State.RECEIVE_SERVER_FIRST:
            return self.receive_server_first(challenge)
        if self._state is _State.RECEIVE_SERVER_FINAL:
            self.receive_server_final(challenge)
            return None
        raise ScramStateError(f"Unexpected challenge in Sasl client state {self._state.value}")
