"""Compile the hot modules with mypyc into ``sasl_scram/_native/`` (``make native``,
and every ``pip install`` or wheel build through ``setup.py``).

The login path's Python (the codec, the connection state machine, the SCRAM
exchange) compiled by mypyc costs much less CPU; the endpoint's
figures in docs/performance.md come from it. The sources stay the only truth:
the compiled files live apart from them, and ``sasl_scram._native`` uses them
only while every source still has the SHA-256 recorded here at build time. The
manifest also records each source's size and mtime, so that an import hashes
only a source whose stat changed; a build found up to date by its hashes gets
its stat data refreshed (an old manifest, a checkout that touched the files).

Usage: ``python tools/build_native.py [--require] [--force]``. Without
``--require``, a machine with no C compiler or Python headers gets a one-line
notice and the pure-Python modules; with it (``make test``, ``make bench``),
that is an error. A build whose sources are unchanged is skipped.

``setup.py`` calls :func:`build` with the wheel's ``sasl_scram/_native`` (or,
for an editable install, this checkout's); a build it cannot make leaves
:data:`NOTE` saying why, which ``kafka-scram serve`` logs at start.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
import sysconfig
import tempfile
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _loader() -> ModuleType:
    """This checkout's ``sasl_scram/_native/__init__.py``, loaded by its path.

    Importing the package would import its dependencies (cryptography...),
    which a build environment does not have; the loader needs only the
    standard library. Pure Python, so that a stale build is judged here
    rather than warned about at import.
    """
    os.environ["KAFKA_SCRAM_PURE_PYTHON"] = "1"
    path = ROOT / "sasl_scram" / "_native" / "__init__.py"
    spec = importlib.util.spec_from_file_location("_kafka_scram_native_loader", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_native = _loader()
MANIFEST: Path = _native.MANIFEST
NOTE: Path = _native.NOT_BUILT_NOTE
compiled_modules = _native.compiled_modules
source_digest = _native.source_digest
source_of = _native.source_of
source_stamp = _native.source_stamp
NATIVE = MANIFEST.parent

#: The shared library's module: sasl_scram._native.core__mypyc.
GROUP = "sasl_scram._native.core"
#: What one login runs, and what it calls per request: the SCRAM core, the
#: Kafka codec and the endpoint's connection. Adapters that wait on the network
#: (stores, ZooKeeper, the CLI) gain nothing from compiling. Nor does the
#: client, and it keeps its ScramUsageError for a wrong argument type, where
#: compiled code raises mypyc's TypeError before the body runs.
MODULES = (
    "sasl_scram._b64",
    "sasl_scram._credential",
    "sasl_scram._crypto",
    "sasl_scram._keycache",
    "sasl_scram._mechanism",
    "sasl_scram._messages",
    "sasl_scram._server",
    "sasl_scram.kafka._codec",
    "sasl_scram.kafka._primitives",
    "sasl_scram.endpoint.login._connection",
    "sasl_scram.endpoint.login._deadlines",
    "sasl_scram.endpoint.login._protocol",
    "sasl_scram.endpoint.proxy._forward",
    "sasl_scram.endpoint.proxy._upstream",
    "sasl_scram.endpoint.runtime._server",
    "sasl_scram.frontdoor._chain",
    "sasl_scram.frontdoor._inflight",
    "sasl_scram.frontdoor._proxy",
    "sasl_scram.frontdoor._splitter",
    "sasl_scram.frontdoor._wire",
    "sasl_scram.frontdoor.authorization._heads",
)


def up_to_date() -> bool:
    """Whether the recorded build is the one these sources and MODULES make."""
    found = compiled_modules()
    return isinstance(found, dict) and set(found) == set(MODULES)


def missing_toolchain() -> str | None:
    """Why this machine cannot compile, or None."""
    # The compiler setuptools will run: $CC when set, else the one Python was built with.
    compiler = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler} not found; install gcc)"
    include = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not include.is_file():
        return f"no Python headers at {include} (install python3-dev)"
    return None


def mypy_ini(work: Path) -> Path:
    """The project's mypy settings, minus its package list (that would compile all)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    lines = ["[mypy]"]
    lines += [f"{k} = {_ini(v)}" for k, v in config.items() if k not in ("packages", "overrides")]
    for override in config.get("overrides", []):
        lines.append(f"[mypy-{','.join(override['module'])}]")
        lines += [f"{k} = {_ini(v)}" for k, v in override.items() if k != "module"]
    path = work / "mypy.ini"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _ini(value: Any) -> str:
    return str(value) if not isinstance(value, bool) else ("True" if value else "False")


def compile_modules(work: Path) -> dict[str, Path]:
    """Run mypyc and the C compiler in ``work``; module name -> built file."""
    from mypyc.build import mypycify
    from setuptools import Distribution  # type: ignore[import-untyped]

    os.chdir(work)  # setuptools reads config files from the working directory
    args = ["--config-file", str(mypy_ini(work)), *(str(source_of(m)) for m in MODULES)]
    extensions = mypycify(args, group_name=GROUP, target_dir=str(work / "c"), opt_level="3")
    dist = Distribution({"name": "kafka-scram-native", "ext_modules": extensions})
    build: Any = dist.get_command_obj("build_ext")
    build.build_lib = str(work / "lib")
    build.build_temp = str(work / "tmp")
    dist.run_command("build_ext")
    return {ext.name: Path(build.get_ext_fullpath(ext.name)) for ext in extensions}


