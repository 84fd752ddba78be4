"""Which option values are secrets, and how they are masked."""

from __future__ import annotations

import re

__all__ = ["MASK", "is_secret_key", "mask_value"]

MASK = "********"

# Option names whose values must never reach a repr, a log line or an error
# message. ScramLoginModule/PlainLoginModule use "password"; delegation-token
# logins carry the token HMAC as the password; OAuth modules use
# "clientSecret". Spark's KafkaRedactionUtil.redactJaasParam redacts
# "password" the same way. PlainLoginModule's server side keeps each user's
# password in an option "user_<name>" (PlainServerCallbackHandler). Kafka's
# ssl.keystore.key holds a PEM private key (a PASSWORD-type config in SslConfigs).
_SECRET_KEY = re.compile(
    r"passw(or)?d|pwd|secret|hmac|credential|^user_|ssl\.keystore\.key$", re.IGNORECASE
)


def is_secret_key(key: str | None) -> bool:
    """Return whether values of the option ``key`` are secrets."""
    return key is not None and _SECRET_KEY.search(key) is not None


def mask_value(key: str | None, value: str) -> str:
    """Return ``value``, or a fixed mask when ``key`` names a secret."""
    return MASK if is_secret_key(key) else value
