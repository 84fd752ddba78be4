"""The endpoint's one entry point: serve a configuration until stopped."""

from __future__ import annotations

import sys
from typing import TextIO

from sasl_scram.endpoint._config import JAVA_INT_MAX
from sasl_scram.endpoint._config import EndpointConfig
from sasl_scram.endpoint.runtime._accept import warn_low_descriptor_limit
from sasl_scram.endpoint.runtime._process import run_loop
from sasl_scram.endpoint.runtime._process import serve
from sasl_scram.endpoint.runtime._workers import Supervisor

__all__ = ["run"]


def run(
    config: EndpointConfig, *, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    """Serve ``config`` until SIGTERM or SIGINT, in ``config.workers`` processes
    (``scram.workers``; more than one: a parent forks and restarts them).

    The ready lines (``kafka-scram endpoint ready: NAME host:port``) and the
    bootstrap user's are printed on ``stdout``; logs go to the ``logging``
    handlers the caller set up. Blocks this thread, which must be the main
    one (signals; the event loop is the one ``scram.event.loop`` names).

    Returns:
        0 once stopped by a signal; 1 when a worker failed.

    Raises:
        ScramConfigError: the configuration cannot be served (a port in use,
            an address not on this host, a folder that cannot be made).
        ScramError: the store or a worker failed at start.
    """
    # Once, before the workers: they inherit the limit.
    warn_low_descriptor_limit(config.max_connections, JAVA_INT_MAX)
    out = sys.stdout if stdout is None else stdout
    err = sys.stderr if stderr is None else stderr
    if config.workers > 1:
        return Supervisor(config, out, err).run()
    return run_loop(serve(config, out), config.event_loop)
