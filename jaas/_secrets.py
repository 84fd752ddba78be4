"""Which option values are secrets, and how they are masked."""

from __future__ import annotations

import re

from jaas._known import KNOWN_OPTIONS
from jaas._known import OptionKind
from jaas._known import edit_distance

__all__ = ["MASK", "is_secret_key", "is_secret_option", "mask_value"]

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
# A name this close to one of these words is taken for a misspelling of it
# (passwrod, secert, tokn): its value is as secret as the word's.
_SECRET_WORDS = ("password", "secret", "key", "token", "hmac")
_NEAR = 2


def is_secret_key(key: str | None) -> bool:
    """Return whether values of the option ``key`` are secrets, by its name alone."""
    if key is None:
        return False
    if _SECRET_KEY.search(key) is not None:
        return True
    folded = key.lower()
    return any(edit_distance(folded, word) <= _NEAR for word in _SECRET_WORDS)


def is_secret_option(module: str | None, key: str | None) -> bool:
    """Return whether the value of option ``key`` of login module ``module`` is masked.

    On a login module whose options we know (``ScramLoginModule``), only the
    options known to be harmless are shown: an unknown one may be a misspelled
    password. On any other module the name decides (:func:`is_secret_key`). An
    option with no name (``3=v`` in Kafka's property form) is always masked.
    """
    if key is None:
        return True
    known = KNOWN_OPTIONS.get(module) if module is not None else None
    if known is not None:
        kind = known.get(key)
        return kind is None or kind is OptionKind.SECRET
    return is_secret_key(key)


def mask_value(key: str | None, value: str, module: str | None = None) -> str:
    """Return ``value``, or a fixed mask when option ``key`` of ``module`` is a secret."""
    return MASK if is_secret_option(module, key) else value
