"""Kafka's delegation-token configuration (``DelegationTokenManagerConfigs``), plus a secret list.

Keys and defaults are Kafka's (docs/kafka-facts.md §6.1). Beyond Kafka, the
secret may be an ordered list so that it can be rotated like a MultiFernet:

* ``delegation.token.secret.key=new,old`` -- comma-separated, newest first;
* new tokens are signed with the first secret; a token authenticates with the
  HMAC of any listed secret; dropping a secret revokes every HMAC made with it;
* a literal comma in a secret is written ``\\,`` and a literal backslash
  ``\\\\``; any other backslash escape is an error, so an existing secret can
  never be silently misread;
* the value is trimmed (Kafka's ``ConfigDef`` trims PASSWORD values) and so is
  each element; an empty element (``a,,b``, a trailing comma) is an error.

A single secret without commas or backslashes means exactly what it means to
Kafka, so the same properties file can be shared with Kafka brokers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from sasl_scram import ScramConfigError
from sasl_scram.config import ConfigKey
from sasl_scram.config import read_keys
from tokenauth._errors import TokenConfigError

log = logging.getLogger("tokenauth.config")

SECRET_KEY = "delegation.token.secret.key"  # noqa: S105 - a key name, not a secret
# Deprecated alias, read only when SECRET_KEY is absent (KafkaConfig.delegationTokenSecretKey).
MASTER_KEY = "delegation.token.master.key"
MAX_LIFETIME_KEY = "delegation.token.max.lifetime.ms"
EXPIRY_TIME_KEY = "delegation.token.expiry.time.ms"
EXPIRY_CHECK_INTERVAL_KEY = "delegation.token.expiry.check.interval.ms"

# DelegationTokenManagerConfigs defaults.
DEFAULT_MAX_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000
DEFAULT_EXPIRY_TIME_MS = 24 * 60 * 60 * 1000
DEFAULT_EXPIRY_CHECK_INTERVAL_MS = 60 * 60 * 1000

_JAVA_LONG_MIN = -(2**63)
_JAVA_LONG_MAX = 2**63 - 1


class TokenSecrets:
    """An ordered, non-empty list of HMAC secrets; the first signs new tokens.

    The ``repr`` shows only how many secrets there are.

    Args:
        secrets: The secrets, newest first. Each must be non-empty.

    Raises:
        TokenConfigError: no secret, or an empty one.
    """

    __slots__ = ("_keys", "_secrets")

    def __init__(self, secrets: Sequence[str]) -> None:
        if isinstance(secrets, str):
            raise TokenConfigError("TokenSecrets takes a sequence of secrets, not one string")
        items = tuple(secrets)
        if not items:
            raise TokenConfigError("at least one delegation token secret is needed")
        for item in items:
            if not isinstance(item, str) or not item:
                raise TokenConfigError("delegation token secrets must be non-empty strings")
        self._secrets = items
        # HmacSHA512 key = UTF-8 bytes of the secret (DelegationTokenManager.createSecretKey).
        self._keys = tuple(s.encode("utf-8") for s in items)

    def __repr__(self) -> str:
        return f"TokenSecrets(<{len(self._secrets)} redacted>)"

    __str__ = __repr__

    def __len__(self) -> int:
        return len(self._secrets)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TokenSecrets):
            return NotImplemented
        return self._secrets == other._secrets

    def __hash__(self) -> int:
        return hash(self._secrets)

    @property
    def keys(self) -> tuple[bytes, ...]:
        """The HMAC keys (UTF-8 of each secret), newest first."""
        return self._keys

    @property
    def current(self) -> bytes:
        """The key that signs new tokens and that describe reports HMACs with."""
        return self._keys[0]

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._keys)


def parse_secret_list(value: str, key: str = SECRET_KEY) -> tuple[str, ...]:
    """Split a secret-list property value (see the module docstring for the syntax).

    Returns an empty tuple for an empty (or blank) value: tokens disabled.

    Raises:
        TokenConfigError: a bad escape or an empty element; the message names
            ``key`` and a position, never the secret.
    """
    text = value.strip()
    if not text:
        return ()
    items: list[str] = []
    current: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            nxt = text[i + 1 : i + 2]
            if nxt not in (",", "\\"):
                raise TokenConfigError(
                    f"Invalid value for configuration {key}: backslash at position {i} must be "
                    "followed by ',' or '\\' (write \\, for a comma and \\\\ for a backslash)"
                )
            current.append(nxt)
            i += 2
            continue
        if char == ",":
            items.append("".join(current))
            current = []
        else:
            current.append(char)
        i += 1
    items.append("".join(current))
    stripped = [item.strip() for item in items]
    for index, item in enumerate(stripped, 1):
        if not item:
            raise TokenConfigError(
                f"Invalid value for configuration {key}: secret number {index} in the list is empty"
            )
    return tuple(stripped)


def _positive_long(text: str) -> int:
    """ConfigDef's LONG type with atLeast(1); ValueError with Kafka's reason."""
    text = text.strip()  # ConfigDef.parseType trims LONG values
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or not body.isascii() or not body.isdigit():
        raise ValueError("Not a number of type LONG")
    value = int(text)
    if not _JAVA_LONG_MIN <= value <= _JAVA_LONG_MAX:
        raise ValueError("Not a number of type LONG")
    if value < 1:  # atLeast(1) in DelegationTokenManagerConfigs
        raise ValueError("Value must be at least 1")
    return value


def _long_key(value: str, _: Mapping[str, Any]) -> int:
    try:
        return _positive_long(value)
    except ValueError as exc:
        raise ValueError(f"invalid value {value.strip()!r}: {exc}") from None


#: A secret shorter than this gets a WARNING (Kafka accepts any non-empty one): a
#: token's HMAC-SHA512 is public to whoever holds the token, so the secret must
#: resist an offline guess; 32 random characters carry at least 128 bits.
MIN_SECRET_LENGTH = 32


def _secret_list(key: str) -> Callable[[str, Mapping[str, Any]], tuple[str, ...]]:
    def parse(value: str, _: Mapping[str, Any]) -> tuple[str, ...]:
        try:
            secrets = parse_secret_list(value, key)
        except TokenConfigError as exc:
            # The message names a position, never the secret.
            raise ValueError(str(exc).rpartition(f"{key}: ")[2]) from None
        _warn_short(key, secrets)
        return secrets

    return parse


def _warn_short(key: str, secrets: Sequence[str]) -> None:
    """A WARNING naming the short secrets by position: never a secret, nor its length."""
    short = [index for index, secret in enumerate(secrets, 1) if len(secret) < MIN_SECRET_LENGTH]
    if not short:
        return
    if len(secrets) == 1:
        which = "the secret is"
    else:
        which = f"secret number {', '.join(map(str, short))} in the list " + (
            "is" if len(short) == 1 else "are"
        )
    log.warning(
        "%s: %s shorter than %d characters, and whoever holds a token can guess a short "
        "secret offline from its HMAC; use a random one (openssl rand -base64 32)",
        key, which, MIN_SECRET_LENGTH,
    )  # fmt: skip


_LONG = "an integer from 1 to 9223372036854775807 (milliseconds)"
_SECRETS = "a secret, or secrets newest first separated by ',' (write \\, for a comma)"

#: The one table of the token keys, each with its one parser: ``kafka-scram
#: serve`` reads them through the endpoint extension's ``config_keys`` and hands
#: the values to :meth:`TokenConfig.from_values`; :meth:`TokenConfig.from_properties`
#: reads them with the same table.
CONFIG_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey(
        SECRET_KEY,
        None,
        _secret_list(SECRET_KEY),
        _SECRETS,
        "HMAC secret(s) for tokens",
        secret=True,
    ),
    ConfigKey(
        MASTER_KEY,
        None,
        _secret_list(MASTER_KEY),
        _SECRETS,
        f"deprecated alias of {SECRET_KEY}",
        secret=True,
    ),
    ConfigKey(
        MAX_LIFETIME_KEY, str(DEFAULT_MAX_LIFETIME_MS), _long_key, _LONG, "a token's longest life"
    ),
    ConfigKey(
        EXPIRY_TIME_KEY, str(DEFAULT_EXPIRY_TIME_MS), _long_key, _LONG, "the default renew period"
    ),
    ConfigKey(
        EXPIRY_CHECK_INTERVAL_KEY,
        str(DEFAULT_EXPIRY_CHECK_INTERVAL_MS),
        _long_key,
        _LONG,
        "how often expiry is swept",
    ),
)


@dataclass(frozen=True, slots=True)
class TokenConfig:
    """The delegation-token settings of one server process.

    Attributes:
        secrets: The HMAC secrets, newest first, or ``None`` when tokens are
            disabled (Kafka's ``tokenAuthEnabled`` is false).
        max_lifetime_ms: ``delegation.token.max.lifetime.ms``.
        expiry_time_ms: ``delegation.token.expiry.time.ms``, the default renew period.
        expiry_check_interval_ms: ``delegation.token.expiry.check.interval.ms``,
            the sweep period.
    """

    secrets: TokenSecrets | None = field(default=None)
    max_lifetime_ms: int = DEFAULT_MAX_LIFETIME_MS
    expiry_time_ms: int = DEFAULT_EXPIRY_TIME_MS
    expiry_check_interval_ms: int = DEFAULT_EXPIRY_CHECK_INTERVAL_MS

    def __post_init__(self) -> None:
        for name in ("max_lifetime_ms", "expiry_time_ms", "expiry_check_interval_ms"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise TokenConfigError(f"{name} must be an int of at least 1, got {value!r}")

    @property
    def enabled(self) -> bool:
        """Whether delegation tokens are enabled (a non-empty secret is configured)."""
        return self.secrets is not None

    @classmethod
    def of(cls, *secrets: str, **settings: int) -> TokenConfig:
        """Build from secrets given directly (newest first); no escaping involved."""
        return cls(TokenSecrets(secrets) if secrets else None, **settings)

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> TokenConfig:
        """Read Kafka's keys from server properties; other keys are ignored.

        ``delegation.token.master.key`` is used only when
        ``delegation.token.secret.key`` is absent, as in Kafka; a present but
        empty secret key disables tokens.

        Raises:
            TokenConfigError: a value is invalid; the message is the one
                ``kafka-scram serve`` gives (:data:`CONFIG_KEYS`): the file and
                line when ``props`` knows them, the key, what is accepted.
        """
        try:
            values = read_keys(CONFIG_KEYS, props, getattr(props, "origins", {}))
        except ScramConfigError as exc:
            raise TokenConfigError(str(exc)) from None
        return cls.from_values(values)

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> TokenConfig:
        """Build from the values :data:`CONFIG_KEYS` parsed (``read_keys``), by key name.

        ``kafka-scram serve`` parses every key once, with its table entry, and
        hands the token extension these values.
        """
        secrets = values[SECRET_KEY]
        if secrets is None:  # absent, not empty: Kafka falls back to the alias
            secrets = values[MASTER_KEY]
        return cls(
            TokenSecrets(secrets) if secrets else None,
            max_lifetime_ms=values[MAX_LIFETIME_KEY],
            expiry_time_ms=values[EXPIRY_TIME_KEY],
            expiry_check_interval_ms=values[EXPIRY_CHECK_INTERVAL_KEY],
        )
