"""Typed SCRAM credentials from a ``ScramLoginModule`` entry."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

from jaas._errors import JaasCredentialsError
from jaas._known import SCRAM_LOGIN_MODULE
from jaas._model import Context
from jaas._model import LoginModuleEntry
from jaas._render import scram_login_line
from jaas._render import scram_token_login_line
from jaas._secrets import MASK

__all__ = ["ScramLoginCredentials"]


@dataclass(frozen=True)
class ScramLoginCredentials:
    """The ``username``, ``password`` and ``tokenauth`` of a ScramLoginModule entry.

    For a delegation token the username is the token id and the password the
    base64 HMAC. The password never appears in ``repr``.
    """

    username: str
    password: str = field(repr=False)
    token_auth: bool = False

    def __repr__(self) -> str:
        return (
            f"ScramLoginCredentials(username={self.username!r}, password={MASK!r}, "
            f"token_auth={self.token_auth})"
        )

    @classmethod
    def from_entry(cls, entry: LoginModuleEntry) -> ScramLoginCredentials:
        """Extract the credentials from a ScramLoginModule entry.

        ``tokenauth`` counts when it equals ``true`` ignoring case, as in
        ``ScramLoginModule.initialize``.

        Raises:
            JaasCredentialsError: The entry is another module, or lacks a
                username or password.
        """
        if entry.module != SCRAM_LOGIN_MODULE:
            raise JaasCredentialsError(
                f"expected login module {SCRAM_LOGIN_MODULE}, got {entry.module}"
            )
        missing = [k for k in ("username", "password") if k not in entry.options]
        if missing:
            raise JaasCredentialsError(
                f"expected options username and password, got no {' or '.join(missing)}"
            )
        token_auth = entry.options.get("tokenauth", "").lower() == "true"
        return cls(entry.options["username"], entry.options["password"], token_auth)

    @classmethod
    def from_context(cls, context: Context) -> ScramLoginCredentials:
        """Extract the credentials from the context's one ScramLoginModule entry.

        Raises:
            JaasCredentialsError: There is not exactly one such entry, or it
                lacks a username or password.
        """
        entries = [e for e in context.entries if e.module == SCRAM_LOGIN_MODULE]
        if len(entries) != 1:
            raise JaasCredentialsError(
                f"expected one {SCRAM_LOGIN_MODULE} entry in context {context.name!r}, "
                f"got {len(entries)}"
            )
        return cls.from_entry(entries[0])

    def login_line(self) -> str:
        """Return the ``sasl.jaas.config`` value for these credentials."""
        if self.token_auth:
            return scram_token_login_line(self.username, self.password)
        return scram_login_line(self.username, self.password)
