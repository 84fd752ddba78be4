"""The front door's run time: the asyncio side of a forwarded connection
(:class:`ProxyAdapter`, which carries out the sans-IO
``sasl_scram.frontdoor.ProxyConnection``'s actions), the per-process
:class:`FrontDoor`, the connections to the cluster and the owner tokens' pool."""

from __future__ import annotations

from sasl_scram.endpoint.proxy._forward import FrontDoor
from sasl_scram.endpoint.proxy._forward import ProxyAdapter
from sasl_scram.endpoint.proxy._forward import open_front_door

__all__ = [
    "FrontDoor",
    "ProxyAdapter",
    "open_front_door",
]
