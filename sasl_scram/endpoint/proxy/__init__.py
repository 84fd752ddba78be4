"""The front door's run time: the asyncio side of a forwarded connection
(:class:`ProxyAdapter`, which carries out the sans-IO
``sasl_scram.frontdoor.ProxyConnection``'s actions), the per-process
:class:`FrontDoor` and its opening at start (:class:`FrontDoorStart`, which
can wait for the cluster), the connections to the cluster, whether each set of
its addresses answers, and the owner tokens' pool."""

from __future__ import annotations

from sasl_scram.endpoint.proxy._forward import FrontDoor
from sasl_scram.endpoint.proxy._forward import ProxyAdapter
from sasl_scram.endpoint.proxy._forward import open_front_door
from sasl_scram.endpoint.proxy._startup import FrontDoorStart

__all__ = [
    "FrontDoor",
    "FrontDoorStart",
    "ProxyAdapter",
    "open_front_door",
]
