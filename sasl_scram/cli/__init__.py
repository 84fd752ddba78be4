"""The ``kafka-scram`` command: the umbrella parser and the ``configs``,
``credential`` and ``serve`` subcommands.

Other packages add their own subcommands through the ``kafka_scram.commands``
entry-point group (``jaas``, ``delegation-tokens``), so nothing here imports them;
``add_command`` is how each of them adds itself (``jaas`` excepted: it depends
on nothing of ours).
"""

from __future__ import annotations

# The facade's names are _main's public ones, listed once there.
from sasl_scram.cli._main import *  # noqa: F403
from sasl_scram.cli._main import __all__ as __all__
