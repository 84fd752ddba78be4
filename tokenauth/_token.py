"""The token model: ``TokenInformation``, ``DelegationToken``, the HMAC and token ids.

* HMAC = HmacSHA512(key = UTF-8(secret), message = UTF-8(tokenId)), 64 bytes;
  never stored, recomputed from the token id by every server (docs/kafka-facts.md §6.2).
* The password a client logs in with is the HMAC in standard padded base64.
* A token id is a random UUID, 16 bytes big-endian, in URL-safe base64 without
  padding (22 characters), never starting with ``-`` (KRaft's ``Uuid`` rule;
  ZooKeeper-mode Kafka has no such rule, but such ids are awkward on a
  command line, so we apply it everywhere).
"""

from __future__ import annotations

import base64
import hashlib
import hmac as _hmac
import secrets
from collections.abc import Callable
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace

from sasl_scram import KafkaPrincipal
from tokenauth._errors import TokenUsageError

__all__ = [
    "HMAC_ALGORITHM",
    "DelegationToken",
    "TokenInformation",
    "compute_hmac",
    "hmac_base64",
    "new_token_id",
]

# DelegationTokenManager.DefaultHmacAlgorithm.
HMAC_ALGORITHM = "HmacSHA512"
_UUID_BYTES = 16


def compute_hmac(token_id: str, secret: str | bytes) -> bytes:
    """``DelegationTokenManager.createHmac``: HmacSHA512 of the token id under the secret.

    Raises:
        TokenUsageError: an empty secret (Java's ``SecretKeySpec`` refuses it,
            "Invalid key to HMAC computation").
    """
    key = secret.encode("utf-8") if isinstance(secret, str) else secret
    if not key:
        raise TokenUsageError("Invalid key to HMAC computation")
    return _hmac.digest(key, token_id.encode("utf-8"), hashlib.sha512)


def hmac_base64(hmac: bytes) -> str:
    """The token password: standard base64 with padding (``DelegationToken.hmacAsBase64String``)."""
    return base64.b64encode(hmac).decode("ascii")


def new_token_id(randbytes: Callable[[int], bytes] = secrets.token_bytes) -> str:
    """A fresh token id: a version-4 UUID in URL-safe unpadded base64 (22 characters).

    Args:
        randbytes: The randomness, ``secrets.token_bytes`` unless a test injects one.
    """
    while True:
        raw = bytearray(randbytes(_UUID_BYTES))
        if len(raw) != _UUID_BYTES:
            raise TokenUsageError("randbytes must return exactly the bytes asked for")
        # java.util.UUID.randomUUID: version 4, IETF variant.
        raw[6] = (raw[6] & 0x0F) | 0x40
        raw[8] = (raw[8] & 0x3F) | 0x80
        text = base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode("ascii")
        # Uuid.randomUuid retries ids starting with '-' (they look like options).
        if not text.startswith("-"):
            return text


@dataclass(frozen=True, slots=True)
class TokenInformation:
    """What Kafka stores about a token (``TokenInformation``); holds no secret.

    Attributes:
        token_id: The 22-character id, also the SCRAM user name.
        owner: The principal the token authenticates as (KIP-373 may make it
            differ from the requester).
        token_requester: Who created the token (equal to ``owner`` for tokens
            read from version 1 and 2 znodes).
        renewers: Principals allowed to renew and expire the token besides the owner.
        issue_timestamp_ms: Creation time, epoch milliseconds.
        expiry_timestamp_ms: The token stops being valid after this instant.
        max_timestamp_ms: Renewals never move the expiry past this instant.
    """

    token_id: str
    owner: KafkaPrincipal
    token_requester: KafkaPrincipal
    renewers: tuple[KafkaPrincipal, ...]
    issue_timestamp_ms: int
    expiry_timestamp_ms: int
    max_timestamp_ms: int

    def __post_init__(self) -> None:
        if not isinstance(self.renewers, tuple):
            object.__setattr__(self, "renewers", tuple(self.renewers))

    def owner_or_renewer(self, principal: KafkaPrincipal) -> bool:
        """``TokenInformation.ownerOrRenewer``: owner, requester or renewer.

        Used for describe visibility. Note that the requester counts here but
        may *not* renew: see :meth:`may_renew`.
        """
        return (
            principal == self.owner
            or principal == self.token_requester
            or principal in self.renewers
        )

    def may_renew(self, principal: KafkaPrincipal) -> bool:
        """``DelegationTokenManager.allowedToRenew``: owner or a renewer, not the requester."""
        return principal == self.owner or principal in self.renewers

    def is_expired(self, now_ms: int) -> bool:
        """``maxTimestamp < now || expiryTimestamp < now``: the instant itself is still valid."""
        return self.max_timestamp_ms < now_ms or self.expiry_timestamp_ms < now_ms

    def with_expiry(self, expiry_timestamp_ms: int) -> TokenInformation:
        """A copy with another expiry timestamp."""
        return replace(self, expiry_timestamp_ms=expiry_timestamp_ms)

    @classmethod
    def create(
        cls,
        token_id: str,
        owner: KafkaPrincipal,
        token_requester: KafkaPrincipal,
        renewers: Iterable[KafkaPrincipal],
        issue_timestamp_ms: int,
        expiry_timestamp_ms: int,
        max_timestamp_ms: int,
    ) -> TokenInformation:
        return cls(
            token_id,
            owner,
            token_requester,
            tuple(renewers),
            issue_timestamp_ms,
            expiry_timestamp_ms,
            max_timestamp_ms,
        )


@dataclass(frozen=True, slots=True, eq=False)
class DelegationToken:
    """A token with its HMAC (``DelegationToken``). The ``repr`` never shows the HMAC.

    Equality is identity, so that no code path compares HMACs with ``==``.

    Attributes:
        info: The stored token information.
        hmac: The 64-byte HMAC under the signing secret.
    """

    info: TokenInformation
    hmac: bytes = field(repr=False)

    def __repr__(self) -> str:
        return f"DelegationToken(info={self.info!r}, hmac=<redacted>)"

    __str__ = __repr__

    @property
    def token_id(self) -> str:
        return self.info.token_id

    @property
    def hmac_base64(self) -> str:
        """The password to log in with: the HMAC in standard padded base64."""
        return hmac_base64(self.hmac)
