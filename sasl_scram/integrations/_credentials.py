"""SCRAM credentials and the credentials-provider protocol shared by every integration.

A client integration asks its provider for :class:`ScramCredentials` at the
start of every authentication, including each KIP-368 re-authentication, so a
provider that returns a rotated delegation token is picked up by connections
that are already open. A JAAS line or a ``client.properties`` file gives a
static provider; :class:`PropertiesFileCredentials` re-reads its file each time.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from types import MappingProxyType
from typing import Protocol
from typing import TypeAlias
from typing import runtime_checkable

import jaas
from sasl_scram._client import ScramClient
from sasl_scram._errors import ScramConfigError
from sasl_scram._keycache import DEFAULT_KEY_CACHE
from sasl_scram._keycache import SaltedPasswordCache
from sasl_scram._mechanism import ScramMechanism
from sasl_scram.config import ClientConfig
from sasl_scram.config import ClientConfigError
from sasl_scram.config import read_jaas_login
from sasl_scram.integrations._errors import CredentialsError

__all__ = [
    "CredentialsProvider",
    "CredentialsSource",
    "PropertiesFileCredentials",
    "ScramCredentials",
    "StaticCredentials",
    "as_provider",
    "fetch_credentials",
    "fetch_credentials_async",
]

# The extension name Kafka's ScramLoginModule sets for delegation tokens (KIP-48).
_TOKEN_AUTH = "tokenauth"  # noqa: S105 - an extension name, not a secret


@dataclass(frozen=True, repr=False)
class ScramCredentials:
    """What one SCRAM login sends: a user and password, or a delegation token.

    Attributes:
        username: The user name, or the token id for a delegation token.
        password: The password, or the token's base64 HMAC. Never shown in ``repr``.
        token_auth: Send Kafka's ``tokenauth=true`` extension (delegation token).
        extensions: Further SCRAM extensions (RFC 5802 section 5.1) to send.
    """

    username: str
    password: str = field(repr=False)
    token_auth: bool = False
    extensions: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.username, str) or not self.username:
            raise CredentialsError("username: must be a non-empty string")
        if not isinstance(self.password, str) or not self.password:
            raise CredentialsError("password: must be a non-empty string")
        extensions = dict(self.extensions)
        if _TOKEN_AUTH in extensions:
            # One way to say it, so a token login cannot be half-configured.
            raise CredentialsError("extensions: use token_auth=True instead of a 'tokenauth' entry")
        for key, value in extensions.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise CredentialsError("extensions: names and values must be strings")
        object.__setattr__(self, "extensions", MappingProxyType(extensions))

    def __hash__(self) -> int:
        items = frozenset(self.extensions.items())
        return hash((self.username, self.password, self.token_auth, items))

    def __repr__(self) -> str:
        # Extension values may be secrets of their own: show the names only.
        return (
            f"ScramCredentials(username={self.username!r}, password=<hidden>, "
            f"token_auth={self.token_auth}, extensions={sorted(self.extensions)})"
        )

    @classmethod
    def for_token(cls, token_id: str, hmac_base64: str) -> ScramCredentials:
        """Credentials for a delegation token: its id and its base64 HMAC."""
        return cls(token_id, hmac_base64, token_auth=True)

    @classmethod
    def from_jaas(cls, line: str, *, warn: bool = True) -> ScramCredentials:
        """Read a ``sasl.jaas.config`` value with Kafka's rules (one ScramLoginModule).

        Options the module ignores (a misspelled ``tokenauth`` or ``password``)
        are logged as warnings (unless ``warn`` is false), as
        :class:`~sasl_scram.config.ClientConfig` does.

        Raises:
            CredentialsError: The line does not parse, or is not a SCRAM login.
        """
        try:
            login = read_jaas_login(line, warn=warn)
        except ClientConfigError as exc:
            raise CredentialsError(str(exc)) from None
        return cls(login.username, login.password, token_auth=login.token_auth)

    @classmethod
    def from_client_config(cls, config: ClientConfig) -> ScramCredentials:
        """The credentials of a SASL client configuration.

        Raises:
            ClientConfigError: The configuration does not use SASL.
        """
        _, username, password = config.require_credentials()
        return cls(username, password, token_auth=config.token_auth)

    def jaas_line(self) -> str:
        """These credentials as a ``sasl.jaas.config`` value (without extensions)."""
        if self.token_auth:
            return jaas.scram_token_login_line(self.username, self.password)
        return jaas.scram_login_line(self.username, self.password)

    def scram_client(
        self,
        mechanism: ScramMechanism,
        *,
        key_cache: SaltedPasswordCache | None = DEFAULT_KEY_CACHE,
    ) -> ScramClient:
        """A fresh :class:`sasl_scram.ScramClient` for one exchange."""
        return ScramClient(
            mechanism,
            self.username,
            self.password,
            token_auth=self.token_auth,
            extensions=self.extensions,
            key_cache=key_cache,
        )


@runtime_checkable
class CredentialsProvider(Protocol):
    """Anything that hands out SCRAM credentials when a login starts.

    Called once per authentication: at each new connection and at each KIP-368
    re-authentication. Keep it fast (cache, refresh in the background); the
    client's network thread or event loop waits for it. Async clients (aiokafka)
    also accept an awaitable result.
    """

    def scram_credentials(self) -> ScramCredentials | Awaitable[ScramCredentials]:
        """Return the credentials for the login that is starting."""
        ...


class StaticCredentials:
    """A provider that always returns the same credentials.

    Args:
        credentials: What to return.
    """

    def __init__(self, credentials: ScramCredentials) -> None:
        if not isinstance(credentials, ScramCredentials):
            raise CredentialsError("StaticCredentials takes ScramCredentials")
        self._credentials = credentials

    def __repr__(self) -> str:
        return f"StaticCredentials({self._credentials!r})"

    @classmethod
    def from_jaas(cls, line: str) -> StaticCredentials:
        return cls(ScramCredentials.from_jaas(line))

    def scram_credentials(self) -> ScramCredentials:
        return self._credentials


class PropertiesFileCredentials:
    """A provider that re-reads ``sasl.jaas.config`` from a properties file at every login.

    Whatever writes the file (a token renewer, a secrets agent) rotates the
    credentials of running clients at their next (re-)authentication.

    Args:
        path: A ``client.properties`` file holding ``sasl.jaas.config``.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = Path(path)
        # A digest of the line last read: its warnings are logged when it
        # changes, not at every login.
        self._last_read = b""

    def __repr__(self) -> str:
        return f"PropertiesFileCredentials({str(self._path)!r})"

    def scram_credentials(self) -> ScramCredentials:
        from sasl_scram.config import read_properties

        try:
            line = read_properties(self._path).get("sasl.jaas.config")
        except ScramConfigError as exc:
            raise CredentialsError(str(exc)) from None
        if not line:
            raise CredentialsError(f"{self._path}: sasl.jaas.config is missing")
        digest = hashlib.sha256(line.encode()).digest()
        credentials = ScramCredentials.from_jaas(line, warn=digest != self._last_read)
        self._last_read = digest
        return credentials


