"""The compiled core: the hot modules built by mypyc from their own sources.

``tools/build_native.py`` (``pip install``, a wheel build and ``make native``
run it) compiles :data:`tools.build_native.MODULES` with mypyc into
this folder and records each source's SHA-256, size and modification time in
``manifest.json``. The compiled modules never sit beside their sources, so
they can never shadow a newer source: :func:`install` puts a finder first on
``sys.meta_path`` only when every recorded source is unchanged. A source whose
size and mtime are those recorded is taken as unchanged without reading it
(what ``make`` trusts too), so an import costs a ``stat`` per source; only a
source whose stat differs is hashed, and it counts as changed only when its
SHA-256 does too (a checkout that touched it, a wheel install whose files have
new times, an old manifest without stat data). One module out of date and none is
used, because mypyc's modules call each other natively: a fresh source beside
its stale neighbours would run the neighbours' old code.

Without a build (no C compiler or Python headers at install: then
:data:`NOT_BUILT_NOTE` says so) or with ``KAFKA_SCRAM_PURE_PYTHON=1``, the
same modules run as Python. Behaviour is
the same; the compiled form also checks its annotations at run time.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from stat import S_ISREG
from types import ModuleType

__all__ = [
    "ACTIVE",
    "NOT_BUILT",
    "NOT_BUILT_NOTE",
    "PURE_PYTHON_ENV",
    "compiled_modules",
    "install",
    "source_digest",
    "source_of",
    "source_stamp",
    "status",
]

#: Set to any non-empty value to run the pure-Python modules.
PURE_PYTHON_ENV = "KAFKA_SCRAM_PURE_PYTHON"
MANIFEST = Path(__file__).with_name("manifest.json")
#: Why an install built nothing (no compiler, no headers), written by the build.
NOT_BUILT_NOTE = MANIFEST.with_name("not-built.txt")
#: The checkout (or site-packages) that holds the ``sasl_scram`` package.
ROOT = MANIFEST.parent.parent.parent
#: What :func:`compiled_modules` says when there is no build at all.
NOT_BUILT = "not built"

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


def source_of(module: str) -> Path:
    """The source file of a dotted module name under :data:`ROOT`."""
    return ROOT.joinpath(*module.split(".")).with_suffix(".py")


def source_digest(path: Path) -> str:
    """What the manifest records of a source's content: its SHA-256."""
    import hashlib  # only when a stat differs: most imports never need it

    return hashlib.sha256(path.read_bytes()).hexdigest()


def source_stamp(stat: os.stat_result) -> dict[str, int]:
    """What the manifest records of a source's ``stat``, to skip hashing it."""
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _unchanged(source: Path, entry: dict[str, object]) -> bool | None:
    """Whether ``source`` is the one recorded in ``entry``; ``None`` when it is missing."""
    try:
        stat = source.stat()
    except OSError:
        return None
    if not S_ISREG(stat.st_mode):
        return None
    recorded = {key: entry.get(key) for key in ("size", "mtime_ns")}
    if source_stamp(stat) == recorded:
        return True
    return source_digest(source) == entry["sha256"]


def compiled_modules() -> dict[str, Path] | str:
    """Module name -> compiled file when the build matches every source, else why not.

    The loader and ``tools/build_native.py`` both ask this, so they judge a
    build alike.
    """
    try:
        manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return NOT_BUILT
    except (OSError, ValueError) as exc:
        return f"unreadable manifest ({exc.__class__.__name__})"
    if manifest.get("cache_tag") != sys.implementation.cache_tag:
        return f"built for {manifest.get('cache_tag')}, this is {sys.implementation.cache_tag}"
    modules = manifest.get("modules")
    if not isinstance(modules, dict) or not modules:
        return "the manifest lists no module"
    paths: dict[str, Path] = {}
    for name, entry in modules.items():
        source = source_of(name)
        compiled = MANIFEST.parent / str(entry["compiled"])
        unchanged = _unchanged(source, entry)
        if unchanged is None or not compiled.is_file():
            return f"{name}: a file is missing"
        if not unchanged:
            return f"{source.relative_to(ROOT)} changed since the build (make native)"
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
    found = compiled_modules()
    if found == NOT_BUILT:
        _status = "not built (pure Python)"
        try:
            why = NOT_BUILT_NOTE.read_text(encoding="utf-8").strip()
        except OSError:
            return
        # The install could not compile: `serve`'s first lines say what to install.
        _status += f": {why}; install it and reinstall kafka-scram for the compiled core"
        return
    if isinstance(found, str):
        # Only a checkout changed after `make native` gets here: say why it is slower.
        _status = f"not used: {found}; pure Python"
        log.warning("The compiled core is not used: %s", found)
        return
    sys.meta_path.insert(0, _CompiledFinder(found))
    ACTIVE = True
    _status = f"compiled ({len(found)} modules)"


def status() -> str:
    """One line for logs and benchmarks: compiled, or why not."""
    return _status


install()
