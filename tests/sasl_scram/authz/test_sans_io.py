"""``sasl_scram.authz`` is sans-IO and self-contained: it imports no network, event
loop, clock, thread, process, file or randomness module, and of this project only
``sasl_scram.config`` (``KafkaPrincipal``) and ``sasl_scram.kafka`` (``ErrorCode``)."""

from __future__ import annotations

import ast
from pathlib import Path

import sasl_scram.authz

FOLDER = Path(sasl_scram.authz.__file__).parent
FORBIDDEN = {
    "asyncio",
    "concurrent",
    "datetime",
    "io",
    "os",
    "pathlib",
    "random",
    "secrets",
    "selectors",
    "socket",
    "ssl",
    "subprocess",
    "threading",
    "time",
}
OURS_ALLOWED = {"sasl_scram.authz", "sasl_scram.config", "sasl_scram.kafka"}


def imports(path: Path) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path.name}: relative import"
            found.append(node.module or "")
    return found


def test_the_folder_imports_nothing_that_does_io_and_only_allowed_modules_of_ours() -> None:
    modules = sorted(FOLDER.glob("*.py"))
    assert len(modules) > 5
    bad = []
    for path in modules:
        for name in imports(path):
            top = name.split(".")[0]
            ours_allowed = any(
                name == allowed or name.startswith(allowed + ".") for allowed in OURS_ALLOWED
            )
            if top in FORBIDDEN or (top == "sasl_scram" and not ours_allowed):
                bad.append(f"{path.name} imports {name}")
    assert bad == []


def test_the_check_finds_an_io_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import time\nfrom sasl_scram.store import x\n")
    assert imports(module) == ["time", "sasl_scram.store"]
