"""The stale-build guard at import: a stat per source, a hash only when it differs.

``compiled_modules`` (what ``import sasl_scram`` runs) is pointed at a small
tree in a temporary folder, its manifest written by ``tools/build_native.py``;
the hash function is counted.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from sasl_scram import _native

ROOT = Path(__file__).resolve().parents[3]
MODULES = ("pkg.one", "pkg.two")


@pytest.fixture(scope="module")
def build_native() -> Iterator[ModuleType]:
    env = os.environ.get(_native.PURE_PYTHON_ENV)
    spec = importlib.util.spec_from_file_location("build_native", ROOT / "tools/build_native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # sets PURE_PYTHON_ENV for its own loader
    yield module
    if env is None:
        os.environ.pop(_native.PURE_PYTHON_ENV, None)


class Tree:
    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.native = root / "sasl_scram" / "_native"
        self.hashed: list[str] = []
        digest = _native.source_digest

        def counted(path: Path) -> str:
            self.hashed.append(path.name)
            return digest(path)

        monkeypatch.setattr(_native, "ROOT", root)
        monkeypatch.setattr(_native, "MANIFEST", self.native / "manifest.json")
        monkeypatch.setattr(_native, "source_digest", counted)

    def source(self, module: str) -> Path:
        return _native.source_of(module)

    def write_manifest(self, build_native: ModuleType, *, stamps: bool = True) -> None:
        built = {}
        for name in MODULES:
            so = self.root / "built" / f"{name}.so"
            so.parent.mkdir(parents=True, exist_ok=True)
            so.write_bytes(b"\0")
            built[name] = so
        build_native.install(built, self.native)
        if not stamps:  # what builds before stat data wrote
            path = self.native / "manifest.json"
            data = json.loads(path.read_text())
            for entry in data["modules"].values():
                del entry["size"], entry["mtime_ns"]
            path.write_text(json.dumps(data))
        self.hashed.clear()


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, build_native: ModuleType) -> Tree:
    made = Tree(tmp_path, monkeypatch)
    # The build script's copy of the loader, pointed at the same tree and counter.
    monkeypatch.setattr(build_native, "MODULES", MODULES)
    monkeypatch.setattr(build_native, "source_of", _native.source_of)
    monkeypatch.setattr(build_native, "source_digest", _native.source_digest)
    for name in MODULES:
        source = made.source(name)
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(f"X = {name!r}\n")
    made.native.mkdir(parents=True)
    return made


def test_an_unchanged_tree_is_accepted_without_hashing(
    tree: Tree, build_native: ModuleType
) -> None:
    tree.write_manifest(build_native)
    found = _native.compiled_modules()
    assert isinstance(found, dict) and set(found) == set(MODULES)
    assert tree.hashed == []


def test_an_edit_with_its_mtime_restored_is_still_found(
    tree: Tree, build_native: ModuleType
) -> None:
    tree.write_manifest(build_native)
    source = tree.source("pkg.two")
    before = source.stat()
    source.write_text("X = 'edited, longer'\n")
    os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert source.stat().st_mtime_ns == before.st_mtime_ns
    assert _native.compiled_modules() == "pkg/two.py changed since the build (make native)"
    assert tree.hashed == ["two.py"]


def test_a_touched_but_unchanged_source_is_hashed_and_accepted(
    tree: Tree, build_native: ModuleType
) -> None:
    tree.write_manifest(build_native)
    source = tree.source("pkg.one")
    os.utime(source, ns=(0, source.stat().st_mtime_ns + 1_000_000_000))
    assert isinstance(_native.compiled_modules(), dict)
    assert tree.hashed == ["one.py"]
    # make native records the new stat without recompiling: no hashing again.
    assert build_native.refresh_stamps(tree.native)
    tree.hashed.clear()
    assert isinstance(_native.compiled_modules(), dict)
    assert tree.hashed == []
    assert not build_native.refresh_stamps(tree.native)


def test_a_manifest_without_stat_data_is_judged_by_hashes(
    tree: Tree, build_native: ModuleType
) -> None:
    tree.write_manifest(build_native, stamps=False)
    assert isinstance(_native.compiled_modules(), dict)
    assert sorted(tree.hashed) == ["one.py", "two.py"]
    tree.source("pkg.one").write_text("X = 'edited'\n")
    tree.hashed.clear()
    assert _native.compiled_modules() == "pkg/one.py changed since the build (make native)"
    # Refreshing the stat data never blesses an edited source.
    assert build_native.refresh_stamps(tree.native)  # pkg.two's stat recorded
    assert _native.compiled_modules() == "pkg/one.py changed since the build (make native)"


def test_a_read_that_advances_the_access_time_still_records_the_stat(
    tree: Tree, build_native: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A first read after a write moves the access time on a relatime mount; when
    # it crosses a second, the stat result no longer compares equal.
    digest = _native.source_digest

    def read_later(path: Path) -> str:
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns + 5_000_000_000, stat.st_mtime_ns))
        return digest(path)

    monkeypatch.setattr(build_native, "source_digest", read_later)
    tree.write_manifest(build_native)
    entries = json.loads((tree.native / "manifest.json").read_text())["modules"]
    assert all({"sha256", "size", "mtime_ns"} <= set(entry) for entry in entries.values())
    assert entries["pkg.one"]["sha256"] == digest(tree.source("pkg.one"))


def test_a_missing_source_is_named(tree: Tree, build_native: ModuleType) -> None:
    tree.write_manifest(build_native)
    tree.source("pkg.one").unlink()
    assert _native.compiled_modules() == "pkg.one: a file is missing"