class _CallableCredentials:
    def __init__(self, function: Callable[[], ScramCredentials | Awaitable[ScramCredentials]]):
        self._function = function

    def __repr__(self) -> str:
        return f"CallableCredentials({getattr(self._function, '__qualname__', '?')})"

    def scram_credentials(self) -> ScramCredentials | Awaitable[ScramCredentials]:
        return self._function()


#: What the integrations accept as credentials.
CredentialsSource: TypeAlias = (
    ScramCredentials
    | CredentialsProvider
    | Callable[[], ScramCredentials | Awaitable[ScramCredentials]]
)


def as_provider(source: CredentialsSource) -> CredentialsProvider:
    """Turn credentials, a provider or a zero-argument callable into a provider.

    Raises:
        CredentialsError: ``source`` is none of these.
    """
    if isinstance(source, ScramCredentials):
        return StaticCredentials(source)
    if isinstance(source, CredentialsProvider):
        return source
    if callable(source):
        return _CallableCredentials(source)
    raise CredentialsError(
        "credentials: expected ScramCredentials, a provider with scram_credentials() "
        f"or a callable, got {type(source).__name__}"
    )


@contextlib.contextmanager
def _provider_errors(provider: object) -> Iterator[None]:
    """A provider's own CredentialsError passes; any other failure becomes one,
    cause chained, naming only the exception's type: its message may hold a secret."""
    try:
        yield
    except CredentialsError:
        raise
    except Exception as exc:
        raise CredentialsError(
            f"credentials provider {type(provider).__name__} failed: {type(exc).__name__}"
        ) from exc


def _checked(provider: object, result: object) -> ScramCredentials:
    if not isinstance(result, ScramCredentials):
        raise CredentialsError(
            f"credentials provider {type(provider).__name__} returned "
            f"{type(result).__name__}, not ScramCredentials"
        )
    return result


def fetch_credentials(provider: CredentialsProvider) -> ScramCredentials:
    """Ask a provider for credentials, from synchronous code.

    Raises:
        CredentialsError: The provider failed (cause chained), returned an
            awaitable, or returned something else than ScramCredentials.
    """
    with _provider_errors(provider):
        result = provider.scram_credentials()
    if inspect.isawaitable(result):
        if inspect.iscoroutine(result):
            result.close()  # do not leave a never-awaited coroutine behind
        raise CredentialsError(
            f"credentials provider {type(provider).__name__} is asynchronous; "
            "this client needs a synchronous scram_credentials()"
        )
    return _checked(provider, result)


async def fetch_credentials_async(provider: CredentialsProvider) -> ScramCredentials:
    """Ask a provider for credentials, awaiting the result if it is awaitable.

    Raises:
        CredentialsError: The provider failed (cause chained) or returned
            something else than ScramCredentials.
    """
    with _provider_errors(provider):
        result = provider.scram_credentials()
        if inspect.isawaitable(result):
            result = await result
    return _checked(provider, result)
