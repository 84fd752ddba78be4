"""``serve`` loads only the endpoint extensions ``scram.endpoint.extensions`` names.

Any distribution installed beside ours can register a ``kafka_scram.endpoint``
entry point; a fake one on ``sys.path`` (a ``*.dist-info`` folder and its module)
must be neither imported nor served unless the configuration names it.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sasl_scram.cli import main
from sasl_scram.config import parse_properties
from sasl_scram.endpoint import EXTENSIONS_KEY
from sasl_scram.endpoint import EndpointConfig
from sasl_scram.endpoint import EndpointExtension
from sasl_scram.endpoint import installed_extensions
from sasl_scram.endpoint import load_extensions
from sasl_scram.kafka import ApiKey

MODULE = "kafka_scram_fake_extension"
STORE = {"scram.credential.store.path": "unused.db"}


@pytest.fixture
def fake_distribution(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A distribution registering ``rogue``, whose module records its import."""
    site = tmp_path / "site"
    info = site / "rogue_extension-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: rogue-extension\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[kafka_scram.endpoint]\nrogue = {MODULE}:factory\n")
    (site / f"{MODULE}.py").write_text(
        "from sasl_scram.endpoint import EndpointExtension\n"
        "IMPORTED = True\n"
        "async def _metadata(ctx, version, body):\n"
        "    return {}\n"
        "def factory(properties):\n"
        "    return EndpointExtension(name='rogue', handlers={3: _metadata})\n"
    )
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    yield site
    sys.modules.pop(MODULE, None)


def _names(extensions: list[EndpointExtension]) -> list[str]:
    return [extension.name for extension in extensions]


def test_an_installed_extension_is_not_loaded_unless_named(fake_distribution: Path) -> None:
    assert "rogue" in installed_extensions()
    config = EndpointConfig.from_properties(STORE)
    assert config.extensions == ("tokens",)
    extensions = load_extensions(config.properties, config.settings)
    try:
        assert _names(extensions) == ["delegation tokens (KIP-48)"]
        assert MODULE not in sys.modules
    finally:
        for extension in extensions:
            if extension.close is not None:
                extension.close()


def test_a_named_extension_is_loaded(fake_distribution: Path) -> None:
    config = EndpointConfig.from_properties({**STORE, EXTENSIONS_KEY: "rogue"})
    assert config.extensions == ("rogue",)
    (extension,) = load_extensions(config.properties, config.settings)
    assert extension.name == "rogue"
    assert set(extension.handlers) == {ApiKey.METADATA}
    assert MODULE in sys.modules


def test_none_at_all(fake_distribution: Path) -> None:
    config = EndpointConfig.from_properties({**STORE, EXTENSIONS_KEY: " "})
    assert config.extensions == ()
    assert load_extensions(config.properties, config.settings) == []
    assert MODULE not in sys.modules


def test_without_settings_the_properties_name_them(fake_distribution: Path) -> None:
    assert load_extensions({EXTENSIONS_KEY: ""}) == []
    assert _names(load_extensions({EXTENSIONS_KEY: "rogue"})) == ["rogue"]


def test_an_unknown_name_is_one_error_line(tmp_path: Path, fake_distribution: Path) -> None:
    path = tmp_path / "server.properties"
    path.write_text(
        "listeners=SASL_PLAINTEXT://127.0.0.1:0\n"
        f"scram.credential.store.path={tmp_path}/creds.db\n"
        f"{EXTENSIONS_KEY}=tokens,nope\n"
    )
    stdout, stderr = io.StringIO(), io.StringIO()
    status = main(["serve", "--config", str(path)], io.StringIO(), stdout, stderr)
    assert status == 1
    assert stderr.getvalue() == (
        f"kafka-scram serve: error: {path}:3: {EXTENSIONS_KEY}: unknown endpoint "
        "extension 'nope'; installed: rogue, tokens; accepted: installed extension names, "
        "comma-separated (empty: none)\n"
    )
    assert MODULE not in sys.modules
    assert not (tmp_path / "creds.db").exists()


def test_the_file_and_line_are_named() -> None:
    props = parse_properties(f"scram.credential.store.path=x.db\n{EXTENSIONS_KEY}=a,b\n", "s.p")
    with pytest.raises(ValueError, match=r"^s\.p:2: .*unknown endpoint extension 'a', 'b'"):
        EndpointConfig.from_properties(props)
