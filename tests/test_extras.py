"""The libraries only some uses need are extras, imported where they are used.

kazoo (``[zookeeper]``), uvloop and prometheus-client (``[server]``) are not
among the package's own dependencies: every module imports without them, and
what needs one of them says, in one line, which extra to install and the
command that installs it here (the package is on no index: from this tree). A missing
library is simulated by blocking its import (``None`` in ``sys.modules``).
``tests/sasl_scram/integrations/test_client_only_install.py`` proves the same
of a real client-only install.
"""

from __future__ import annotations

import importlib.metadata
import io
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from sasl_scram import ScramConfigError
from sasl_scram.cli import main
from sasl_scram.config import install_hint
from sasl_scram.endpoint import EndpointConfig
from sasl_scram.store import CredentialStoreError
from sasl_scram.store.zookeeper import ZooKeeperCredentialStore
from tokenauth import TokenStoreError
from tokenauth.stores import ZooKeeperTokenStore

ROOT = Path(__file__).resolve().parent.parent
#: Each optional library (its import name) and the extra that installs it.
OPTIONAL = {"kazoo": "zookeeper", "uvloop": "server", "prometheus_client": "server"}
#: Their distribution names, as pyproject.toml lists them.
DISTRIBUTIONS = {"kazoo": "kazoo", "uvloop": "uvloop", "prometheus_client": "prometheus-client"}
#: kafka-scram is on no package index: each hint installs the extra from this tree.
ZOOKEEPER_HINT = install_hint("zookeeper")
SERVER_HINT = install_hint("server")
# No ZooKeeper is ever reached: the store fails before it connects.
NOWHERE = "127.0.0.1:1"


def _block(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Make ``import name`` (and its submodules) fail as if it were not installed."""
    for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        monkeypatch.delitem(sys.modules, loaded)
    monkeypatch.setitem(sys.modules, name, None)


def _requirement_names(requirements: list[str]) -> set[str]:
    return {r.split(";")[0].split("[")[0].split("=")[0].split(">")[0].strip() for r in requirements}


def test_the_optional_libraries_are_extras_not_dependencies() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert not _requirement_names(project["dependencies"]) & set(DISTRIBUTIONS.values())
    for module, extra in OPTIONAL.items():
        assert DISTRIBUTIONS[module] in _requirement_names(extras[extra]), extra
    # The tests run every part: [test] pulls both extras in.
    assert "kafka-scram[server,zookeeper]" in extras["test"]


def test_every_module_imports_without_the_optional_libraries() -> None:
    """Nothing imports kazoo, uvloop or prometheus_client at module level."""
    code = f"""
import pkgutil, sys, importlib
for name in {sorted(OPTIONAL)!r}:
    sys.modules[name] = None
failed = []
for package in ("sasl_scram", "tokenauth", "jaas"):
    module = importlib.import_module(package)
    for info in pkgutil.walk_packages(module.__path__, package + "."):
        try:
            importlib.import_module(info.name)
        except ImportError as exc:
            failed.append(f"{{info.name}}: {{exc}}")
print(len(sys.modules))
print(*failed, sep="\\n")
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    count, *failed = done.stdout.strip().split("\n")
    assert failed == [], failed
    assert int(count) > 100  # the walk imported the packages' modules


@pytest.mark.parametrize(
    ("store", "error", "what"),
    [
        (ZooKeeperCredentialStore, CredentialStoreError, "credential store"),
        (ZooKeeperTokenStore, TokenStoreError, "token store"),
    ],
)
def test_a_zookeeper_store_without_kazoo_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, store: type, error: type[Exception], what: str
) -> None:
    _block(monkeypatch, "kazoo")
    with pytest.raises(error) as raised:
        store(NOWHERE)
    assert str(raised.value) == f"the ZooKeeper {what} needs kazoo: {ZOOKEEPER_HINT}"