def install(built: dict[str, Path], native: Path = NATIVE) -> None:
    """Replace the build in ``native`` (a ``sasl_scram/_native`` folder); the
    manifest goes last, so a half-copied build is never used."""
    manifest_path = native / MANIFEST.name
    manifest_path.unlink(missing_ok=True)
    for old in native.rglob("*.so"):
        old.unlink()
    modules: dict[str, dict[str, Any]] = {}
    for name, path in built.items():
        if name in MODULES:
            target = native / "lib" / (name + "".join(path.suffixes))
            modules[name] = {"compiled": str(target.relative_to(native))}
        else:  # the shared library, imported by the per-module files
            target = native / path.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    # Hash the sources after the build: an edit during the build makes it stale.
    # A wheel's copies of the sources are these very bytes.
    for name, entry in modules.items():
        # Changed while hashed: recorded as stale, so the next build redoes it.
        entry.update(_record(source_of(name)) or {"sha256": ""})
    _write_manifest(manifest_path, modules)
    (native / NOTE.name).unlink(missing_ok=True)


def _record(source: Path, sha256: str | None = None) -> dict[str, Any]:
    """What the manifest keeps of ``source``: its SHA-256 and the stat it had while
    hashed, or ``{}`` when it changed meanwhile or no longer has ``sha256``."""
    before = source.stat()
    digest = source_digest(source)
    # Not ``stat() != before``: a stat result compares its access time, which the
    # hashing read itself may advance (relatime), so a clean source looked edited.
    if _identity(source.stat()) != _identity(before) or (sha256 is not None and digest != sha256):
        return {}
    return {"sha256": digest, **source_stamp(before)}


def _identity(stat: os.stat_result) -> tuple[int, ...]:
    """What changes when a file's content does: the file, its size and its mtime
    (what the import guard compares too), never its access time."""
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def _write_manifest(path: Path, modules: dict[str, dict[str, Any]]) -> None:
    manifest = {"cache_tag": sys.implementation.cache_tag, "modules": modules}
    staged = path.with_suffix(".tmp")
    staged.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    staged.replace(path)


def refresh_stamps(native: Path = NATIVE) -> bool:
    """Record the current stat of sources whose content is still the one built,
    so that imports stop hashing them; whether the manifest changed.

    For a build :func:`up_to_date` accepts (an old manifest without stat data,
    files touched by a checkout). A source edited meanwhile keeps its old entry.
    """
    path = native / MANIFEST.name
    manifest = json.loads(path.read_text(encoding="utf-8"))
    modules: dict[str, dict[str, Any]] = manifest["modules"]
    changed = False
    for name, entry in modules.items():
        source = source_of(name)
        if source_stamp(source.stat()) == {k: entry.get(k) for k in ("size", "mtime_ns")}:
            continue
        fresh = _record(source, entry["sha256"])
        if fresh:
            entry.update(fresh)
            changed = True
    if changed:
        _write_manifest(path, modules)
    return changed


def skipped(why: str, native: Path = NATIVE) -> str:
    """Record why there is no build (the loader's status says it) and say it once."""
    native.mkdir(parents=True, exist_ok=True)
    # An older build left there (setuptools' build/ folder, a stale checkout)
    # would only be refused by the loader: remove it, so the note is the truth.
    (native / MANIFEST.name).unlink(missing_ok=True)
    for old in native.rglob("*.so"):
        old.unlink()
    (native / NOTE.name).write_text(why + "\n", encoding="utf-8")
    return f"build_native: skipped: {why}; the SCRAM core runs as pure Python (slower)"


def build(native: Path = NATIVE, *, require: bool = False, force: bool = False) -> str:
    """Compile :data:`MODULES` into ``native``; one line saying what happened.

    Raises:
        RuntimeError: with ``require``, when this machine cannot compile.
    """
    if native == NATIVE and not force and up_to_date():
        if refresh_stamps(native):
            return "build_native: the compiled core is up to date (stat data refreshed)"
        return "build_native: the compiled core is up to date"
    missing = missing_toolchain()
    if missing is not None:
        if require:
            raise RuntimeError(missing)
        return skipped(missing, native)
    with tempfile.TemporaryDirectory(prefix="kafka-scram-native-") as tmp:
        cwd = Path.cwd()
        try:
            built = compile_modules(Path(tmp))
        except (Exception, SystemExit) as exc:  # mypyc exits on a type error
            if require:
                raise
            return skipped(f"the build failed ({exc!r})", native)
        finally:
            os.chdir(cwd)
        install(built, native)
    return f"build_native: compiled {len(MODULES)} modules into {native}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="build_native", description=__doc__.split("\n")[0])
    parser.add_argument("--require", action="store_true", help="fail if it cannot compile")
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    parser.add_argument(
        "--sources", action="store_true", help="print the compiled modules' source files"
    )
    args = parser.parse_args(argv)
    if args.sources:  # the Makefile's prerequisites of an install
        print(" ".join(str(source_of(m).relative_to(ROOT)) for m in MODULES))
        return 0
    try:
        said = build(require=args.require, force=args.force)
    except RuntimeError as exc:
        print(f"build_native: error: {exc}", file=sys.stderr)
        return 1
    print(said, file=sys.stderr if "skipped" in said else sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
