"""The ``kafka-scram`` command: the umbrella parser and the ``configs``,
``credential`` and ``serve`` subcommands.

Other packages add their own subcommands through the ``kafka_scram.commands``
entry-point group (``jaas``, ``delegation-tokens``), so nothing here imports them.
"""

from __future__ import annotations

from sasl_scram.cli._main import (
    ExitStatus,
    main,
)

__all__ = [
    "ExitStatus",
    "main",
]
