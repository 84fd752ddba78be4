"""A client-only install: ``pip install 'kafka-scram[kafka-python,aiokafka]'`` into a
new virtualenv outside this tree holds no ZooKeeper client, event loop or metrics
library (they come with the ``[zookeeper]`` and ``[server]`` extras), and its
kafka-python and aiokafka log in with a delegation token to an endpoint that runs
from this checkout.

The wheel is built as in ``tests/sasl_scram/native/test_install.py``, pure Python
(no C compiler): what it holds does not matter here, only what it depends on.
pip takes the client libraries from its cache when it has them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.sasl_scram.native.test_install import _build
from tests.sasl_scram.native.test_install import _copy_tree
from tests.sasl_scram.native.test_install import _installed_env
from tests.sasl_scram.native.test_install import _new_venv

from .conftest import TokenEndpoint
from .conftest import client_properties
from .conftest import write_properties

# A wheel build and a new virtualenv: minutes, and the same 30-minute bound
# as the other wheel-build tests.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parents[3]
#: The libraries only serve ([server]) and the ZooKeeper stores ([zookeeper]) need.
SERVER_ONLY = ("kazoo", "uvloop", "prometheus_client")
#: Every integration and the facades a client imports.
CLIENT_IMPORTS = (
    "sasl_scram",
    "tokenauth",
    "jaas",
    "sasl_scram.integrations.kafka_python",
    "sasl_scram.integrations.aiokafka",
    "sasl_scram.store",
    "tokenauth.stores",
)


@pytest.fixture(scope="module")
def client_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("client-only")
    _build(["--wheel"], _copy_tree(base / "tree"), base / "out", CC="/nonexistent/cc")
    (wheel,) = (base / "out").glob("*.whl")
    return _new_venv(base / "venv", f"{wheel}[kafka-python,aiokafka]")


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``argv`` with the installed package only (no PYTHONPATH to this checkout)."""
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=_installed_env(),
        check=False,
    )


def _python(venv: Path, code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return _run([str(venv / "bin" / "python"), "-c", code], cwd)


def test_a_client_only_install_has_no_server_library(client_venv: Path, tmp_path: Path) -> None:
    probe = "import importlib.util as u; print(*(u.find_spec(n) is None for n in %r))"
    found = _python(client_venv, probe % (SERVER_ONLY,), tmp_path)
    assert found.stdout.split() == ["True"] * len(SERVER_ONLY), found.stderr
    # The control: this test's own environment has all three.
    assert _python(Path(sys.prefix), probe % (SERVER_ONLY,), tmp_path).stdout.split() == (
        ["False"] * len(SERVER_ONLY)
    )


def test_a_client_only_install_imports_the_packages_and_integrations(
    client_venv: Path, tmp_path: Path
) -> None:
    code = "; ".join(f"import {name}" for name in CLIENT_IMPORTS)
    done = _python(client_venv, code + "; print(sasl_scram.__file__)", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(str(client_venv)), done.stdout


def test_a_client_only_install_names_the_zookeeper_extra(client_venv: Path, tmp_path: Path) -> None:
    argv = ["configs", "--zookeeper", "127.0.0.1:1", "--describe", "--entity-type", "users"]
    done = _run([str(client_venv / "bin" / "kafka-scram"), *argv], tmp_path)
    assert (done.returncode, done.stderr) == (
        1,
        "kafka-scram configs: error: the ZooKeeper credential store needs kazoo: "
        "pip install 'kafka-scram[zookeeper]'\n",
    )


@pytest.mark.parametrize("example", ["kafka_python_client", "aiokafka_client"])
def test_a_client_only_install_logs_in_with_a_token(
    client_venv: Path,
    token_endpoint: TokenEndpoint,
    endpoint_log: pytest.LogCaptureFixture,
    tmp_path: Path,
    example: str,
) -> None:
    props = client_properties(token_endpoint.ep, token_endpoint.token_line(), "SCRAM-SHA-512")
    path = write_properties(tmp_path / "client.properties", props)
    example_py = str(ROOT / "examples" / f"{example}.py")
    done = _run([str(client_venv / "bin" / "python"), example_py, str(path)], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "topics: []" in done.stdout, done.stdout
    token_logins = [m for m in endpoint_log.messages if "(delegation token)" in m]
    assert token_logins and all("User:alice" in m for m in token_logins), endpoint_log.messages
