"""The repository's layout rules, read from the source (docs/architecture.md).

- A module imports a private (``_name``) module only from its own folder or an
  ancestor folder, never from a sibling folder or another package.
- No import cycles between modules, counting every import: top level, inside
  functions and under ``TYPE_CHECKING``.
- No function over 80 lines, no class over 350.
- The ``sasl_scram`` root holds the sans-IO SCRAM core only; the front door's
  proxy core (``sasl_scram/frontdoor``) imports no network, event loop or
  clock module.
- ``jaas`` imports nothing of ours; ``tokenauth`` uses only ``sasl_scram``'s
  public names; ``sasl_scram`` never imports ``tokenauth``.
- Nothing cites a document that is not in this repository, nor an item of a
  tracker its readers cannot see (the word issue, item or stop and a number).
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("sasl_scram", "tokenauth", "jaas")
MAX_FUNCTION_LINES = 80
MAX_CLASS_LINES = 350
CORE_MODULES = {
    "__init__",
    "_b64",
    "_client",
    "_credential",
    "_crypto",
    "_errors",
    "_keycache",
    "_mechanism",
    "_messages",
    "_saslprep",
    "_server",
}
# Documents outside the repository that earlier comments cited.
FOREIGN_DOCUMENTS = (
    "STYLE.md",
    "kafka-internals",
    "kafka-wire-protocol",
    "client-ecosystem",
    "style-study",
    "shared/spec",
    "shared/seeds",
)
# Items of a tracker outside the repository, which earlier comments and tests
# cited (the word issue, item or stop followed by a number). Say what the code or
# test does instead; CHANGELOG.md carries the history.
TRACKER_ITEM = re.compile(r"\bissues? ?#?\d+|\bitems? \d+ of\b|\bstop \d+\b", re.IGNORECASE)
# What the two tests below read: code, tests, docs, README, Makefile, configuration.
SCANNED_SUFFIXES = {".py", ".md", ".toml", ".properties", ".java", ".cfg", ".yaml"}
SCANNED_NAMES = {"Makefile"}


@dataclass(frozen=True)
class Module:
    name: str
    path: Path
    is_package: bool

    @property
    def folder(self) -> str:
        """The package this module's code lives in."""
        return self.name if self.is_package else self.name.rpartition(".")[0]


def _modules() -> dict[str, Module]:
    found: dict[str, Module] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts = parts[:-1]
            name = ".".join(parts)
            found[name] = Module(name, path, is_package)
    return found


MODULES = _modules()


