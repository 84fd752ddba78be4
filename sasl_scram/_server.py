"""A sans-IO SCRAM server (RFC 5802 section 3) that follows Kafka where interop needs it.

The credential lookup is a step the caller answers: :meth:`ScramServer.receive_client_first`
returns a :class:`CredentialRequest`, and :meth:`ScramServer.provide` takes the
answer. A ZooKeeper or network store can therefore sit behind the server
without any I/O inside it. A synchronous ``lookup`` may be given instead, for
:meth:`ScramServer.step`.

Where this goes beyond Kafka (docs/kafka-facts.md §3.1), on purpose:

* an unknown user gets a normal-looking server-first with a deterministic
  decoy salt and fails only at the final step, so probing does not reveal
  which users exist (Kafka fails right after client-first);
* the client-final nonce must equal the server's exactly, as Kafka 4.x's
  ``ScramSaslServer`` compares it (3.7.2 to 3.9.x accept any prefix, CVE-2024-56128);
  ``legacy_librdkafka_nonce`` also accepts librdkafka < 2.6.1's one form;
* one opaque :class:`AuthenticationFailed` reaches the caller; the reason goes
  to a DEBUG log line without secrets;
* a failure is sticky, and all secret comparisons are constant time.
"""

from __future__ import annotations

import binascii
import contextlib
import enum
import hashlib
import hmac
import logging
import secrets
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from types import MappingProxyType
from typing import Final

from sasl_scram import _crypto
from sasl_scram._credential import ScramCredential
from sasl_scram._crypto import fast_hmac
from sasl_scram._errors import LEGACY_LIBRDKAFKA_NONCE
from sasl_scram._errors import AuthenticationFailed
from sasl_scram._errors import ScramError
from sasl_scram._errors import ScramStateError
from sasl_scram._errors import ScramUsageError
from sasl_scram._mechanism import MIN_ITERATIONS
from sasl_scram._mechanism import ScramMechanism
from sasl_scram._messages import split_client_final
from sasl_scram._messages import split_client_first
from sasl_scram._messages import unescape_username

__all__ = [
    "CredentialRequest",
    "DecoyCredentials",
    "Grant",
    "ScramServer",
    "ScramSession",
]

log = logging.getLogger("sasl_scram.server")

TOKEN_AUTH = "tokenauth"  # noqa: S105 - an extension name, not a secret
# ScramSaslServer.SUPPORTED_EXTENSIONS: anything else is ignored, not refused.
SUPPORTED_EXTENSIONS = frozenset({TOKEN_AUTH})
_NO_EXTENSIONS: Mapping[str, str] = MappingProxyType({})
AUTHZID_MISMATCH = (
    "Authentication failed: Client requested an authorization id that is different from username"
)


class CredentialRequest:
    """What the server needs looked up after the client-first message (read-only).

    Attributes:
        mechanism: The mechanism being negotiated.
        username: The unescaped user name, or the token id when ``token_auth``.
        token_auth: The client sent ``tokenauth=true``: look among delegation
            tokens, not users (``ScramServerCallbackHandler``).
        extensions: Every extension the client sent, last value winning.

    This, :class:`Grant` and :class:`ScramSession` are built once per login,
    so they are slotted classes built in one step (about 20 ns compiled),
    not named tuples (whose ``__new__`` runs as Python code, 85 ns) or frozen
    dataclasses (``object.__setattr__`` per field, 90 ns and more).
    """

    __slots__ = ("extensions", "mechanism", "token_auth", "username")

    def __init__(
        self,
        mechanism: ScramMechanism,
        username: str,
        token_auth: bool,
        extensions: Mapping[str, str],
    ) -> None:
        self.mechanism: Final[ScramMechanism] = mechanism
        self.username: Final[str] = username
        self.token_auth: Final[bool] = token_auth
        self.extensions: Final[Mapping[str, str]] = extensions

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CredentialRequest) and (
            other.mechanism,
            other.username,
            other.token_auth,
            other.extensions,
        ) == (self.mechanism, self.username, self.token_auth, self.extensions)

    def __repr__(self) -> str:
        return (
            f"CredentialRequest({self.mechanism.mechanism_name}, {self.username!r}, "
            f"token_auth={self.token_auth}, extensions={dict(self.extensions)!r})"
        )


