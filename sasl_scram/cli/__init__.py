"""The ``kafka-scram`` command: the umbrella parser and the ``configs``,
``credential`` and ``serve`` subcommands.

Other packages add their own subcommands through the ``kafka_scram.commands``
entry-point group (``jaas``, ``delegation-tokens``), so nothing here imports them;
``add_command`` is how each of them adds itself (``jaas`` excepted: it depends
on nothing of ours).
"""

from __future__ import annotations

# The facade's names are _main's public ones, listed once there, and the
# reading of a secret typed as '-', which other packages' subcommands share.
from sasl_scram.cli import _main
from sasl_scram.cli._main import *  # noqa: F403
from sasl_scram.cli._secret import READ_SECRET
from sasl_scram.cli._secret import read_secret

__all__ = [*_main.__all__, "READ_SECRET", "read_secret"]
