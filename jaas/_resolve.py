"""Kafka's ``JaasContext`` rules: which context a client or a broker listener uses."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from jaas._errors import JaasConfigurationError
from jaas._model import Configuration
from jaas._model import Context
from jaas._model import LoginModuleEntry
from jaas._property import parse_property

log = logging.getLogger("jaas")

SASL_JAAS_CONFIG = "sasl.jaas.config"
CLIENT_CONTEXT = "KafkaClient"
SERVER_CONTEXT = "KafkaServer"
JAAS_FILE_PROPERTY = "java.security.auth.login.config"
ALLOWED_LOGIN_MODULES_PROPERTY = "org.apache.kafka.allowed.login.modules"
DISALLOWED_LOGIN_MODULES_PROPERTY = "org.apache.kafka.disallowed.login.modules"
# JaasContext.throwIfLoginModuleIsNotAllowed default (kafka-clients 4.3.0;
# LdapLoginModule joined JndiLoginModule after CVE-2023-25194).
DEFAULT_DISALLOWED_LOGIN_MODULES = frozenset(
    {"com.sun.security.auth.module.JndiLoginModule", "com.sun.security.auth.module.LdapLoginModule"}
)


def _java_trim(text: str) -> str:
    # String.trim() strips every character <= U+0020, not Unicode whitespace.
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def _java_split_list(value: str) -> frozenset[str]:
    # String.split(",") drops trailing empty strings, then each part is trimmed.
    parts = value.split(",")
    if len(parts) > 1:
        while parts and parts[-1] == "":
            parts.pop()
    return frozenset(_java_trim(p) for p in parts)


@dataclass(frozen=True)
class LoginModulePolicy:
    """Which login modules Kafka will load (``throwIfLoginModuleIsNotAllowed``).

    An ``allowed`` list, when set, wins and only its modules may be used.
    Otherwise the ``disallowed`` list (default: JNDI and LDAP login modules)
    is refused.

    Attributes:
        allowed: The ``org.apache.kafka.allowed.login.modules`` list, or None.
        disallowed: The ``org.apache.kafka.disallowed.login.modules`` list
            (deprecated in Kafka 4.x), or None for Kafka's default.
    """

    allowed: frozenset[str] | None = None
    disallowed: frozenset[str] | None = None

    @classmethod
    def from_system_properties(cls, properties: Mapping[str, str]) -> LoginModulePolicy:
        """Build the policy from Java system properties, split as Kafka splits them."""
        allowed = properties.get(ALLOWED_LOGIN_MODULES_PROPERTY)
        disallowed = properties.get(DISALLOWED_LOGIN_MODULES_PROPERTY)
        return cls(
            allowed=None if allowed is None else _java_split_list(allowed),
            disallowed=None if disallowed is None else _java_split_list(disallowed),
        )

    def check(self, entry: LoginModuleEntry) -> None:
        """Raise if Kafka would refuse to load ``entry``'s login module.

        Raises:
            JaasConfigurationError: The module is not allowed; the message is Kafka's.
        """
        name = _java_trim(entry.module)
        if self.allowed is not None:
            if name not in self.allowed:
                raise JaasConfigurationError(
                    f"{name} is not allowed. Update System property "
                    f"'{ALLOWED_LOGIN_MODULES_PROPERTY}' to allow {name}",
                )
            return
        disallowed = self.disallowed
        if disallowed is None:
            disallowed = DEFAULT_DISALLOWED_LOGIN_MODULES
        if name in disallowed:
            raise JaasConfigurationError(
                f"{name} is not allowed. The system property "
                f"'{DISALLOWED_LOGIN_MODULES_PROPERTY}' is deprecated. Use the "
                f"{ALLOWED_LOGIN_MODULES_PROPERTY} to allow this module. "
                f"e.g.,-D{ALLOWED_LOGIN_MODULES_PROPERTY}={name}",
            )


_DEFAULT_POLICY = LoginModulePolicy()


def _from_property(value: str, context_name: str, policy: LoginModulePolicy) -> Context:
    context = parse_property(value, context_name=context_name)
    count = len(context.entries)
    if count != 1:
        # Zero cannot happen: JaasConfig already refuses an empty value.
        raise JaasConfigurationError(
            f"JAAS config property contains {count} login modules, should be 1 module"
        )
    policy.check(context.entries[0])
    return context


def _from_static(
    static: Configuration | None, name: str, fallback: str | None, policy: LoginModulePolicy
) -> Context:
    entries = static.entries(name) if static is not None else None
    found = name
    if entries is None and fallback is not None and static is not None:
        entries = static.entries(fallback)
        found = fallback
    if entries is None:
        path = static.filename if static is not None and static.filename else "not set"
        # JaasContext names the global context first, then the listener's.
        primary = fallback if fallback is not None else name
        alternative = f" or '{name}'" if fallback is not None else ""
        raise JaasConfigurationError(
            f"Could not find a '{primary}'{alternative} entry in the JAAS configuration. "
            f"System property '{JAAS_FILE_PROPERTY}' is {path}"
        )
    for entry in entries:
        policy.check(entry)
    return Context(found, entries)


def load_client_context(
    sasl_jaas_config: str | None,
    static: Configuration | None = None,
    *,
    policy: LoginModulePolicy = _DEFAULT_POLICY,
) -> Context:
    """Resolve a client's JAAS context as ``JaasContext.loadClientContext`` does.

    ``sasl.jaas.config`` wins and must hold exactly one login module;
    otherwise the static file's ``KafkaClient`` context is used.

    Args:
        sasl_jaas_config: The client's ``sasl.jaas.config`` value, if set.
        static: The static JAAS file (``java.security.auth.login.config``).
        policy: The allowed/disallowed login modules.

    Raises:
        JaasSyntaxError: The property does not parse.
        JaasConfigurationError: Kafka refuses the result; the message is Kafka's.
    """
    if sasl_jaas_config is not None:
        return _from_property(sasl_jaas_config, CLIENT_CONTEXT, policy)
    return _from_static(static, CLIENT_CONTEXT, None, policy)


def server_property_name(listener_name: str, mechanism: str) -> str:
    """Return the broker property that holds a listener's JAAS for a mechanism.

    >>> server_property_name("SASL_SSL", "SCRAM-SHA-256")
    'listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config'
    """
    return f"listener.name.{listener_name.lower()}.{mechanism.lower()}.{SASL_JAAS_CONFIG}"


def load_server_context(
    listener_name: str,
    mechanism: str,
    broker_config: Mapping[str, str],
    static: Configuration | None = None,
    *,
    policy: LoginModulePolicy = _DEFAULT_POLICY,
) -> Context:
    """Resolve a broker listener's JAAS context as ``JaasContext.loadServerContext`` does.

    Order: ``listener.name.<listener>.<mechanism>.sasl.jaas.config`` (names
    lower-cased), then the static file's ``<listener>.KafkaServer``, then
    ``KafkaServer``. A bare ``sasl.jaas.config`` on a broker is ignored with
    Kafka's warning.

    Args:
        listener_name: The listener, e.g. ``SASL_SSL``.
        mechanism: The SASL mechanism, e.g. ``SCRAM-SHA-256``.
        broker_config: The broker's properties.
        static: The static JAAS file, if any.
        policy: The allowed/disallowed login modules.

    Raises:
        JaasSyntaxError: The listener property does not parse.
        JaasConfigurationError: Kafka refuses the result; the message is Kafka's.
    """
    value = broker_config.get(server_property_name(listener_name, mechanism))
    if value is not None:
        return _from_property(value, SERVER_CONTEXT, policy)
    if SASL_JAAS_CONFIG in broker_config:
        log.warning(
            "Server config %s should be prefixed with SASL mechanism name, ignoring config",
            SASL_JAAS_CONFIG,
        )
    listener_context = f"{listener_name.lower()}.{SERVER_CONTEXT}"
    return _from_static(static, listener_context, SERVER_CONTEXT, policy)