class Grant:
    """The caller's answer to a :class:`CredentialRequest` (read-only).

    Attributes:
        credentials: Candidate credentials. Usually one; several when secrets
            are rotated (a token checked against every listed secret). All
            candidates must share salt and iteration count, because the
            server-first message can carry only one of each.
        authorization_id: The principal name after success; the token owner
            for delegation tokens. Defaults to the user name.
        expiry_ms: The token's expiry timestamp, for the KIP-368 session lifetime.
    """

    __slots__ = ("authorization_id", "credentials", "expiry_ms")

    def __init__(
        self,
        credentials: tuple[ScramCredential, ...],
        authorization_id: str | None = None,
        expiry_ms: int | None = None,
    ) -> None:
        if not credentials:
            raise ScramUsageError("a Grant needs at least one credential")
        first = credentials[0]
        for other in credentials[1:]:
            if other.salt != first.salt or other.iterations != first.iterations:
                raise ScramUsageError("all candidate credentials must share salt and iterations")
        self.credentials: Final[tuple[ScramCredential, ...]] = credentials
        self.authorization_id: Final[str | None] = authorization_id
        self.expiry_ms: Final[int | None] = expiry_ms

    @classmethod
    def of(
        cls,
        credential: ScramCredential | Sequence[ScramCredential],
        *,
        authorization_id: str | None = None,
        expiry_ms: int | None = None,
    ) -> Grant:
        creds = (credential,) if isinstance(credential, ScramCredential) else tuple(credential)
        return cls(creds, authorization_id, expiry_ms)

    def _key(self) -> tuple[tuple[ScramCredential, ...], str | None, int | None]:
        return (self.credentials, self.authorization_id, self.expiry_ms)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Grant) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        # ScramCredential's own repr hides its keys.
        return (
            f"Grant({self.credentials!r}, authorization_id={self.authorization_id!r}, "
            f"expiry_ms={self.expiry_ms!r})"
        )


class ScramSession:
    """The outcome of a successful exchange (read-only).

    Attributes:
        mechanism: The mechanism used.
        username: The authenticated name: user name, or token id.
        authorization_id: The principal name (``User:<authorization_id>`` in Kafka).
        token_authenticated: The client authenticated with a delegation token.
        expiry_ms: The token's expiry, if any.
        extensions: The extensions the client sent.
    """

    __slots__ = (
        "authorization_id",
        "expiry_ms",
        "extensions",
        "mechanism",
        "token_authenticated",
        "username",
    )

    def __init__(
        self,
        mechanism: ScramMechanism,
        username: str,
        authorization_id: str,
        token_authenticated: bool,
        expiry_ms: int | None,
        extensions: Mapping[str, str] = _NO_EXTENSIONS,
    ) -> None:
        self.mechanism: Final[ScramMechanism] = mechanism
        self.username: Final[str] = username
        self.authorization_id: Final[str] = authorization_id
        self.token_authenticated: Final[bool] = token_authenticated
        self.expiry_ms: Final[int | None] = expiry_ms
        self.extensions: Final[Mapping[str, str]] = extensions

    def _key(self) -> tuple[ScramMechanism, str, str, bool, int | None, Mapping[str, str]]:
        return (
            self.mechanism,
            self.username,
            self.authorization_id,
            self.token_authenticated,
            self.expiry_ms,
            self.extensions,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ScramSession) and other._key() == self._key()

    def __repr__(self) -> str:
        return (
            f"ScramSession({self.mechanism.mechanism_name}, username={self.username!r}, "
            f"authorization_id={self.authorization_id!r}, "
            f"token_authenticated={self.token_authenticated}, expiry_ms={self.expiry_ms!r})"
        )

    def session_lifetime_ms(self, now_ms: int, max_reauth_ms: int | None) -> int:
        """KIP-368 ``SessionLifetimeMs`` as ``SaslServerAuthenticator`` computes it.

        0 means the session never has to re-authenticate.
        """
        reauth = max_reauth_ms if max_reauth_ms and max_reauth_ms > 0 else None
        if self.expiry_ms is not None and reauth is not None:
            return max(0, min(self.expiry_ms - now_ms, reauth))
        if self.expiry_ms is not None:
            return max(0, self.expiry_ms - now_ms)
        return reauth or 0


# Longest name whose decoy is cached. Real user names are far shorter; a longer
# claimed name (a pre-auth frame may hold 512 KiB) is derived on each probe.
_MAX_CACHED_NAME = 256


