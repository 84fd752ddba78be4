"""Reading a secret the user typed ``-`` for.

Kafka's tools take secrets as arguments, which leaves them in shell history;
``-`` reads them instead. On a terminal that is :func:`getpass.getpass` (a
prompt, no echo) and, when a credential is being created, a second prompt to
confirm it; from a pipe it is one line.
"""

from __future__ import annotations

import getpass
import sys
from typing import TextIO

from sasl_scram.cli._main import CommandUsageError

__all__ = ["READ_SECRET", "read_secret"]

#: The value that means "read the secret instead of taking it from the command line".
READ_SECRET = "-"  # noqa: S105 - a marker, not a secret


def read_secret(
    stdin: TextIO, prompt: str = "Password: ", *, confirm: bool = False, what: str = "password"
) -> str:
    """Read one secret from ``stdin``: prompted without echo on a terminal.

    Args:
        stdin: Where to read it from when it is not a terminal (one line).
        prompt: The prompt on a terminal.
        confirm: Prompt a second time and require the same secret.
        what: What the secret is called in errors (``password``, ``HMAC``).

    Raises:
        CommandUsageError: no secret (an empty line, the end of the input), or
            ``confirm`` and the two entries differ.
    """
    if not stdin.isatty():
        line = stdin.readline()
        if not line:
            raise CommandUsageError(
                f"no {what} given: standard input ended before a line was read; "
                f"pipe the {what} as one line, or run on a terminal to be prompted"
            )
        secret = line.rstrip("\r\n")
        if not secret:
            raise CommandUsageError(f"no {what} given: the line read from standard input is empty")
        return _utf8(secret, "the line read from standard input", what)
    secret = _prompt(prompt, what)
    if not secret:
        raise CommandUsageError(f"no {what} given")
    if confirm and _prompt("Confirm " + prompt[:1].lower() + prompt[1:], what) != secret:
        raise CommandUsageError(f"the two {what}s differ; run the command again")
    return _utf8(secret, f"the {what} typed", what)


def _utf8(secret: str, where: str, what: str) -> str:
    """``secret`` if it is text; bytes that were not UTF-8 (kept by Python as
    surrogate escapes) cannot be a password: SCRAM hashes its UTF-8 (RFC 5802
    section 2.2, as Kafka's ScramFormatter)."""
    try:
        secret.encode("utf-8")
    except UnicodeEncodeError:
        # The message names no byte of the secret.
        raise CommandUsageError(
            f"{where} is not UTF-8 text; give the {what} in UTF-8 (e.g. convert it with iconv)"
        ) from None
    return secret


def _prompt(prompt: str, what: str) -> str:
    """``getpass``; Ctrl-D is "no password given", Ctrl-C goes on as KeyboardInterrupt.

    Either way the prompt's line is ended first (getpass ends it only after a
    line was typed), so the error that follows starts a line of its own.
    """
    try:
        return getpass.getpass(prompt)
    except EOFError:
        _end_prompt_line()
        raise CommandUsageError(f"no {what} given") from None
    except KeyboardInterrupt:
        _end_prompt_line()
        raise


def _end_prompt_line() -> None:
    # getpass prompts on the controlling terminal when there is one, else on stderr.
    try:
        with open("/dev/tty", "w", encoding="utf-8") as tty:
            tty.write("\n")
    except OSError:
        sys.stderr.write("\n")
