"""Read, check and write Kafka JAAS configuration exactly as Kafka and the JDK do.

Two parsers: :func:`parse_property` for a ``sasl.jaas.config`` value (Kafka's
``JaasConfig``) and :func:`parse_file` for a static JAAS file (the JDK's
``ConfigFile``). Both accept and reject what Java accepts and rejects and
return the same typed model; errors point at the offending token. The render
functions write the model back; :func:`load_client_context` and
:func:`load_server_context` apply Kafka's ``JaasContext`` rules;
:func:`option_warnings` names the options a known login module ignores.

This package depends on the standard library only.
"""

from __future__ import annotations

from jaas._errors import JaasConfigurationError
from jaas._errors import JaasCredentialsError
from jaas._errors import JaasError
from jaas._errors import JaasSyntaxError
from jaas._file import parse_file
from jaas._known import SCRAM_LOGIN_MODULE
from jaas._model import Configuration
from jaas._model import Context
from jaas._model import ControlFlag
from jaas._model import LoginModuleEntry
from jaas._options import OptionWarning
from jaas._options import option_warnings
from jaas._property import parse_property
from jaas._render import quote
from jaas._render import render_entry
from jaas._render import render_file
from jaas._render import render_property
from jaas._render import scram_login_line
from jaas._render import scram_token_login_line
from jaas._resolve import ALLOWED_LOGIN_MODULES_PROPERTY
from jaas._resolve import CLIENT_CONTEXT
from jaas._resolve import DEFAULT_DISALLOWED_LOGIN_MODULES
from jaas._resolve import DISALLOWED_LOGIN_MODULES_PROPERTY
from jaas._resolve import SASL_JAAS_CONFIG
from jaas._resolve import SERVER_CONTEXT
from jaas._resolve import LoginModulePolicy
from jaas._resolve import load_client_context
from jaas._resolve import load_server_context
from jaas._resolve import server_property_name
from jaas._scram import ScramLoginCredentials
from jaas._secrets import is_secret_key
from jaas._secrets import is_secret_option

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
    "OptionWarning",
    "ScramLoginCredentials",
    "is_secret_key",
    "is_secret_option",
    "load_client_context",
    "load_server_context",
    "option_warnings",
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
