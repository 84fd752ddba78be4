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
from sasl_scram.integrations._errors import ListenerError

__all__ = [
    "client_kwargs",
    "installed_while",
    "listener_error",
    "token_login",
    "with_token_hint",
]

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


def listener_error(message: str, client_error: type[Exception]) -> ListenerError:
    """A :class:`ListenerError` that is also ``client_error``, the client's own
    error for a bootstrap that failed, so handlers written for the client still
    catch it. Its text is ``message`` alone, as :func:`check_listener` says it
    (the clients' errors put their class name first)."""
    return _listener_error_type(client_error)(message)


# One combined class per client error type, so that it is the same class each time.
_listener_error_types: dict[type[Exception], type[ListenerError]] = {}


def _listener_error_type(client_error: type[Exception]) -> type[ListenerError]:
    combined = _listener_error_types.get(client_error)
    if combined is not None:
        return combined

    def reduce(self: ListenerError) -> tuple[type[ListenerError], tuple[object, ...]]:
        # Unpickled as the public class: this one has no importable name.
        return ListenerError, self.args

    namespace = {"__str__": BaseException.__str__, "__reduce__": reduce}
    combined = type(ListenerError.__name__, (ListenerError, client_error), namespace)
    combined.__module__ = ListenerError.__module__
    # setdefault: two threads racing here get one class.
    return _listener_error_types.setdefault(client_error, combined)


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
