"""How to install one of this package's extras, as a command that runs here.

kafka-scram is on no package index, so ``pip install 'kafka-scram[server]'``
finds nothing. An extra installs from where the package itself came from:

- this source tree, when the package runs from a checkout (``pip install -e
  .``, or the tree on ``PYTHONPATH``): ``pip install -e '<tree>[server]'``;
- else the directory or file pip installed it from, as pip recorded it
  (PEP 610's ``direct_url.json``): ``pip install '<it>[server]'``;
- else, where neither is known: ``pip install '.[server]'`` in the source tree.

Each command runs the pip of the interpreter running this code, so that the
extra lands where the package is.
"""

from __future__ import annotations

import json
import shlex
import sys
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote
from urllib.parse import urlparse

__all__ = ["install_hint", "install_source"]

_DISTRIBUTION = "kafka-scram"
#: This file is <tree>/sasl_scram/config/_extras.py.
_TREE = Path(__file__).resolve().parents[2]


def _checkout() -> Path | None:
    """The source tree this package runs from, if it runs from one."""
    pyproject = _TREE / "pyproject.toml"
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return None
    return _TREE if f'name = "{_DISTRIBUTION}"' in text else None


def _installed_from() -> tuple[Path, bool] | None:
    """Where pip installed the package from (a folder or a file that still
    exists), and whether editable; ``None`` when pip did not record it."""
    try:
        recorded = metadata.distribution(_DISTRIBUTION).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not recorded:
        return None
    try:
        direct = json.loads(recorded)
        url = urlparse(direct["url"])
    except (ValueError, KeyError, TypeError):
        return None
    if url.scheme != "file":
        return None
    path = Path(unquote(url.path))
    editable = bool((direct.get("dir_info") or {}).get("editable"))
    return (path, editable) if path.exists() else None


def install_source() -> tuple[str, bool] | None:
    """What pip installs this package from here (a path), and whether it is
    installed editable; ``None`` when unknown."""
    tree = _checkout()
    if tree is not None:
        return str(tree), True
    found = _installed_from()
    if found is None:
        return None
    return str(found[0]), found[1]


def install_hint(extra: str) -> str:
    """``install the [extra] extra: <a command that does>``, for a message that
    names what is missing."""
    source = install_source()
    if source is None:
        return (
            f"install the [{extra}] extra: pip install '.[{extra}]' in the kafka-scram "
            "source tree (kafka-scram is on no package index)"
        )
    path, editable = source
    pip = f"{shlex.quote(sys.executable)} -m pip install"
    flag = "-e " if editable else ""
    return f"install the [{extra}] extra: {pip} {flag}{shlex.quote(f'{path}[{extra}]')}"
