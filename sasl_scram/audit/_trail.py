"""Audit lines in the shape of Kafka's authorizer log.

``AclAuthorizer.logAuditMessage`` writes::

    Principal = User:alice is Denied Operation = Alter from host = 127.0.0.1
    on resource = Cluster:LITERAL:kafka-cluster for request = AlterUserScramCredentials
    with resourceRefCount = 1

(one line). Ours keeps every field and its order; the ``with`` part carries
what the line is about instead of the reference count (the mechanism of a
credential change, a token's id, the outcome as a Kafka error name).
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Callable
from collections.abc import Sequence
from typing import ParamSpec

from sasl_scram.config import KafkaPrincipal
from sasl_scram.kafka import ApiKey
from sasl_scram.kafka import ErrorCode
from sasl_scram.kafka import message_spec

#: The logger every audit line goes to (Kafka's is ``kafka.authorizer.logger``).
AUDIT_LOGGER_NAME = "kafka_scram.audit"

_log = logging.getLogger(AUDIT_LOGGER_NAME)

#: Kafka's ``ResourcePattern`` of an exact name, as ``SecurityUtils`` prints it.
_LITERAL = "LITERAL"

Details = Sequence[tuple[str, object]]


def escape(text: str) -> str:
    """``text`` safe for one field of an audit line.

    A backslash, and every control, format, separator or unassigned character
    (Unicode categories C* and Z*: line breaks, U+2028, bidirectional overrides,
    and the space itself) become ``\\xNN``, ``\\uNNNN`` or ``\\UNNNNNNNN``. Every
    delimiter of the line (`` is ``, `` Operation = ``, `` on resource = `` ...)
    holds a space, so an escaped value can imitate none of them, nor end the line.
    """
    out: list[str] = []
    for char in text:
        if char == "\\":
            out.append("\\\\")
        elif unicodedata.category(char)[0] in "CZ":
            code = ord(char)
            out.append(
                f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000
                else f"\\U{code:08x}"
            )  # fmt: skip
        else:
            out.append(char)
    return "".join(out)


def request_name(api_key: int) -> str:
    """Kafka's name of a request (``ApiKeys.name``): ``AlterUserScramCredentials``."""
    try:
        key = ApiKey(api_key)
    except ValueError:
        try:
            return message_spec(api_key).name
        except KeyError:
            return str(api_key)
    return "".join(word.capitalize() for word in key.name.split("_"))


def error_name(code: int) -> str:
    """Kafka's name of an error code (``Errors``: ``TOPIC_ALREADY_EXISTS``), or
    the number of one newer than our table."""
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)


def _principal(principal: KafkaPrincipal) -> str:
    return f"{escape(principal.principal_type)}:{escape(principal.name)}"


def _details(details: Details) -> str:
    if not details:
        return ""
    return " with " + ", ".join(f"{name} = {escape(str(value))}" for name, value in details)


def audit_message(
    principal: KafkaPrincipal,
    allowed: bool,
    operation: str,
    host: str,
    resource: tuple[str, str],
    request: str,
    details: Details = (),
    pattern: str = _LITERAL,
) -> str:
    """One audit line (without logging it).

    Args:
        principal: Who asked (``User:alice``).
        allowed: Whether the request was served (``Allowed``) or refused (``Denied``).
        operation: Kafka's ACL operation name, as ``SecurityUtils.operationName``
            spells it (``Alter``, ``Describe``, ``CreateTokens``), or the token
            operation (``Renew``, ``Expire``).
        host: The client's address (``127.0.0.1``); empty when unknown.
        resource: Resource type and name: ``("User", "bob")``,
            ``("Cluster", "kafka-cluster")``, ``("DelegationToken", token_id)``.
        request: Kafka's request name (:func:`request_name`).
        details: ``(name, value)`` pairs for the ``with`` part; never a secret.
        pattern: The resource's pattern type (``PREFIXED`` for an ACL on a
            prefix); ``LITERAL``, an exact name, for every other line.
    """
    kind, name = resource
    return (
        f"Principal = {_principal(principal)} is {'Allowed' if allowed else 'Denied'} "
        f"Operation = {operation} from host = {escape(host) or 'unknown'} "
        f"on resource = {kind}:{pattern}:{escape(name)} for request = {request}"
        f"{_details(details)}"
    )


_P = ParamSpec("_P")


def _logged(build: Callable[_P, str]) -> Callable[_P, None]:
    """``build``'s line, logged at INFO on :data:`AUDIT_LOGGER_NAME`; built only
    when that level is on."""

    def log(*args: _P.args, **kwargs: _P.kwargs) -> None:
        if _log.isEnabledFor(logging.INFO):
            _log.info("%s", build(*args, **kwargs))

    log.__doc__ = f"Log the line of :func:`{build.__name__}` at INFO on ``kafka_scram.audit``."
    return log


#: :func:`audit_message`'s line, logged at INFO on :data:`AUDIT_LOGGER_NAME`.
audit = _logged(audit_message)


def event_message(event: str, resource: tuple[str, str], details: Details = ()) -> str:
    """The line of what the server did by itself, with no request behind it (a
    token the expiry sweep removed): ``Event = TokenExpired on resource = ... with ...``."""
    kind, name = resource
    return f"Event = {event} on resource = {kind}:{_LITERAL}:{escape(name)}{_details(details)}"


#: :func:`event_message`'s line, logged at INFO on :data:`AUDIT_LOGGER_NAME`.
audit_event = _logged(event_message)