def _one_error_line(argv: list[str]) -> str:
    stdout, stderr = io.StringIO(), io.StringIO()
    assert main(argv, io.StringIO(), stdout, stderr) == 1
    assert stdout.getvalue() == ""
    lines = stderr.getvalue().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_configs_on_zookeeper_without_kazoo_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    _block(monkeypatch, "kazoo")
    argv = ["configs", "--zookeeper", NOWHERE, "--describe", "--entity-type", "users"]
    assert _one_error_line(argv) == (
        f"kafka-scram configs: error: the ZooKeeper credential store needs kazoo: {ZOOKEEPER_HINT}"
    )


def test_serve_on_zookeeper_without_kazoo_is_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _block(monkeypatch, "kazoo")
    config = tmp_path / "server.properties"
    config.write_text(f"listeners=SASL_PLAINTEXT://127.0.0.1:0\nzookeeper.connect={NOWHERE}\n")
    assert _one_error_line(["serve", "--config", str(config)]) == (
        f"kafka-scram serve: error: the ZooKeeper credential store needs kazoo: {ZOOKEEPER_HINT}"
    )


BASE = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "scram.credential.store.path": "x.db"}


@pytest.mark.parametrize(
    ("module", "key", "value"),
    [
        ("uvloop", "scram.event.loop", "uvloop"),
        ("prometheus_client", "scram.metrics.listener", ":0"),
    ],
)
def test_a_key_whose_library_is_missing_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, module: str, key: str, value: str
) -> None:
    EndpointConfig.from_properties({**BASE, key: value})  # the control: installed here
    _block(monkeypatch, module)
    with pytest.raises(ScramConfigError) as raised:
        EndpointConfig.from_properties({**BASE, key: value})
    assert str(raised.value).startswith(f"{key}: ")
    assert SERVER_HINT in str(raised.value)


def test_serve_needs_neither_server_library_unless_a_key_asks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without uvloop the default loop (auto) is asyncio's; metrics are off by default.
    for module in ("uvloop", "prometheus_client"):
        _block(monkeypatch, module)
    config = EndpointConfig.from_properties(BASE)
    assert config.event_loop == "auto"


def test_each_hint_is_a_command_that_installs_the_extra_from_this_tree() -> None:
    """Not ``pip install 'kafka-scram[server]'``, which no index can answer: this
    interpreter's pip, on this checkout, with the extra."""
    for extra in ("server", "zookeeper"):
        assert install_hint(extra) == (
            f"install the [{extra}] extra: {sys.executable} -m pip install -e '{ROOT}[{extra}]'"
        )


def test_a_hint_where_the_source_is_not_known_says_where_to_run_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sasl_scram.config import _extras

    monkeypatch.setattr(_extras, "_checkout", lambda: None)
    monkeypatch.setattr(_extras, "_installed_from", lambda: None)
    assert install_hint("server") == (
        "install the [server] extra: pip install '.[server]' in the kafka-scram source tree "
        "(kafka-scram is on no package index)"
    )


def test_a_wheel_install_is_pointed_at_the_wheel_it_came_from(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """PEP 610: pip records where it installed the package from."""
    from sasl_scram.config import _extras

    wheel = tmp_path / "kafka_scram-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    recorded = f'{{"url": "{wheel.as_uri()}", "archive_info": {{}}}}'

    class Distribution:
        def read_text(self, name: str) -> str | None:
            return recorded if name == "direct_url.json" else None

    monkeypatch.setattr(_extras, "_checkout", lambda: None)
    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: Distribution())
    assert install_hint("zookeeper") == (
        f"install the [zookeeper] extra: {sys.executable} -m pip install '{wheel}[zookeeper]'"
    )


@pytest.mark.slow
def test_the_hint_printed_here_runs(tmp_path: Path) -> None:
    """The command a missing extra prints, run as printed (``--dry-run``: pip
    resolves it, from this tree and the package index, and installs nothing)."""
    command = shlex.split(SERVER_HINT.split(": ", 1)[1])
    done = subprocess.run(
        [*command, "--dry-run"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Would install kafka-scram" in done.stdout, done.stdout
