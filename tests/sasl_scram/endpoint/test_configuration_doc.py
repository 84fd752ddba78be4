"""docs/configuration.md is the one table of keys, and cannot drift.

Every key ``kafka-scram serve`` reads (the endpoint's table and the installed
extensions' tables) is in the document with its default, what it accepts,
what it does and the Kafka key it mirrors; the document's table is exactly
what ``tools/config_reference.py`` renders from the tables now.
"""

from __future__ import annotations

import pytest

from sasl_scram.endpoint import ENDPOINT_KEYS
from sasl_scram.endpoint import extension_keys
from tests.support.cli_process import ROOT
from tests.support.cli_process import kafka_scram
from tools.config_reference import render
from tools.config_reference import updated

DOC = ROOT / "docs" / "configuration.md"


def test_the_document_is_the_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert text == updated(text), (
        "docs/configuration.md differs from the key table: run python tools/config_reference.py"
    )


def test_every_key_serve_reads_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    # A family (upstream.) is documented as its prefix and a star.
    keys = [key.name + ("*" if key.family else "") for key in (*ENDPOINT_KEYS, *extension_keys())]
    assert "delegation.token.secret.key" in keys  # the extensions' keys are included
    for name in keys:
        assert f"| `{name}` |" in text, name
    assert render().count("\n") == len(keys) + 2


@pytest.mark.slow
def test_serve_help_points_to_the_reference() -> None:
    result = kafka_scram("serve", "--help")
    assert result.returncode == 0 and "docs/configuration.md" in result.stdout
