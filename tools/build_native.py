"""Compile the hot modules with mypyc into ``sasl_scram/_native/`` (``make native``).

The login path's Python (the codec, the connection state machine, the SCRAM
exchange) compiled by mypyc costs much less CPU; the endpoint's
figures in docs/performance.md come from it. The sources stay the only truth:
the compiled files live apart from them, and ``sasl_scram._native`` uses them
only while every source still has the SHA-256 recorded here at build time.

Usage: ``python tools/build_native.py [--require] [--force]``. Without
``--require``, a machine with no C compiler or Python headers gets a one-line
notice and the pure-Python modules; with it (``make test``, ``make bench``),
that is an error. A build whose sources are unchanged is skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import sysconfig
import tempfile
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# This checkout's package, not an installed one; run as Python, so that a stale
# build is judged here rather than warned about at import.
sys.path.insert(0, str(ROOT))
os.environ["KAFKA_SCRAM_PURE_PYTHON"] = "1"
from sasl_scram._native import MANIFEST, compiled_modules, source_digest, source_of  # noqa: E402

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
    "sasl_scram.endpoint._connection",
    "sasl_scram.endpoint._deadlines",
    "sasl_scram.endpoint._protocol",
    "sasl_scram.endpoint._server",
)


def up_to_date() -> bool:
    """Whether the recorded build is the one these sources and MODULES make."""
    found = compiled_modules()
    return isinstance(found, dict) and set(found) == set(MODULES)


def missing_toolchain() -> str | None:
    """Why this machine cannot compile, or None."""
    if shutil.which(sysconfig.get_config_var("CC").split()[0] or "cc") is None:
        return "no C compiler (install gcc)"
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


def install(built: dict[str, Path]) -> None:
    """Replace the build in ``sasl_scram/_native``; the manifest goes last, so a
    half-copied build is never used."""
    MANIFEST.unlink(missing_ok=True)
    for old in NATIVE.rglob("*.so"):
        old.unlink()
    modules: dict[str, dict[str, str]] = {}
    for name, path in built.items():
        if name in MODULES:
            target = NATIVE / "lib" / (name + "".join(path.suffixes))
            modules[name] = {"compiled": str(target.relative_to(NATIVE)), "sha256": ""}
        else:  # the shared library, imported by the per-module files
            target = NATIVE / path.name
        target.parent.mkdir(exist_ok=True)
        shutil.copy2(path, target)
    # Hash the sources after the build: an edit during the build makes it stale.
    for name, entry in modules.items():
        entry["sha256"] = source_digest(source_of(name))
    manifest = {"cache_tag": sys.implementation.cache_tag, "modules": modules}
    staged = MANIFEST.with_suffix(".tmp")
    staged.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    staged.replace(MANIFEST)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="build_native", description=__doc__.split("\n")[0])
    parser.add_argument("--require", action="store_true", help="fail if it cannot compile")
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    args = parser.parse_args(argv)
    if not args.force and up_to_date():
        print("build_native: the compiled core is up to date")
        return 0
    missing = missing_toolchain()
    if missing is not None:
        print(f"build_native: {'error' if args.require else 'skipped'}: {missing}", file=sys.stderr)
        return 1 if args.require else 0
    with tempfile.TemporaryDirectory(prefix="kafka-scram-native-") as tmp:
        cwd = Path.cwd()
        try:
            built = compile_modules(Path(tmp))
        except (Exception, SystemExit) as exc:  # mypyc exits on a type error
            if args.require:
                raise
            print(f"build_native: skipped: the build failed ({exc!r})", file=sys.stderr)
            return 0
        finally:
            os.chdir(cwd)
        install(built)
    print(f"build_native: compiled {len(MODULES)} modules into {NATIVE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
