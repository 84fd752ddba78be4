"""How higher packages plug into the endpoint without the endpoint importing them.

``tokenauth`` serves the delegation-token RPCs (API keys 38-41) and answers
``tokenauth=true`` logins through an :class:`EndpointExtension` it registers
under the ``kafka_scram.endpoint`` entry-point group: composition at the top,
no upward imports (docs/architecture.md).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

from sasl_scram._server import CredentialRequest, Grant, ScramSession
from sasl_scram.config import KafkaPrincipal

__all__ = [
    "ENTRY_POINT_GROUP",
    "EndpointExtension",
    "Handler",
    "RequestContext",
    "load_extensions",
]

log = logging.getLogger("sasl_scram.endpoint")

ENTRY_POINT_GROUP = "kafka_scram.endpoint"


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

    @property
    def token_authenticated(self) -> bool:
        return self.session.token_authenticated


Handler = Callable[[RequestContext, int, dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass
class EndpointExtension:
    """What an extension contributes.

    Attributes:
        name: For logs.
        handlers: Response builders by API key; the key is advertised in ApiVersions.
        token_grant: Answers ``tokenauth=true`` credential requests.
        close: Called on shutdown.
    """

    name: str
    handlers: dict[int, Handler] = field(default_factory=dict)
    token_grant: Callable[[CredentialRequest], Grant | None] | None = None
    close: Callable[[], None] | None = None


ExtensionFactory = Callable[[Mapping[str, str]], EndpointExtension | None]


def load_extensions(properties: Mapping[str, str]) -> list[EndpointExtension]:
    """Instantiate every installed extension; one that fails to load stops the start.

    A broken extension must not silently drop features (e.g. token logins), so
    errors propagate with the extension's name.
    """
    extensions: list[EndpointExtension] = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        factory: ExtensionFactory = ep.load()
        extension = factory(properties)
        if extension is not None:
            log.info("Endpoint extension %s enabled", extension.name)
            extensions.append(extension)
    return extensions
