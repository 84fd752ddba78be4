"""The compiled core: the hot modules built by mypyc from their own sources.

``tools/build_native.py`` (``make native``; ``make run``, ``test`` and
``bench`` call it) compiles :data:`tools.build_native.MODULES` with mypyc into
this folder and records each source's SHA-256 in ``manifest.json``. The
compiled modules never sit beside their sources, so they can never shadow a
newer source: :func:`install` puts a finder first on ``sys.meta_path`` only
when every recorded source is unchanged. One module out of date and none is
used, because mypyc's modules call each other natively: a fresh source beside
its stale neighbours would run the neighbours' old code.

Without a build (no C compiler, a plain ``pip install``) or with
``KAFKA_SCRAM_PURE_PYTHON=1``, the same modules run as Python. Behaviour is
the same; the compiled form also checks its annotations at run time.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

__all__ = ["ACTIVE", "PURE_PYTHON_ENV", "install", "status"]

#: Set to any non-empty value to run the pure-Python modules.
PURE_PYTHON_ENV = "KAFKA_SCRAM_PURE_PYTHON"
MANIFEST = Path(__file__).with_name("manifest.json")

log = logging.getLogger("sasl_scram")

#: Whether the compiled modules are in use (set by :func:`install`).
ACTIVE = False
_installed = False
_status = "not installed"


class _CompiledFinder(importlib.abc.MetaPathFinder):
    """Finds the compiled form of exactly the modules the manifest lists."""

    def __init__(self, paths: dict[str, Path]) -> None:
        self._paths = paths

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        so = self._paths.get(fullname)
        if so is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(so))
        return importlib.util.spec_from_file_location(fullname, so, loader=loader)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _fresh_paths(manifest: dict[str, object], root: Path) -> dict[str, Path] | str:
    """Module name -> compiled file when the whole build matches its sources,
    else why not."""
    if manifest.get("cache_tag") != sys.implementation.cache_tag:
        return f"built for {manifest.get('cache_tag')}, this is {sys.implementation.cache_tag}"
    modules = manifest.get("modules")
    if not isinstance(modules, dict) or not modules:
        return "the manifest lists no module"
    paths: dict[str, Path] = {}
    for name, entry in modules.items():
        source = root.joinpath(*name.split(".")).with_suffix(".py")
        compiled = MANIFEST.parent / str(entry["compiled"])
        if not source.is_file() or not compiled.is_file():
            return f"{name}: a file is missing"
        if _sha256(source) != entry["sha256"]:
            return f"{source.relative_to(root)} changed since the build (make native)"
        paths[name] = compiled
    return paths


def install() -> None:
    """Use the compiled modules if they are built from the current sources.

    Runs when this module is first imported (``sasl_scram/__init__.py``
    imports it before anything else); later calls do nothing.
    """
    global ACTIVE, _installed, _status
    if _installed:
        return
    _installed = True
    if os.environ.get(PURE_PYTHON_ENV):
        _status = f"off ({PURE_PYTHON_ENV} is set)"
        return
    try:
        manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    except FileNotFoundError:
        _status = "not built (pure Python)"
        return
    except (OSError, ValueError) as exc:
        _status = f"unreadable manifest ({exc.__class__.__name__}); pure Python"
        log.warning("The compiled core is not used: %s", _status)
        return
    found = _fresh_paths(manifest, MANIFEST.parent.parent.parent)
    if isinstance(found, str):
        # Only a checkout edited after `make native` gets here: say why it is slower.
        _status = f"out of date: {found}; pure Python"
        log.warning("The compiled core is not used: %s", found)
        return
    sys.meta_path.insert(0, _CompiledFinder(found))
    ACTIVE = True
    _status = f"compiled ({len(found)} modules)"


def status() -> str:
    """One line for logs and benchmarks: compiled, or why not."""
    return _status


install()
