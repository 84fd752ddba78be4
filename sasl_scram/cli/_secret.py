"""Reading a secret the user typed ``-`` for.

Kafka's tools take secrets as arguments, which leaves them in shell history;
``-`` reads them instead. On a terminal that is :func:`getpass.getpass` (a
prompt, no echo) and, when a credential is being created, a second prompt to
confirm it; from a pipe it is one line.
"""

from __future__ import annotations

import getpass
from typing import TextIO

__all__ = ["READ_SECRET", "SecretMismatch", "read_secret"]

#: The value that means "read the secret instead of taking it from the command line".
READ_SECRET = "-"  # noqa: S105 - a marker, not a secret


class SecretMismatch(Exception):
    """The confirmation typed on the terminal differs from the first entry."""


def read_secret(stdin: TextIO, prompt: str = "Password: ", *, confirm: bool = False) -> str:
    """Read one secret from ``stdin``: prompted without echo on a terminal.

    Raises:
        SecretMismatch: ``confirm`` and the two entries differ.
    """
    if not stdin.isatty():
        return stdin.readline().rstrip("\r\n")
    secret = getpass.getpass(prompt)
    if confirm and getpass.getpass("Confirm " + prompt[:1].lower() + prompt[1:]) != secret:
        raise SecretMismatch("the two passwords differ; run the command again")
    return secret
