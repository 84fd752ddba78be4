"""What the package says of itself: its version from the installed metadata, and
the licence file the metadata names."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import sasl_scram
import tokenauth

ROOT = Path(__file__).resolve().parent.parent


def test_the_version_comes_from_the_installed_metadata() -> None:
    assert sasl_scram.__version__ == version("kafka-scram")
    assert tokenauth.__version__ == sasl_scram.__version__


def test_a_tree_never_installed_has_a_version_that_says_so() -> None:
    # The metadata lookup fails as it does for sources that pip never installed.
    code = (
        "import importlib.metadata as m\n"
        "def missing(name):\n"
        "    raise m.PackageNotFoundError(name)\n"
        "m.version = missing\n"
        "import sasl_scram, tokenauth\n"
        "print(sasl_scram.__version__, tokenauth.__version__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert done.stdout.split() == ["0+unknown", "0+unknown"]


def test_the_licence_file_is_the_one_the_metadata_names() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    (name,) = project["license-files"]
    text = (ROOT / name).read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text  # the full text, not a notice
