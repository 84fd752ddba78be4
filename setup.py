"""The build backend's one custom step: compile the login path with mypyc.

Everything else is in ``pyproject.toml``. ``pip install .``, ``pip install -e .``
and ``python -m build`` run ``build_native`` after the Python files are
copied: ``tools/build_native.py`` compiles its modules into the wheel's
``sasl_scram/_native/`` (an editable install: into this checkout's, as
``make native`` does), with the manifest of source digests that the loader
checks at import. Without a C compiler or Python headers the install goes
on as pure Python and says so (docs/architecture.md, "The compiled core").
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from setuptools import Command
from setuptools import Distribution
from setuptools import setup
from setuptools.command.build import build

HERE = Path(__file__).resolve().parent


@functools.cache
def _build_native() -> ModuleType:
    # tools/ is no package: load the script by its path (it ships in the sdist).
    spec = importlib.util.spec_from_file_location("build_native", HERE / "tools/build_native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildNative(Command):
    """``build_native``: mypyc into ``<build_lib>/sasl_scram/_native``."""

    description = "compile the login path with mypyc (tools/build_native.py)"
    user_options: list[tuple[str, str | None, str]] = []  # noqa: RUF012 - distutils' shape
    #: Set by setuptools' editable_wheel: build into the checkout instead.
    editable_mode = False

    def initialize_options(self) -> None:
        self.build_lib: str | None = None

    def finalize_options(self) -> None:
        self.set_undefined_options("build", ("build_lib", "build_lib"))

    def run(self) -> None:
        native = _build_native()
        target = native.NATIVE
        if not self.editable_mode:
            target = Path(str(self.build_lib), "sasl_scram", "_native")
        # pip shows a build's output with -v; serve's first log lines say it too.
        print(f"kafka-scram: {native.build(target)}", file=sys.stderr)

    def get_outputs(self) -> list[str]:
        return []

    def get_output_mapping(self) -> dict[str, str]:
        return {}

    def get_source_files(self) -> list[str]:
        # What the sdist needs to build it (setuptools asks each build step).
        return ["tools/build_native.py"]


class Build(build):
    sub_commands = [*build.sub_commands, ("build_native", None)]  # noqa: RUF012


class BinaryDistribution(Distribution):
    """A platform wheel (``cp311-cp311-linux_x86_64``) when it can hold compiled code."""

    def has_ext_modules(self) -> bool:
        return _build_native().missing_toolchain() is None


setup_args: dict[str, Any] = {
    "cmdclass": {"build": Build, "build_native": BuildNative},
    "distclass": BinaryDistribution,
}
setup(**setup_args)
