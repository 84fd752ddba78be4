"""What pip gets: ``python -m build`` makes an sdist and, from it, a platform wheel
that holds the compiled core; installed into a new virtualenv outside this
tree, ``kafka-scram serve`` runs it and Kafka's Java client logs in. An
editable install (``make run``) compiles into the checkout, and an edit turns
the compiled core off. Where the build finds no C compiler, the wheel is pure
Python and says why.

The sdist and wheel are built once per module (mypyc and the C compiler take
a minute or two), from a copy of this checkout's files so that the build
leaves nothing in it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from sasl_scram import _native
from tests.support.cli_process import ROOT
from tests.support.javaharness import JavaHarness
from tests.support.javaharness import b64
from tests.support.native_modules import compiled_module_count
from tests.support.serve_process import ServeProcess

# Builds the sdist and the wheel (mypyc compiles the core): minutes.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

#: The modules tools/build_native.py compiles (docs/architecture.md).
COMPILED = compiled_module_count()
TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"
PROBE = (
    "import sasl_scram._native as n, sasl_scram._server as s; print(n.status()); print(s.__file__)"
)


def _copy_tree(dest: Path) -> Path:
    """This checkout's tracked and new files (not what .gitignore names) in ``dest``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (item.decode() for item in listed)):
        source = ROOT / name
        if source.is_file():  # a deleted file is still listed until committed
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            (dest / name).write_bytes(source.read_bytes())
    return dest


def _build(args: list[str], tree: Path, out: Path, **env: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "build", *args, "--outdir", str(out), str(tree)],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, **env},
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


# An xdist worker that runs out of queued tests tears its module fixtures down
# and sets them up again for the next one it gets: the builds are kept in the
# worker's base folder, marked done, so that they are made once per run.
def _once(tmp_path_factory: pytest.TempPathFactory, name: str) -> tuple[Path, bool]:
    """A folder ``name`` of this run and whether it was already made."""
    folder = tmp_path_factory.getbasetemp() / name
    done = (folder / ".done").exists()
    if not done:
        folder.mkdir(exist_ok=True)
    return folder, done


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``python -m build``: the sdist, then a wheel built from the sdist."""
    base, done = _once(tmp_path_factory, "native-dist")
    if not done:
        _build([], _copy_tree(base / "tree"), base / "out")
        (base / ".done").touch()
    return base / "out"


@pytest.fixture(scope="module")
def venv(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtualenv outside this tree with the wheel installed."""
    base, done = _once(tmp_path_factory, "native-venv")
    if not done:
        (wheel,) = dist.glob("*.whl")
        _new_venv(base / "venv", str(wheel))
        (base / ".done").touch()
    return base / "venv"


def _new_venv(path: Path, *install: str) -> Path:
    """A virtualenv at ``path`` with ``pip install ARGS`` done (pip builds what it must)."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=120)
    pip = [str(path / "bin" / "pip"), "install", "-q", "--disable-pip-version-check"]
    # Without PYTHONPATH: pip would take a checkout's kafka_scram.egg-info on it
    # for the package already installed, and install nothing.
    subprocess.run([*pip, *install], check=True, timeout=900, env=_installed_env())
    return path


def _installed_env(**extra: str) -> dict[str, str]:
    """No PYTHONPATH: the installed package, not this checkout, is what runs."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", _native.PURE_PYTHON_ENV)}
    env.update(extra)
    return env


def _probe(python: str, cwd: Path, **env: str) -> tuple[str, str, str]:
    """(status line, the file ``sasl_scram._server`` came from, stderr) of a fresh
    import by ``python``, the package as installed (plus ``env``)."""
    done = subprocess.run(
        [python, "-c", PROBE],
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
        env=_installed_env(**env),
    )
    status, module = done.stdout.split("\n")[:2]
    return status, module, done.stderr


