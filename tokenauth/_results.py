"""Kafka's error codes for token requests and the typed results the wire needs.

Every result carries the Kafka error code and exactly the values the
corresponding response puts on the wire, with Kafka's values on error
(``-1`` timestamps, an empty token id and HMAC).
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

from sasl_scram import KafkaPrincipal
from sasl_scram.kafka import ErrorCode
from tokenauth._token import DelegationToken
from tokenauth._token import TokenInformation
from tokenauth._token import hmac_base64

__all__ = [
    "CreateTokenResult",
    "DescribeTokensResult",
    "ExpireTokenResult",
    "RenewTokenResult",
]


@dataclass(frozen=True, slots=True, eq=False)
class CreateTokenResult:
    """CreateDelegationToken's response values.

    On error: ``owner`` and ``token_requester`` are still set (Kafka's error
    response carries them), timestamps are ``-1``, ``token_id`` is ``""`` and
    ``hmac`` is empty.

    Attributes:
        error: The Kafka error code.
        owner: The token owner (``PrincipalType``/``PrincipalName``).
        token_requester: The requester (``TokenRequesterPrincipalType``/``Name``, v3).
        issue_timestamp_ms: ``IssueTimestampMs``.
        expiry_timestamp_ms: ``ExpiryTimestampMs``.
        max_timestamp_ms: ``MaxTimestampMs``.
        token_id: ``TokenId``.
        hmac: ``Hmac``, the raw 64 bytes (never in the ``repr``).
        renewers: The renewers stored (not part of the response; for callers).
    """

    error: ErrorCode
    owner: KafkaPrincipal
    token_requester: KafkaPrincipal
    issue_timestamp_ms: int = -1
    expiry_timestamp_ms: int = -1
    max_timestamp_ms: int = -1
    token_id: str = ""
    hmac: bytes = field(default=b"", repr=False)
    renewers: tuple[KafkaPrincipal, ...] = ()

    def __repr__(self) -> str:
        return (
            f"CreateTokenResult(error={self.error.name}, owner={self.owner}, "
            f"token_requester={self.token_requester}, token_id={self.token_id!r}, "
            f"issue_timestamp_ms={self.issue_timestamp_ms}, "
            f"expiry_timestamp_ms={self.expiry_timestamp_ms}, "
            f"max_timestamp_ms={self.max_timestamp_ms}, hmac=<redacted>)"
        )

    @property
    def hmac_base64(self) -> str:
        """The password for ``tokenauth=true`` logins."""
        return hmac_base64(self.hmac)

    @property
    def token(self) -> DelegationToken | None:
        """The created token, or ``None`` on error."""
        if self.error != ErrorCode.NONE:
            return None
        return DelegationToken(
            TokenInformation(
                self.token_id,
                self.owner,
                self.token_requester,
                self.renewers,
                self.issue_timestamp_ms,
                self.expiry_timestamp_ms,
                self.max_timestamp_ms,
            ),
            self.hmac,
        )


@dataclass(frozen=True, slots=True)
class _ExpiryChangeResult:
    """The code and ``ExpiryTimestampMs`` (-1 on error).

    ``token_id`` names the token the HMAC found (empty when none was found), for
    the audit trail; it is not part of the response, nor of equality.
    """

    error: ErrorCode
    expiry_timestamp_ms: int = -1
    token_id: str = field(default="", compare=False)


@dataclass(frozen=True, slots=True)
class RenewTokenResult(_ExpiryChangeResult):
    """RenewDelegationToken's response: the code and ``ExpiryTimestampMs`` (-1 on error);
    ``token_id`` (not compared) names the token, for the audit trail."""


@dataclass(frozen=True, slots=True)
class ExpireTokenResult(_ExpiryChangeResult):
    """ExpireDelegationToken's response: the code and ``ExpiryTimestampMs`` (-1 on error);
    ``token_id`` (not compared) names the token, for the audit trail."""


@dataclass(frozen=True, slots=True)
class DescribeTokensResult:
    """DescribeDelegationToken's response: the code and the visible tokens with their HMACs.

    Each :class:`DelegationToken` gives ``info.owner``, ``info.token_requester``,
    ``info.renewers``, the three timestamps, ``token_id`` and ``hmac``.
    """

    error: ErrorCode
    tokens: tuple[DelegationToken, ...] = ()
