"""The endpoint's run time: the asyncio server (:class:`ScramEndpoint`), each
listener's accept loop, one endpoint process, the parent of ``scram.workers``
worker processes, and :func:`run`."""

from __future__ import annotations

from sasl_scram.endpoint.runtime._bootstrap import BootstrapFiles
from sasl_scram.endpoint.runtime._bootstrap import ensure_bootstrap_user
from sasl_scram.endpoint.runtime._process import LOG_FORMAT
from sasl_scram.endpoint.runtime._run import run
from sasl_scram.endpoint.runtime._server import ScramEndpoint

__all__ = [
    "LOG_FORMAT",
    "BootstrapFiles",
    "ScramEndpoint",
    "ensure_bootstrap_user",
    "run",
]
