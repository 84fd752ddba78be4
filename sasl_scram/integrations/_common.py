"""What the patching integrations (kafka-python, aiokafka) build the same way.

Both clients take the same keyword names for the connection: a list of
``bootstrap_servers``, ``security_protocol``, ``sasl_mechanism``,
``ssl_context``, and ``sasl_oauth_token_provider``, the one setting that
carries an arbitrary object to the SASL code and that non-OAUTHBEARER
mechanisms ignore. That is where the credentials provider travels.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from sasl_scram.integrations._config import ConfigSource
from sasl_scram.integrations._config import resolve
from sasl_scram.integrations._credentials import CredentialsSource
from sasl_scram.integrations._errors import LOGIN_FIXES
from sasl_scram.integrations._errors import Cause
from sasl_scram.integrations._errors import IntegrationError

__all__ = ["client_kwargs", "installed_while", "token_login", "with_token_hint"]

#: Whether the login running in this task is a delegation token's: the SCRAM
#: mechanism sets it when it fetches the credentials, within the client's login
#: coroutine, which reads it when the login is refused.
token_login: ContextVar[bool] = ContextVar("kafka_scram_token_login", default=False)


def with_token_hint(exc: Exception, address: str) -> Exception:
    """A refused token login's error again, of its own type, followed by how to
    check whether the token expired: Kafka refuses an expired token with the
    same "invalid credentials" as a wrong password (ScramSaslServer). A user's
    refused login gets ``exc`` itself."""
    if not token_login.get():
        return exc
    message = exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc)
    hint = LOGIN_FIXES[Cause.TOKEN_REFUSED].format(bootstrap=address or "<broker host:port>")
    return type(exc)(f"{message}; {hint}")


@contextmanager
def installed_while(
    install: Callable[..., None], uninstall: Callable[[], None], **options: Any
) -> Iterator[None]:
    """``install(**options)`` for the duration of a ``with`` block, then ``uninstall()``."""
    install(**options)
    try:
        yield
    finally:
        uninstall()


def client_kwargs(
    config: ConfigSource,
    *,
    credentials: CredentialsSource | None,
    bootstrap_servers: str | None,
    is_installed: Callable[[], bool],
    not_installed: str,
) -> dict[str, Any]:
    """The keyword arguments of a kafka-python or aiokafka client.

    Args:
        config: A ``client.properties`` path, its properties, or a ``ClientConfig``.
        credentials: Credentials or a provider; overrides ``sasl.jaas.config``.
        bootstrap_servers: Overrides ``bootstrap.servers``; checked as it is.
        is_installed: Whether the integration's SCRAM is installed in the client.
        not_installed: The error message when SASL is configured but it is not.

    Raises:
        ClientConfigError: A property is missing or invalid; the message names it.
        IntegrationError: SASL is configured but the integration is not installed:
            the client's own SCRAM cannot use a credentials provider.
    """
    cfg, provider = resolve(config, credentials)
    kwargs: dict[str, Any] = {
        "bootstrap_servers": cfg.bootstrap_list(bootstrap_servers),
        "security_protocol": cfg.security_protocol,
    }
    if provider is not None:
        if not is_installed():
            raise IntegrationError(not_installed)
        kwargs["sasl_mechanism"] = cfg.mechanism_name
        kwargs["sasl_oauth_token_provider"] = provider
    context = cfg.ssl_context()
    if context is not None:
        kwargs["ssl_context"] = context
    return kwargs
