"""The ``kafka-scram`` command: the umbrella parser and the ``configs``,
``credential`` and ``serve`` subcommands.

Other packages add their own subcommands through the ``kafka_scram.commands``
entry-point group (``jaas``, ``delegation-tokens``), so nothing here imports them;
``add_command`` is how each of them adds itself (``jaas`` excepted: it depends
on nothing of ours).
"""

from __future__ import annotations

from sasl_scram.cli._main import (
    EXIT_RULES,
    CommandError,
    CommandUsageError,
    ExitStatus,
    Handler,
    add_command,
    main,
)

__all__ = [
    "EXIT_RULES",
    "CommandError",
    "CommandUsageError",
    "ExitStatus",
    "Handler",
    "add_command",
    "main",
]