def _imports(module: Module) -> Iterator[tuple[int, str]]:
    """Every module this one names in an import, as (line, module name)."""
    tree = ast.parse(module.path.read_text(), str(module.path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.folder.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            submodules = [
                f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES
            ]
            # ``from package import module`` names the module, not the package's facade.
            if len(submodules) < len(node.names):
                yield node.lineno, target
            for submodule in submodules:
                yield node.lineno, submodule


def _ours(name: str) -> bool:
    return name.split(".")[0] in PACKAGES


def test_private_modules_are_imported_only_from_their_folder_or_below() -> None:
    bad = []
    for module in MODULES.values():
        for line, target in _imports(module):
            if not _ours(target):
                continue
            private = [i for i, part in enumerate(target.split(".")) if part.startswith("_")]
            if not private:
                continue
            owner = ".".join(target.split(".")[: private[0]])
            if module.folder != owner and not module.folder.startswith(owner + "."):
                bad.append(f"{module.path.relative_to(ROOT)}:{line} imports {target}")
    assert bad == []


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for module in MODULES.values():
        for _line, target in _imports(module):
            if target in MODULES and target != module.name:
                graph[module.name].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in graph[node]:
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles() -> None:
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


def _definitions() -> Iterator[tuple[str, ast.AST, int]]:
    for module in MODULES.values():
        tree = ast.parse(module.path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = (node.end_lineno or node.lineno) - first + 1
                where = f"{module.path.relative_to(ROOT)}:{node.lineno} {node.name}"
                yield where, node, length


def test_no_function_over_80_lines() -> None:
    long = [
        f"{where} ({length} lines)"
        for where, node, length in _definitions()
        if not isinstance(node, ast.ClassDef) and length > MAX_FUNCTION_LINES
    ]
    assert long == []


def test_no_class_over_350_lines() -> None:
    long = [
        f"{where} ({length} lines)"
        for where, node, length in _definitions()
        if isinstance(node, ast.ClassDef) and length > MAX_CLASS_LINES
    ]
    assert long == []


def test_the_sasl_scram_root_holds_the_scram_core_only() -> None:
    root_modules = {p.stem for p in (ROOT / "sasl_scram").glob("*.py")}
    assert root_modules == CORE_MODULES


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("jaas", ("sasl_scram", "tokenauth")),
        ("sasl_scram", ("tokenauth",)),
    ],
)
def test_dependency_direction(package: str, forbidden: tuple[str, ...]) -> None:
    bad = [
        f"{module.name}:{line} imports {target}"
        for module in MODULES.values()
        if module.name.split(".")[0] == package
        for line, target in _imports(module)
        if target.split(".")[0] in forbidden
    ]
    assert bad == []


def test_the_sasl_scram_core_imports_no_adapter() -> None:
    core = [m for m in MODULES.values() if m.folder == "sasl_scram" and not m.is_package]
    bad = [
        f"{module.name}:{line} imports {target}"
        for module in core
        for line, target in _imports(module)
        if _ours(target) and MODULES.get(target, module).folder != "sasl_scram"
    ]
    assert bad == []


# What a sans-IO core never imports: the network, the event loop, the clock. (The
# owner-token table takes a lock: the cluster's RPCs call it from their threads.)
IO_MODULES = ("asyncio", "socket", "selectors", "ssl", "time")
SANS_IO_FOLDERS = ("sasl_scram.frontdoor", "sasl_scram.authz")


@pytest.mark.parametrize("folder", SANS_IO_FOLDERS)
def test_the_proxy_core_imports_no_io(folder: str) -> None:
    found = [m for m in MODULES.values() if m.folder == folder or m.folder.startswith(folder + ".")]
    assert found, f"no module in {folder}"
    bad = [
        f"{module.name}:{line} imports {target}"
        for module in found
        for line, target in _imports(module)
        if target.split(".")[0] in IO_MODULES
    ]
    assert bad == []


def _scanned() -> Iterator[tuple[str, int, str]]:
    """(file, line number, line) of every tracked or new text file of the kinds above."""
    tracked = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    this = Path(__file__).resolve()
    for name in tracked:
        path = ROOT / name
        if path.suffix not in SCANNED_SUFFIXES and path.name not in SCANNED_NAMES:
            continue
        if path == this or not path.is_file():
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            yield name, number, line


def test_the_scan_reads_code_tests_docs_readme_and_makefile() -> None:
    names = {name for name, _, _ in _scanned()}
    expected = {"README.md", "Makefile", "CHANGELOG.md", "pyproject.toml", "docs/architecture.md"}
    assert expected <= names
    assert {"sasl_scram/__init__.py", "tests/conftest.py", "examples/quickstart.py"} <= names


def test_no_document_outside_the_repository_is_cited() -> None:
    bad = [
        f"{name}:{number}: {doc}"
        for name, number, line in _scanned()
        for doc in FOREIGN_DOCUMENTS
        if doc in line
    ]
    assert bad == []


@pytest.mark.parametrize(
    ("word", "rest"),
    [
        ("issue", " 15"),
        ("Issue", " 14:"),
        ("issues", " 13"),
        ("item", " 10 of"),
        ("stop", " 25"),
        ("#issue", "7"),
    ],
)
def test_the_tracker_pattern_finds_a_citation(word: str, rest: str) -> None:
    # Built from two parts, so this file cites nothing itself.
    assert TRACKER_ITEM.search(f"a comment ({word}{rest}) says why")


def test_no_tracker_item_is_cited() -> None:
    bad = [
        f"{name}:{number}: {line.strip()}"
        for name, number, line in _scanned()
        if TRACKER_ITEM.search(line)
    ]
    assert bad == []
