"""How many modules ``tools/build_native.py`` compiles (its ``MODULES``), read
from its source: importing it would switch this process to pure Python."""

from __future__ import annotations

import ast
from pathlib import Path

__all__ = ["compiled_module_count"]

_TOOL = Path(__file__).resolve().parents[2] / "tools" / "build_native.py"


def compiled_module_count() -> int:
    for node in ast.parse(_TOOL.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "MODULES" for t in node.targets
        ):
            assert isinstance(node.value, ast.Tuple)
            return len(node.value.elts)
    raise AssertionError(f"{_TOOL} has no MODULES")