class DecoyCredentials:
    """Deterministic fake credentials for unknown users.

    The salt is derived from a secret and the user name, so repeated probes for
    the same unknown user see the same salt, shaped like a salt Kafka generates
    (130 random bits in base 36, ``ScramFormatter.secureRandomString``). The
    iteration count is one a real user of the mechanism has: ``iterations_for``
    (the store's most common count) when it has one, else ``iterations``, the
    count the project gives new credentials by default. A delegation token's
    decoy always shows ``iterations``: Kafka derives every token's credential
    at 4096 (``DelegationTokenManager``).

    Derived decoys are kept in a bounded cache, so that answering a probe for a
    known name (a dictionary hit in the credential cache) and for an unknown one
    cost the same work.

    Args:
        secret: Keep it stable and share it between processes that serve the
            same users (the endpoint persists one in its store); random per
            instance by default.
        iterations: The iteration count shown for unknown tokens, and for
            unknown users when ``iterations_for`` has none.
        cache_size: How many decoys are kept.
        iterations_for: The count users of a mechanism have most, or ``None``;
            called on each unknown user's probe, so it must be a lookup.
    """

    __slots__ = ("_cache", "_cache_size", "_iterations", "_iterations_for", "_secret")

    def __init__(
        self,
        secret: bytes | None = None,
        iterations: int = MIN_ITERATIONS,
        cache_size: int = 4096,
        iterations_for: Callable[[ScramMechanism], int | None] | None = None,
    ) -> None:
        self._secret = secret if secret is not None else secrets.token_bytes(32)
        self._iterations = iterations
        self._cache_size = cache_size
        self._iterations_for = iterations_for
        self._cache: dict[tuple[str, str], ScramCredential] = {}

    def __repr__(self) -> str:
        return f"DecoyCredentials(iterations={self._iterations})"

    @property
    def iterations(self) -> int:
        return self._iterations

    def credential(
        self, mechanism: ScramMechanism, username: str, token_auth: bool = False
    ) -> ScramCredential:
        iterations = self._iterations
        if not token_auth and self._iterations_for is not None:
            iterations = self._iterations_for(mechanism) or iterations
        key = (mechanism.mechanism_name, username)
        cached = self._cache.get(key)
        if cached is not None and cached.iterations == iterations:
            return cached
        seed = hmac.digest(self._secret, f"{key[0]}\0{username}".encode(), hashlib.sha512)
        # 130 bits, like Kafka's secureRandomString, rendered in base 36.
        salt = _crypto.base36(int.from_bytes(seed[:17], "big") >> 6).encode("ascii")
        size = mechanism.digest_size
        credential = ScramCredential(salt, seed[:size], seed[-size:], iterations)
        if len(username) > _MAX_CACHED_NAME:
            return credential  # a prober's long name: derive it again rather than keep it
        if cached is None and len(self._cache) >= self._cache_size:
            # Oldest first: a dict keeps insertion order. With the name-length cap,
            # bounded in bytes too (about cache_size * 1 KiB) whatever a prober sends.
            with contextlib.suppress(KeyError, RuntimeError, StopIteration):
                del self._cache[next(iter(self._cache))]  # another thread may race us
        self._cache[key] = credential
        return credential


_DEFAULT_DECOY = DecoyCredentials()


class _State(enum.Enum):
    RECEIVE_CLIENT_FIRST = "RECEIVE_CLIENT_FIRST_MESSAGE"
    AWAIT_CREDENTIAL = "AWAIT_CREDENTIAL"
    RECEIVE_CLIENT_FINAL = "RECEIVE_CLIENT_FINAL_MESSAGE"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


