"""SCRAM-SHA-256 and SCRAM-SHA-512 for pure-sasl, Kafka-exact and token-capable.

pure-sasl 0.6.2 ships no SCRAM. :func:`install` adds two mechanisms to its
global registry ``puresasl.mechanisms.mechanisms`` (a plain dict, there is no
registration function); :func:`uninstall` removes them again, or puts back
whatever was registered under those names before. Nothing happens on import.

After :func:`install`::

    from puresasl.client import SASLClient

    sasl = SASLClient("broker1", mechanism="SCRAM-SHA-256",
                      username="alice", password="alice-secret")
    client_first = sasl.process()            # initial response
    client_final = sasl.process(server_first)
    sasl.process(server_final)               # verifies the server
    assert sasl.complete

Note that ``SASLClient``'s second positional parameter is ``service``: pass the
mechanism by keyword, or as the third positional argument.

Mechanism properties (``SASLClient`` keyword arguments, or asked from the
``callback`` when missing): ``username``, ``password``, ``token_auth``
(Kafka's ``tokenauth=true``), ``extensions`` (a mapping of further SCRAM
extensions), ``credentials`` (:class:`~sasl_scram.integrations.ScramCredentials`
or a synchronous provider, instead of username and password) and
``key_cache``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from typing import ClassVar

from sasl_scram._client import ScramClient
from sasl_scram._errors import ScramError
from sasl_scram._keycache import DEFAULT_KEY_CACHE
from sasl_scram._keycache import SaltedPasswordCache
from sasl_scram._mechanism import SCRAM_SHA_256
from sasl_scram._mechanism import SCRAM_SHA_512
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.integrations._credentials import CredentialsSource
from sasl_scram.integrations._credentials import ScramCredentials
from sasl_scram.integrations._credentials import as_provider
from sasl_scram.integrations._credentials import fetch_credentials
from sasl_scram.integrations._errors import CredentialsError
from sasl_scram.integrations._errors import IntegrationError
from sasl_scram.integrations._errors import refusal
from sasl_scram.integrations._patches import Patch
from sasl_scram.integrations._patches import PatchSet

__all__ = [
    "ScramSha256Mechanism",
    "ScramSha512Mechanism",
    "install",
    "is_installed",
    "uninstall",
]

_QOP_AUTH = b"auth"  # SCRAM has no security layer (RFC 5802 section 6 mentions none).

_patches = PatchSet("pure-sasl")


def _sasl_errors() -> tuple[type[Exception], type[Exception]]:
    import puresasl

    return puresasl.SASLError, puresasl.SASLProtocolException


class _ScramMechanism:
    """A pure-sasl mechanism over :class:`sasl_scram.ScramClient`.

    Follows the interface of ``puresasl.mechanisms.Mechanism`` without
    inheriting from it, so this module can load without pure-sasl.
    """

    name: ClassVar[str]
    scram: ClassVar[ScramMechanism]
    # Above DIGEST-MD5 (30), below GSSAPI (100) in SASLClient.choose_mechanism.
    score: ClassVar[int] = 50
    complete = False
    has_initial_response = True
    allows_anonymous = False
    uses_plaintext = False
    # Mutual authentication; but an eavesdropper can run a dictionary attack
    # on the proof, as for every SCRAM without channel binding.
    active_safe = True
    dictionary_safe = False
    qops: ClassVar[list[bytes]] = [_QOP_AUTH]
    qop = _QOP_AUTH

    def __init__(
        self,
        sasl: Any,
        username: str | None = None,
        password: str | None = None,
        token_auth: bool = False,
        extensions: Mapping[str, str] | None = None,
        credentials: CredentialsSource | None = None,
        key_cache: SaltedPasswordCache | None = DEFAULT_KEY_CACHE,
        **props: Any,
    ) -> None:
        self.sasl = sasl
        self.username = username
        self.password = password
        self._token_auth = token_auth
        self._extensions = dict(extensions or {})
        self._credentials = credentials
        self._key_cache = key_cache
        self._client: ScramClient | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(user={self.username!r}, complete={self.complete})"

    def _resolve(self) -> ScramCredentials:
        usage_error, _ = _sasl_errors()
        try:
            if self._credentials is not None:
                return fetch_credentials(as_provider(self._credentials))
            self._fetch_properties("username", "password")
            assert self.username is not None and self.password is not None
            return ScramCredentials(
                self.username,
                self.password,
                token_auth=self._token_auth,
                extensions=self._extensions,
            )
        except CredentialsError as exc:
            raise usage_error(str(exc)) from exc

    def _fetch_properties(self, *names: str) -> None:
        # As puresasl.mechanisms.Mechanism._fetch_properties.
        usage_error, _ = _sasl_errors()
        needed = [n for n in names if getattr(self, n, None) is None]
        if needed and not self.sasl.callback:
            raise usage_error(
                "The following properties are required, but a callback has not been set: "
                + ", ".join(needed)
            )
        for name in needed:
            setattr(self, name, self.sasl.callback(name))

    def process(self, challenge: bytes | None = None) -> bytes:
        """The initial response for ``None``; then the client-final message;
        then ``b""`` once the server-final message has been verified.

        Raises:
            puresasl.SASLError: Missing or invalid properties.
            puresasl.SASLProtocolException: The server sent ``e=``, an invalid
                message or a wrong signature.
        """
        _, protocol_error = _sasl_errors()
        try:
            if self._client is None:
                if challenge:
                    raise protocol_error("SCRAM starts with the client: expected no challenge")
                self._check_qop()
                credentials = self._resolve()
                self._check_authzid(credentials.username)
                self.username = credentials.username
                self._client = credentials.scram_client(self.scram, key_cache=self._key_cache)
                return self._client.client_first()
            # The client-final message, then None once the server is verified.
            reply = self._client.step(challenge or b"")
            if reply is None:
                self.complete = True
                return b""
            return reply
        except ScramError as exc:
            raise protocol_error(refusal(exc)) from None

    def _check_qop(self) -> None:
        _, protocol_error = _sasl_errors()
        wanted = {q.encode() if isinstance(q, str) else q for q in self.sasl.qops}
        if _QOP_AUTH not in wanted:
            raise protocol_error(f"{self.name} offers only the 'auth' quality of protection")

    def _check_authzid(self, username: str) -> None:
        # Kafka accepts an authorization id only when it equals the user name,
        # and then it changes nothing: such an id is simply not sent.
        authzid = self.sasl.authorization_id
        if authzid and authzid != username:
            usage_error, _ = _sasl_errors()
            raise usage_error(
                f"{self.name}: an authorization id other than the user is not supported"
            )

    def wrap(self, outgoing: bytes) -> bytes:
        return outgoing

    def unwrap(self, incoming: bytes) -> bytes:
        return incoming

    def dispose(self) -> None:
        """Drop the password and the exchange state."""
        self.password = None
        self._credentials = None
        self._client = None


class ScramSha256Mechanism(_ScramMechanism):
    """``SCRAM-SHA-256`` for ``puresasl.client.SASLClient``."""

    name = "SCRAM-SHA-256"
    scram = SCRAM_SHA_256


class ScramSha512Mechanism(_ScramMechanism):
    """``SCRAM-SHA-512`` for ``puresasl.client.SASLClient``."""

    name = "SCRAM-SHA-512"
    scram = SCRAM_SHA_512


_MECHANISMS: tuple[type[_ScramMechanism], ...] = (ScramSha256Mechanism, ScramSha512Mechanism)


def _registry() -> dict[str, Any]:
    try:
        import puresasl.mechanisms
    except ImportError as exc:
        raise IntegrationError("pure-sasl is required") from exc
    registry: dict[str, Any] = puresasl.mechanisms.mechanisms
    return registry


def install() -> None:
    """Register SCRAM-SHA-256 and SCRAM-SHA-512 in ``puresasl.mechanisms``; idempotent.

    Raises:
        IntegrationError: pure-sasl is not installed.
    """
    _patches.apply(_targets(_registry()))


def uninstall() -> None:
    """Remove the mechanisms (restoring earlier entries). A no-op when not installed."""
    _patches.revert()


def is_installed() -> bool:
    try:
        registry = _registry()
    except IntegrationError:
        return False
    return PatchSet.in_place(_targets(registry))


def _targets(registry: dict[str, Any]) -> list[Patch]:
    return [(registry, mech.name, mech) for mech in _MECHANISMS]
