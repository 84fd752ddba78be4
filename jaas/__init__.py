"""Read, check and write Kafka JAAS configuration exactly as Kafka and the JDK do.

Two parsers: :func:`parse_property` for a ``sasl.jaas.config`` value (Kafka's
``JaasConfig``) and :func:`parse_file` for a static JAAS file (the JDK's
``ConfigFile``). Both accept and reject what Java accepts and rejects and
return the same typed model; errors point at the offending token. The render
functions write the model back; :func:`load_client_context` and
:func:`load_server_context` apply Kafka's ``JaasContext`` rules.

This package depends on the standard library only.
"""

from __future__ import annotations

from jaas._errors import (
    JaasConfigurationError,
    JaasCredentialsError,
    JaasError,
    JaasSyntaxError,
)
from jaas._file import parse_file
from jaas._model import Configuration, Context, ControlFlag, LoginModuleEntry
from jaas._property import parse_property
from jaas._render import (
    SCRAM_LOGIN_MODULE,
    quote,
    render_entry,
    render_file,
    render_property,
    scram_login_line,
    scram_token_login_line,
)
from jaas._resolve import (
    ALLOWED_LOGIN_MODULES_PROPERTY,
    CLIENT_CONTEXT,
    DEFAULT_DISALLOWED_LOGIN_MODULES,
    DISALLOWED_LOGIN_MODULES_PROPERTY,
    SASL_JAAS_CONFIG,
    SERVER_CONTEXT,
    LoginModulePolicy,
    load_client_context,
    load_server_context,
    server_property_name,
)
from jaas._scram import ScramLoginCredentials
from jaas._secrets import is_secret_key

__all__ = [
    "ALLOWED_LOGIN_MODULES_PROPERTY",
    "CLIENT_CONTEXT",
    "DEFAULT_DISALLOWED_LOGIN_MODULES",
    "DISALLOWED_LOGIN_MODULES_PROPERTY",
    "SASL_JAAS_CONFIG",
    "SCRAM_LOGIN_MODULE",
    "SERVER_CONTEXT",
    "Configuration",
    "Context",
    "ControlFlag",
    "JaasConfigurationError",
    "JaasCredentialsError",
    "JaasError",
    "JaasSyntaxError",
    "LoginModuleEntry",
    "LoginModulePolicy",
    "ScramLoginCredentials",
    "is_secret_key",
    "load_client_context",
    "load_server_context",
    "parse_file",
    "parse_property",
    "quote",
    "render_entry",
    "render_file",
    "render_property",
    "scram_login_line",
    "scram_token_login_line",
    "server_property_name",
]
