"""Golden files: valid configurations with their models, invalid ones with their exact messages.

Each case is also run through Kafka/the JDK, which must agree. Regenerate the
expectations with ``JAAS_REGEN_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import jaas
from tests.jaas.java_peer import JavaJaas
from tests.jaas.java_peer import python_file
from tests.jaas.java_peer import python_property

pytestmark = pytest.mark.jvm

VECTORS = Path(__file__).resolve().parent.parent / "vectors" / "jaas"
REGEN = os.environ.get("JAAS_REGEN_GOLDEN") == "1"
# Stand-ins for Java system properties in the file cases.
PROPERTIES = {"kafka.home": "/home/kafka", "empty": ""}


def _cases(form: str, ext: str) -> list[Path]:
    return sorted((VECTORS / form).glob(f"*/*.{ext}"))


def _describe(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".txt":
            result = jaas.load_client_context(text).to_dict(show_secrets=True)
        else:
            config = jaas.parse_file(text, path.name, expand_properties=PROPERTIES)
            result = config.to_dict(show_secrets=True)
    except jaas.JaasError as exc:
        return f"{exc}\n\njava: {exc.java_message!r}\n"
    return json.dumps(result, indent=2, ensure_ascii=False) + "\n"


def _check(path: Path) -> None:
    valid = path.parent.name == "valid"
    expected_path = path.with_suffix(".json" if valid else ".err")
    actual = _describe(path)
    if REGEN:
        expected_path.write_text(actual, encoding="utf-8")
    assert actual == expected_path.read_text(encoding="utf-8")
    assert actual.startswith("{") == valid


@pytest.mark.parametrize("path", _cases("property", "txt"), ids=lambda p: p.stem)
def test_property_golden(path: Path, java_jaas: JavaJaas) -> None:
    _check(path)
    text = path.read_text(encoding="utf-8")
    ours, theirs = python_property(text), java_jaas.property(text)
    assert (ours.accepted, ours.contexts) == (theirs.accepted, theirs.contexts)
    if "password" not in text:
        assert ours.message == theirs.message


@pytest.mark.parametrize("path", _cases("file", "conf"), ids=lambda p: p.stem)
def test_file_golden(path: Path, java_jaas: JavaJaas) -> None:
    _check(path)
    text = path.read_text(encoding="utf-8")
    ours, theirs = python_file(text, PROPERTIES), java_jaas.file(text, PROPERTIES)
    assert (ours.accepted, ours.contexts) == (theirs.accepted, theirs.contexts)
    if "password" not in text:
        assert ours.message == theirs.message
