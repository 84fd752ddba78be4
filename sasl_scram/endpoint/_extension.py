"""How higher packages plug into the endpoint without the endpoint importing them.

``tokenauth`` serves the delegation-token RPCs (API keys 38-41) and answers
``tokenauth=true`` logins through an :class:`EndpointExtension` it registers
under the ``kafka_scram.endpoint`` entry-point group: the program is composed at
the top, and no lower package imports a higher one. A factory may carry a
``config_keys`` attribute, the :class:`~sasl_scram.config.ConfigKey` entries it
reads, so ``server.properties`` validation knows them without importing it;
such a factory is then called with the values the table parsed as its second
argument, so no key is parsed twice.

Only the extensions ``scram.endpoint.extensions`` names are loaded (by default
the built-in ``tokens``): an entry point is code that runs inside the
authentication server, and any distribution installed beside ours could
register one. The others are never imported; their names are only listed, to
say which are installed when a name is unknown (docs/security.md).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from importlib.metadata import entry_points
from typing import Any

from sasl_scram._server import CredentialRequest
from sasl_scram._server import Grant
from sasl_scram._server import ScramSession
from sasl_scram.config import ConfigKey
from sasl_scram.config import KafkaPrincipal
from sasl_scram.config import read_keys

__all__ = [
    "DEFAULT_EXTENSIONS",
    "ENTRY_POINT_GROUP",
    "EXTENSIONS_KEY",
    "CloseRequest",
    "EndpointExtension",
    "Handler",
    "RequestContext",
    "extension_factories",
    "extension_names",
    "factory_keys",
    "installed_extensions",
    "load_extensions",
]

log = logging.getLogger("sasl_scram.endpoint")

ENTRY_POINT_GROUP = "kafka_scram.endpoint"
#: The extensions ``serve`` loads, by entry-point name, comma-separated.
EXTENSIONS_KEY = "scram.endpoint.extensions"
#: The one this distribution registers (``tokenauth``'s delegation tokens).
DEFAULT_EXTENSIONS = "tokens"


@dataclass(frozen=True, slots=True)
class RequestContext:
    """Who is asking, on which listener (what Kafka's ``RequestContext`` carries)."""

    principal: KafkaPrincipal
    session: ScramSession
    security_protocol: str
    listener_name: str
    super_user: bool
    client_id: str | None
    connection_id: str
    #: The client's address as Kafka's authorizer logs it (``127.0.0.1``, no
    #: port); empty when the transport has none.
    client_host: str = ""

    @property
    def token_authenticated(self) -> bool:
        return self.session.token_authenticated


Handler = Callable[[RequestContext, int, dict[str, Any]], Awaitable[dict[str, Any]]]


class CloseRequest(Exception):
    """A handler's request Kafka would not parse: the connection closes without
    an answer (as ``RequestContext.parseRequest`` fails it), logged with this reason."""


@dataclass
class EndpointExtension:
    """What an extension contributes.

    Attributes:
        name: For logs.
        handlers: Response builders by API key; the key is advertised in ApiVersions.
        token_grant: Answers ``tokenauth=true`` credential requests.
        close: Called on shutdown.
        token_grant_may_block: Whether ``token_grant`` would do heavy work for
            this request (a token's first login derives its keys with PBKDF2):
            then it runs in a thread, off the event loop.
    """

    name: str
    handlers: dict[int, Handler] = field(default_factory=dict)
    token_grant: Callable[[CredentialRequest], Grant | None] | None = None
    close: Callable[[], None] | None = None
    token_grant_may_block: Callable[[CredentialRequest], bool] | None = None


#: ``factory(properties)``, or ``factory(properties, settings)`` for a factory
#: with ``config_keys`` (``settings``: each key's parsed value, by name).
ExtensionFactory = Callable[..., EndpointExtension | None]


def installed_extensions() -> tuple[str, ...]:
    """The names of the installed extensions, sorted; none of them is imported."""
    return tuple(sorted({ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}))


def extension_names(value: str, _: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """``scram.endpoint.extensions``'s parser: the names, in order, each once.

    Raises:
        ValueError: a name no installed distribution registers, with the
            names that are installed.
    """
    names = tuple(dict.fromkeys(name.strip() for name in value.split(",") if name.strip()))
    installed = installed_extensions()
    unknown = [name for name in names if name not in installed]
    if unknown:
        listed = ", ".join(installed) if installed else "none"
        raise ValueError(
            f"unknown endpoint extension {', '.join(map(repr, unknown))}; installed: {listed}"
        )
    return names


def extension_factories(names: Sequence[str] | None = None) -> list[ExtensionFactory]:
    """The factories of the extensions ``names`` (default: :data:`DEFAULT_EXTENSIONS`),
    in that order; only those entry points are imported.

    Raises:
        ValueError: a name that is not installed.
    """
    wanted = extension_names(DEFAULT_EXTENSIONS) if names is None else tuple(names)
    found = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name in wanted}
    missing = [name for name in wanted if name not in found]
    if missing:
        extension_names(",".join(missing))  # raises, naming the installed ones
    return [found[name].load() for name in wanted]


def factory_keys(factory: ExtensionFactory) -> tuple[ConfigKey, ...]:
    """The configuration keys ``factory`` reads (its ``config_keys``, if any)."""
    return tuple(getattr(factory, "config_keys", ()))


def load_extensions(
    properties: Mapping[str, str], settings: Mapping[str, Any] | None = None
) -> list[EndpointExtension]:
    """Instantiate the extensions ``scram.endpoint.extensions`` names; one that fails
    to load stops the start.

    A broken extension must not silently drop features (e.g. token logins), so
    errors propagate with the extension's name.

    Args:
        properties: The server properties.
        settings: The values ``EndpointConfig`` parsed (its ``settings``); a
            factory with ``config_keys`` gets them. Without them its keys are
            read here, with the same table.
    """
    if settings is not None and EXTENSIONS_KEY in settings:
        names: tuple[str, ...] = settings[EXTENSIONS_KEY]
    else:
        names = extension_names(properties.get(EXTENSIONS_KEY, DEFAULT_EXTENSIONS))
    extensions: list[EndpointExtension] = []
    for factory in extension_factories(names):
        keys = factory_keys(factory)
        if keys:
            parsed = settings
            if parsed is None:
                parsed = read_keys(keys, properties, getattr(properties, "origins", {}))
            extension = factory(properties, parsed)
        else:
            extension = factory(properties)
        if extension is not None:
            # "loaded", not "enabled": the extension says itself what it enables
            # (delegation tokens stay disabled without their secret key).
            log.info("Endpoint extension %s loaded", extension.name)
            extensions.append(extension)
    return extensions