class ScramServer:
    """One SCRAM authentication exchange, server side.

    Args:
        mechanism: The mechanism negotiated in SaslHandshake.
        lookup: Optional synchronous answer to :class:`CredentialRequest`, used by
            :meth:`step`. Return ``None`` for an unknown user or token.
        decoy: Decoy credentials for unknown users; a per-process default.
        nonce_factory: Returns the server nonce part; Kafka's by default.
        rfc_mode: Answer failures at the final step with an ``e=`` message
            (RFC 5802 section 7), carried by :attr:`AuthenticationFailed.server_final`.
            Kafka never sends ``e=``, so this is off by default.
        legacy_librdkafka_nonce: Also accept a client-final nonce that is the
            client nonce followed by the server-first nonce, and nothing else:
            what librdkafka before 2.6.1 sends (confluentinc/librdkafka#4895),
            and what Kafka 3.7.2 to 3.9.x accept, as a special case of their
            ``endsWith``. Off by default, as in Kafka 4.x (docs/security.md).
    """

    __slots__ = (
        "_bare",
        "_client_nonce",
        "_decoy",
        "_digest_size",
        "_doomed",
        "_grant",
        "_hash",
        "_hash_name",
        "_legacy_nonce",
        "_lookup",
        "_mechanism",
        "_nonce_factory",
        "_request",
        "_rfc_mode",
        "_server_first",
        "_server_nonce",
        "_session",
        "_state",
    )

    def __init__(
        self,
        mechanism: ScramMechanism,
        *,
        lookup: Callable[[CredentialRequest], Grant | None] | None = None,
        decoy: DecoyCredentials = _DEFAULT_DECOY,
        nonce_factory: Callable[[], str] = _crypto.kafka_random_string,
        rfc_mode: bool = False,
        legacy_librdkafka_nonce: bool = False,
    ) -> None:
        if not isinstance(mechanism, ScramMechanism):
            raise ScramUsageError("mechanism must be a ScramMechanism")
        self._mechanism = mechanism
        spec = mechanism.value
        # Plain attributes: Enum property access costs more than the HMACs on the hot path.
        self._hash_name = spec.hash_name
        self._hash = spec.hash_constructor
        self._digest_size = spec.digest_size
        self._lookup = lookup
        self._decoy = decoy
        self._nonce_factory = nonce_factory
        self._rfc_mode = rfc_mode
        self._legacy_nonce = legacy_librdkafka_nonce
        self._state = _State.RECEIVE_CLIENT_FIRST
        self._client_nonce = ""
        self._bare = ""
        self._server_nonce = ""
        self._server_first = ""
        self._request: CredentialRequest | None = None
        self._grant: Grant | None = None
        self._doomed: str | None = None
        self._session: ScramSession | None = None

    def __repr__(self) -> str:
        return f"ScramServer({self._mechanism.mechanism_name}, state={self._state.value})"

    @property
    def mechanism(self) -> ScramMechanism:
        return self._mechanism

    @property
    def complete(self) -> bool:
        return self._state is _State.COMPLETE

    @property
    def requested_username(self) -> str | None:
        """The user name (or token id) the client-first message claimed, for logs."""
        return self._request.username if self._request is not None else None

    @property
    def expects_client_first(self) -> bool:
        """True until the client-first message has been received."""
        return self._state is _State.RECEIVE_CLIENT_FIRST

    @property
    def session(self) -> ScramSession:
        """The authenticated session; only after the exchange completed."""
        if self._session is None:
            raise ScramStateError("Authentication exchange has not completed")
        return self._session

    def _expect(self, state: _State) -> None:
        if self._state is not state:
            raise ScramStateError(f"Unexpected challenge in Sasl server state {self._state.value}")

    def _fail(
        self,
        reason: str,
        kafka_message: str | None = None,
        error: str = "other-error",
        cause: str | None = None,
    ) -> AuthenticationFailed:
        self._state = _State.FAILED
        self._grant = None
        log.debug(
            "SCRAM %s authentication failed: %s",
            self._mechanism.mechanism_name,
            reason,
        )
        server_final = f"e={error}".encode("ascii") if self._rfc_mode else None
        return AuthenticationFailed(kafka_message, server_final, cause)

    def receive_client_first(self, data: bytes) -> CredentialRequest:
        """Parse the client-first message and say which credential is needed."""
        self._expect(_State.RECEIVE_CLIENT_FIRST)
        try:
            authzid, saslname, nonce, ext_pairs, bare = split_client_first(data)
            username = unescape_username(saslname)
        except ScramError as exc:
            raise self._fail(str(exc)) from None
        # Kafka compares the raw authzid with the unescaped user name (or token id).
        if authzid and authzid != username:
            raise self._fail("authorization id differs from username", AUTHZID_MISMATCH)
        extensions: Mapping[str, str] = _NO_EXTENSIONS
        token_auth = False
        if ext_pairs:
            extensions = MappingProxyType(dict(ext_pairs))
            unknown = set(extensions) - SUPPORTED_EXTENSIONS
            if unknown:
                log.debug("Unsupported SCRAM extensions ignored: %s", sorted(unknown))
            # Boolean.parseBoolean: case-insensitive "true".
            token_auth = extensions.get(TOKEN_AUTH, "").lower() == "true"
        self._client_nonce = nonce
        self._bare = bare
        self._request = CredentialRequest(self._mechanism, username, token_auth, extensions)
        self._state = _State.AWAIT_CREDENTIAL
        return self._request

    def provide(self, grant: Grant | None) -> bytes:
        """Answer the credential request and return the server-first message.

        ``None`` means the user or token is unknown: the exchange continues with
        a decoy and fails at the final step.
        """
        self._expect(_State.AWAIT_CREDENTIAL)
        request = self._request
        assert request is not None
        credential: ScramCredential | None = None
        if grant is None:
            self._doomed = "unknown token" if request.token_auth else "unknown user"
        elif type(grant) is not Grant:
            raise ScramUsageError("provide() takes a Grant or None")
        else:
            credential = grant.credentials[0]
            if credential.iterations < MIN_ITERATIONS:
                self._doomed = (
                    f"Iterations {credential.iterations} is less than the minimum "
                    f"{MIN_ITERATIONS} for {self._mechanism.java_name}"
                )
            else:
                for candidate in grant.credentials:
                    if len(candidate.stored_key) != self._digest_size:
                        self._doomed = "stored credential does not fit the mechanism"
        if self._doomed is not None:
            credential = self._decoy.credential(
                self._mechanism, request.username, request.token_auth
            )
            grant = Grant((credential,))
        assert credential is not None and grant is not None
        self._grant = grant
        nonce = self._client_nonce + self._nonce_factory()
        salt = binascii.b2a_base64(credential.salt, newline=False).decode("ascii")
        # Kafka's server sends exactly r=,s=,i= (docs/kafka-facts.md §2.3).
        self._server_nonce = nonce
        self._server_first = f"r={nonce},s={salt},i={credential.iterations}"
        self._state = _State.RECEIVE_CLIENT_FINAL
        return self._server_first.encode("ascii")

    def receive_client_final(self, data: bytes) -> bytes:
        """Verify the client's proof and return the server-final message."""
        self._expect(_State.RECEIVE_CLIENT_FINAL)
        assert self._grant is not None and self._request is not None
        mech = self._mechanism
        try:
            nonce, proof, without_proof = split_client_final(data)
        except ScramError as exc:
            raise self._fail(str(exc)) from None
        # Exact equality, as Kafka 4.x's ScramSaslServer compares (RFC 5802 section
        # 5.1: the nonce is the client's followed by ours). The c= value is not
        # checked, as in Kafka.
        if nonce != self._server_nonce:
            self._check_legacy_nonce(nonce)
        if len(proof) != self._digest_size:
            raise self._fail("client proof has the wrong length", error="invalid-proof")
        # The AuthMessage is built from what the client actually sent (RFC 5802 3).
        auth_message = (f"{self._bare},{self._server_first},{without_proof}").encode("ascii")
        hash_name = self._hash_name
        hash_fn = self._hash
        proof_int = int.from_bytes(proof, "big")
        matched: ScramCredential | None = None
        for candidate in self._grant.credentials:
            signature = fast_hmac(candidate.stored_key, auth_message, hash_name)
            client_key = (int.from_bytes(signature, "big") ^ proof_int).to_bytes(
                self._digest_size, "big"
            )
            # No early exit: every candidate costs the same whatever matches.
            if _crypto.constant_time_equal(hash_fn(client_key).digest(), candidate.stored_key):
                matched = candidate
        if self._doomed is not None:
            raise self._fail(self._doomed, error="invalid-proof")
        if matched is None:
            raise self._fail("Invalid client credentials", error="invalid-proof")
        server_signature = fast_hmac(matched.server_key, auth_message, hash_name)
        grant = self._grant
        request = self._request
        self._session = ScramSession(
            mechanism=mech,
            username=request.username,
            authorization_id=grant.authorization_id or request.username,
            token_authenticated=request.token_auth,
            expiry_ms=grant.expiry_ms,
            extensions=request.extensions,
        )
        self._grant = None
        self._state = _State.COMPLETE
        return b"v=" + binascii.b2a_base64(server_signature, newline=False)

    def _check_legacy_nonce(self, nonce: str) -> None:
        """Raise unless ``nonce`` is librdkafka < 2.6.1's form and that form is accepted.

        librdkafka's client-final nonce is its client nonce followed by the
        server-first nonce, which already starts with the client nonce
        (confluentinc/librdkafka#4895). Only that exact string passes: not
        Kafka 3.9's ``endsWith``, which lets any prefix through.
        """
        legacy = nonce == self._client_nonce + self._server_nonce
        if not (legacy and self._legacy_nonce):
            raise self._fail(
                "Invalid client nonce in the final client message.",
                cause=LEGACY_LIBRDKAFKA_NONCE if legacy else None,
            )

    def step(self, response: bytes) -> bytes:
        """Generic SASL step using the ``lookup`` given at construction."""
        if self._state is _State.RECEIVE_CLIENT_FIRST:
            if self._lookup is None:
                raise ScramUsageError("step() needs a lookup; otherwise call provide()")
            request = self.receive_client_first(response)
            try:
                grant = self._lookup(request)
            except Exception:
                # Kafka: "Credentials could not be obtained"; never leak the cause to the peer.
                log.debug("credential lookup failed", exc_info=True)
                raise self._fail("Credentials could not be obtained") from None
            return self.provide(grant)
        if self._state is _State.RECEIVE_CLIENT_FINAL:
            return self.receive_client_final(response)
        raise ScramStateError(f"Unexpected challenge in Sasl server state {self._state.value}")
