"""The compiled core (sasl_scram/_native): used only when built from the current
sources, never shadowing them, and off on request.

Each case imports the package in a fresh interpreter, the way a user's process
would; the stale cases work on a copy of the tree, never on this checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sasl_scram import _native
from tests.support.native_modules import compiled_module_count

# Needs the compiled core (make native) and copies the tree.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
PROBE = (
    "import sasl_scram, sasl_scram._native as n, sasl_scram._server as s, "
    "sasl_scram.endpoint.login._protocol as p; print(n.ACTIVE, s.__file__, p.__file__); "
    "print(n.status())"
)


def _probe(tree: Path, **env: str) -> tuple[bool, list[str], str, str]:
    """(active, module files, status line, stderr) of a fresh import from ``tree``."""
    child_env = {k: v for k, v in os.environ.items() if k != _native.PURE_PYTHON_ENV}
    child_env.update(env, PYTHONPATH=str(tree))
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        env=child_env,
        cwd=tree,
        check=True,
        timeout=60,
    )
    first, status = done.stdout.splitlines()
    active, *files = first.split()
    return active == "True", files, status, done.stderr


@pytest.fixture
def tree_copy(tmp_path: Path) -> Path:
    """A copy of the built package, to change without touching this checkout."""
    if not _native.MANIFEST.is_file():
        pytest.fail("the compiled core is not built: run `make native` first")
    shutil.copytree(ROOT / "sasl_scram", tmp_path / "sasl_scram", symlinks=True)
    return tmp_path


def test_this_checkout_runs_the_compiled_core() -> None:
    # `make test` builds it first: the suite proves the compiled form.
    active, files, status, _ = _probe(ROOT)
    assert active, status
    # A module first imported by another compiled one (endpoint._server imports
    # _protocol) is initialised by mypyc inside the shared library, which names
    # it _native/<package path>.so rather than its lib/ shim: compiled either way.
    assert all("/sasl_scram/_native/" in f and f.endswith(".so") for f in files), files
    assert status.startswith("compiled (")


def test_a_changed_source_runs_as_python_and_says_why(tree_copy: Path) -> None:
    source = tree_copy / "sasl_scram" / "_server.py"
    source.write_text(source.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    active, files, status, stderr = _probe(tree_copy)
    assert not active
    # Not only the edited module: one stale module turns the whole build off.
    assert [Path(f).name for f in files] == ["_server.py", "_protocol.py"]
    assert "sasl_scram/_server.py changed since the build (make native)" in status
    assert "The compiled core is not used: sasl_scram/_server.py changed" in stderr


def test_an_unchanged_build_is_imported_without_hashing_a_source(tree_copy: Path) -> None:
    # The copy keeps the files' times, as a checkout left alone does.
    counting = (
        "import hashlib; calls = []; sha256 = hashlib.sha256; "
        "hashlib.sha256 = lambda *a, **k: calls.append(1) or sha256(*a, **k); "
        "import sasl_scram._native as n; print(len(calls), n.status())"
    )
    env = {k: v for k, v in os.environ.items() if k != _native.PURE_PYTHON_ENV}
    done = subprocess.run(
        [sys.executable, "-c", counting],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(tree_copy)},
        cwd=tree_copy,
        check=True,
        timeout=60,
    )
    compiled = f"compiled ({compiled_module_count()} modules)\n"
    assert done.stdout.split(" ", 1) == ["0", compiled], done.stdout


def test_the_environment_variable_turns_it_off(tree_copy: Path) -> None:
    active, files, status, stderr = _probe(tree_copy, **{_native.PURE_PYTHON_ENV: "1"})
    assert not active
    assert all(f.endswith(".py") for f in files)
    assert status == f"off ({_native.PURE_PYTHON_ENV} is set)"
    assert stderr == ""


def test_a_build_for_another_python_is_not_used(tree_copy: Path) -> None:
    manifest = tree_copy / "sasl_scram" / "_native" / "manifest.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    data["cache_tag"] = "cpython-399"
    manifest.write_text(json.dumps(data), encoding="utf-8")
    active, files, status, _ = _probe(tree_copy)
    assert not active
    assert all(f.endswith(".py") for f in files)
    assert "built for cpython-399" in status


def test_without_a_build_it_is_plain_python_and_quiet(tree_copy: Path) -> None:
    (tree_copy / "sasl_scram" / "_native" / "manifest.json").unlink()
    active, files, status, stderr = _probe(tree_copy)
    assert not active
    assert all(f.endswith(".py") for f in files)
    assert status == "not built (pure Python)"
    assert stderr == ""