def test_the_wheel_is_a_platform_wheel_with_the_compiled_core(dist: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    assert f"-{TAG}-{TAG}-linux_" in wheel.name, wheel.name
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    shims = [n for n in names if n.startswith("sasl_scram/_native/lib/") and n.endswith(".so")]
    assert len(shims) == COMPILED, shims
    assert "sasl_scram/_native/manifest.json" in names
    assert any(n.startswith("sasl_scram/_native/core__mypyc.") for n in names), names
    assert "sasl_scram/_native/not-built.txt" not in names


def test_the_sdist_builds_it_and_carries_no_build(dist: Path) -> None:
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = [n.split("/", 1)[1] for n in archive.getnames() if "/" in n]
    assert "setup.py" in names and "tools/build_native.py" in names, names
    assert not [n for n in names if n.endswith(".so") or n.endswith("manifest.json")], names


def test_installed_imports_the_compiled_core_from_site_packages(venv: Path, tmp_path: Path) -> None:
    python = str(venv / "bin" / "python")
    status, module, _ = _probe(python, tmp_path)
    assert status == f"compiled ({COMPILED} modules)"
    assert module.startswith(str(venv)) and "/sasl_scram/_native/" in module, module
    status, module, _ = _probe(python, tmp_path, **{_native.PURE_PYTHON_ENV: "1"})
    assert status == f"off ({_native.PURE_PYTHON_ENV} is set)"
    assert module.endswith("/sasl_scram/_server.py")


@pytest.mark.jvm
def test_installed_serve_runs_it_and_kafkas_java_client_logs_in(venv: Path, tmp_path: Path) -> None:
    admin = tmp_path / "admin.properties"
    serve = ServeProcess(
        tmp_path,
        {
            "scram.credential.store.path": str(tmp_path / "state" / "credentials.db"),
            "super.users": "User:admin",
            "scram.bootstrap.user": "admin",
            "scram.bootstrap.client.properties": str(admin),
        },
        exe=str(venv / "bin" / "kafka-scram"),
        env=_installed_env(),
    )
    harness = JavaHarness("EndpointClientHarness")
    try:
        with serve:
            # Among serve's first lines, as the README says.
            assert f"SCRAM core: compiled ({COMPILED} modules)" in serve.wait_for_log("SCRAM core")
            # Written after the ready line, once the user exists.
            deadline = time.monotonic() + 30
            while not admin.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            admin_text = admin.read_text()
            assert harness.call("admin", "a", b64(admin_text)) == ["ok"]
            answer = harness.call("describeCluster", "a")
            assert answer[:3] == ["ok", "1", "1"], answer
            harness.call("close", "a")
    finally:
        harness.close()


def test_an_editable_install_compiles_into_the_checkout_and_an_edit_turns_it_off(
    tmp_path: Path,
) -> None:
    # What `make run` does: pip install -e, here into a new virtualenv.
    tree = _copy_tree(tmp_path / "tree")
    venv = _new_venv(tmp_path / "venv", "-e", str(tree))
    python = str(venv / "bin" / "python")
    status, module, _ = _probe(python, tmp_path)
    assert status == f"compiled ({COMPILED} modules)"
    assert module.startswith(str(tree / "sasl_scram" / "_native")), module
    source = tree / "sasl_scram" / "_server.py"
    source.write_text(source.read_text() + "\n# edited\n")
    status, module, stderr = _probe(python, tmp_path)
    assert status.startswith("not used: sasl_scram/_server.py changed since the build"), status
    assert module == str(source)
    assert "The compiled core is not used" in stderr


def test_without_a_compiler_the_wheel_is_pure_python_and_says_why(tmp_path: Path) -> None:
    _build(["--wheel"], _copy_tree(tmp_path / "tree"), tmp_path / "out", CC="/nonexistent/cc")
    (wheel,) = (tmp_path / "out").glob("*.whl")
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(unpacked)  # noqa: S202 - the wheel this test just built
    assert not list(unpacked.rglob("*.so"))
    status, _, _ = _probe(sys.executable, tmp_path, PYTHONPATH=str(unpacked))
    assert status.startswith("not built (pure Python): no C compiler (/nonexistent/cc not found"), (
        status
    )
