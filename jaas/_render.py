"""Write the model back out as JAAS text that both Java parsers read back identically."""

from __future__ import annotations

import re
from collections.abc import Iterable

from jaas._known import SCRAM_LOGIN_MODULE
from jaas._model import Configuration
from jaas._model import Context
from jaas._model import LoginModuleEntry
from jaas._secrets import MASK
from jaas._secrets import is_secret_option

# A bare word both tokenizers read back unchanged: it starts with a letter,
# '_', '$' or a character >= 0xA0 (not '-', which StreamTokenizer reads as a
# number sign first) and continues with word characters, digits, '.' or '-'.
# '*' is a word character only in files, and 0x80-0x9F are ordinary
# characters, so both are quoted.
_WORD = re.compile(r"[A-Za-z_$\u00a0-\U0010ffff][A-Za-z0-9_$.\-\u00a0-\U0010ffff]*")
_BARE_VALUES = frozenset({"true", "false"})
_ESCAPE = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _is_word(text: str) -> bool:
    return _WORD.fullmatch(text) is not None


def quote(text: str) -> str:
    """Return ``text`` as a double-quoted JAAS string.

    Escapes ``"`` and ``\\`` and writes control characters as escapes, since a
    raw line break would end the string (StreamTokenizer stops at CR and LF).
    """
    out = ['"']
    for ch in text:
        if ch in _ESCAPE:
            out.append(_ESCAPE[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            # Always three octal digits, so a following digit is not absorbed.
            out.append(f"\\{ord(ch):03o}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _name(text: str) -> str:
    return text if _is_word(text) else quote(text)


def _value(module: str, key: str | None, value: str, mask: bool) -> str:
    if mask and is_secret_option(module, key):
        return quote(MASK)
    # Kafka's documentation writes flags such as tokenauth=true bare.
    return value if value in _BARE_VALUES else quote(value)


def _options(entry: LoginModuleEntry, mask: bool) -> list[str]:
    parts = [f"{_name(k)}={_value(entry.module, k, v, mask)}" for k, v in entry.options.items()]
    if entry.null_key_value is not None:
        # Kafka stores a number used as a name under a null key; "0" is read
        # back that way. The JDK's file parser rejects it.
        parts.append(f"0={_value(entry.module, None, entry.null_key_value, mask)}")
    return parts


def render_entry(entry: LoginModuleEntry, *, mask_secrets: bool = False) -> str:
    """Render one entry on one line, ending with ``;``.

    Args:
        entry: The entry.
        mask_secrets: Replace secret values (passwords, HMACs, and any option
            a known login module does not read) with a mask.
    """
    head = f"{_name(entry.module)} {entry.flag.value}"
    return " ".join([head, *_options(entry, mask_secrets)]) + ";"


def render_property(
    entries: Context | LoginModuleEntry | Iterable[LoginModuleEntry], *, mask_secrets: bool = False
) -> str:
    """Render a ``sasl.jaas.config`` value.

    ``parse_property(render_property(x))`` gives back the same entries.

    Args:
        entries: One entry, several, or a context.
        mask_secrets: Replace secret values with a mask (for display only).
    """
    if isinstance(entries, LoginModuleEntry):
        entries = [entries]
    return " ".join(render_entry(e, mask_secrets=mask_secrets) for e in entries)


def render_file(config: Configuration | Context, *, mask_secrets: bool = False) -> str:
    """Render a static JAAS file in the layout of Kafka's documentation.

    ``parse_file(render_file(x)) == x`` when nothing is expanded. Values are
    written verbatim, so a ``${name}`` in a value is expanded by the JDK.

    Args:
        config: A configuration or a single context.
        mask_secrets: Replace secret values with a mask (for display only).

    Raises:
        ValueError: An entry has a ``null_key_value``, which only the
            property parser can produce and a file cannot hold.
    """
    contexts = [config] if isinstance(config, Context) else list(config.contexts)
    blocks = []
    for context in contexts:
        # A null name comes from a number in the name position; "0" reads back so.
        name = "0" if context.name is None else _name(context.name)
        lines = [f"{name} {{"]
        for entry in context.entries:
            if entry.null_key_value is not None:
                raise ValueError("an option with a null name cannot be written to a JAAS file")
            options = _options(entry, mask_secrets)
            head = f"    {_name(entry.module)} {entry.flag.value}"
            if not options:
                lines.append(head + ";")
                continue
            lines.append(head)
            lines.extend(f"    {opt}" for opt in options[:-1])
            lines.append(f"    {options[-1]};")
        lines.append("};")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n" if blocks else ""


def scram_login_line(username: str, password: str) -> str:
    """Return the ``sasl.jaas.config`` value for a SCRAM user.

    >>> scram_login_line("alice", "alice-secret")
    'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="alice-secret";'
    """  # noqa: E501
    return f"{SCRAM_LOGIN_MODULE} required username={quote(username)} password={quote(password)};"


def scram_token_login_line(token_id: str, hmac_b64: str) -> str:
    """Return the ``sasl.jaas.config`` value for a delegation token.

    Kafka's ScramLoginModule marks the login as token authentication when
    ``tokenauth`` is ``true``; the token id is the username and the base64
    HMAC the password (quoted, since base64 contains ``/``, ``+`` and ``=``).
    """
    return (
        f"{SCRAM_LOGIN_MODULE} required tokenauth=true "
        f"username={quote(token_id)} password={quote(hmac_b64)};"
    )
