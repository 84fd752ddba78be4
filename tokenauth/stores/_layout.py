"""Kafka's ZooKeeper layout for delegation tokens (docs/kafka-facts.md §6.4), as pure functions.

* ``/delegation_token/tokens/<tokenId>``: JSON version 3 with sanitized
  principals (``User:alice`` -> ``User%3Aalice``) and integer ms timestamps.
* ``/delegation_token/token_changes/token_change_<10 digits>``: sequential
  notifications whose data is the raw UTF-8 token id (not JSON).

The same JSON is what the SQLite store keeps, so a row can be copied to
ZooKeeper unchanged.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping

from sasl_scram import KafkaPrincipal
from sasl_scram import ScramUsageError
from sasl_scram.store import SanitizerError
from sasl_scram.store import desanitize
from sasl_scram.store import sanitize
from sasl_scram.store.zookeeper import parse_sequence
from tokenauth._token import TokenInformation

__all__ = [
    "CHANGES_PATH",
    "CHANGE_PREFIX",
    "CURRENT_VERSION",
    "ROOT_PATH",
    "TOKENS_PATH",
    "MalformedToken",
    "change_sequence",
    "decode_notification",
    "decode_stored",
    "decode_token",
    "encode_notification",
    "encode_token",
    "token_path",
]

ROOT_PATH = "/delegation_token"  # DelegationTokenAuthZNode
TOKENS_PATH = "/delegation_token/tokens"  # DelegationTokensZNode
CHANGES_PATH = "/delegation_token/token_changes"  # DelegationTokenChangeNotificationZNode
CHANGE_PREFIX = (
    "token_change_"  # DelegationTokenChangeNotificationSequenceZNode.SequenceNumberPrefix
)
# DelegationTokenInfoZNode.CurrentVersion since Kafka 3.3 (KIP-373 added tokenRequester).
CURRENT_VERSION = 3

_JAVA_INT_MAX = 2**31 - 1
_JAVA_LONG_MIN = -(2**63)
_JAVA_LONG_MAX = 2**63 - 1


class MalformedToken(ValueError):
    """A token znode (or row) Kafka itself could not read; it is logged and skipped."""


def token_path(token_id: str) -> str:
    """``/delegation_token/tokens/<tokenId>``: token ids are URL-safe base64, used as is."""
    if not token_id or "/" in token_id:
        raise MalformedToken("a token id must be non-empty and contain no '/'")
    return f"{TOKENS_PATH}/{token_id}"


def encode_token(info: TokenInformation) -> bytes:
    """``toJsonCompatibleMap``: compact JSON, version 3.

    Kafka's key order is hash-based and unspecified; readers must not depend
    on it. We write a fixed order.
    """
    document = {
        "version": CURRENT_VERSION,
        "owner": sanitize(str(info.owner)),
        "tokenRequester": sanitize(str(info.token_requester)),
        "renewers": [sanitize(str(r)) for r in info.renewers],
        "issueTimestamp": info.issue_timestamp_ms,
        "maxTimestamp": info.max_timestamp_ms,
        "expiryTimestamp": info.expiry_timestamp_ms,
        "tokenId": info.token_id,
    }
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _principal(value: object, key: str) -> KafkaPrincipal:
    if not isinstance(value, str):
        raise MalformedToken(f"{key} is not a string")
    try:
        return KafkaPrincipal.parse(desanitize(value))
    except (SanitizerError, ScramUsageError) as exc:
        raise MalformedToken(f"{key}: {exc}") from None


def _long(document: Mapping[str, object], key: str) -> int:
    value = document.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise MalformedToken(f"{key} is missing or not an integer")
    if not _JAVA_LONG_MIN <= value <= _JAVA_LONG_MAX:
        raise MalformedToken(f"{key} is out of the range of a Java long")
    return value


def decode_token(data: bytes | None) -> TokenInformation | None:
    """``DelegationTokenInfoZNode.decode`` / ``fromBytes``: versions 1 to 3.

    Returns ``None`` for empty data (Kafka treats it as no token) and for data
    that is not JSON (``Json.parseBytes`` gives ``None``).

    Raises:
        MalformedToken: JSON that Kafka would refuse (a ``require`` or a
            conversion failing).
    """
    if not data:
        return None
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(document, dict):
        raise MalformedToken("token data is not a JSON object")
    version = document.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version > _JAVA_INT_MAX:
        raise MalformedToken("version is missing or not an integer")
    # require(version > 0 && version <= CurrentVersion)
    if not 0 < version <= CURRENT_VERSION:
        raise MalformedToken(f"unsupported token version {version}")
    owner = _principal(document.get("owner"), "owner")
    # Before version 3 (KIP-373) the requester is the owner.
    requester = (
        _principal(document.get("tokenRequester"), "tokenRequester") if version >= 3 else owner
    )
    raw_renewers = document.get("renewers")
    if not isinstance(raw_renewers, list):
        raise MalformedToken("renewers is missing or not a list")
    renewers = tuple(_principal(r, "renewers") for r in raw_renewers)
    token_id = document.get("tokenId")
    if not isinstance(token_id, str):
        raise MalformedToken("tokenId is missing or not a string")
    return TokenInformation(
        token_id,
        owner,
        requester,
        renewers,
        _long(document, "issueTimestamp"),
        _long(document, "expiryTimestamp"),
        _long(document, "maxTimestamp"),
    )


def decode_stored(
    data: bytes | None, token_id: str, where: str, log: logging.Logger
) -> TokenInformation | None:
    """:func:`decode_token` for a store's reload: a token that is malformed, empty, not
    JSON or filed under another id is logged (``where`` names the row or znode) and
    skipped (``None``) so that one bad entry does not hide the others."""
    try:
        info = decode_token(data)
    except MalformedToken as exc:
        log.warning("skipping malformed %s: %s", where, exc)
        return None
    if info is None:
        # fromBytes gives None for empty or non-JSON data: no token.
        log.warning("skipping %s: empty or not JSON", where)
        return None
    if info.token_id != token_id:
        log.warning("skipping %s: it holds token id %r", where, info.token_id)
        return None
    return info


def encode_notification(token_id: str) -> bytes:
    """The notification data: the raw token id in UTF-8 (not JSON)."""
    return token_id.encode("utf-8")


def decode_notification(data: bytes | None) -> str | None:
    """The token id a notification names, or ``None`` when it is empty or not UTF-8."""
    if not data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def change_sequence(name: str) -> int | None:
    """The sequence number of a ``token_change_NNNNNNNNNN`` child, else ``None``."""
    return parse_sequence(name, CHANGE_PREFIX)
