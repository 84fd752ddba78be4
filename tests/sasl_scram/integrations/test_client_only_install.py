"""A client-only install: ``pip install '<wheel>[kafka-python,aiokafka]'`` into a
new virtualenv outside this tree holds no ZooKeeper client, event loop or metrics
library (they come with the ``[zookeeper]`` and ``[server]`` extras), and its
kafka-python and aiokafka log in with a delegation token to an endpoint that runs
from this checkout. What needs a missing extra names it with a command that
installs it from that wheel, and ``serve`` says in one line that it runs on
asyncio's loop for want of ``[server]``.

The wheel is built as in ``tests/sasl_scram/native/test_install.py``, pure Python
(no C compiler): what it holds does not matter here, only what it depends on.
pip takes the client libraries from its cache when it has them.
"""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sasl_scram.native.test_install import _build
from tests.sasl_scram.native.test_install import _copy_tree
from tests.sasl_scram.native.test_install import _installed_env
from tests.sasl_scram.native.test_install import _new_venv
from tests.support.zookeeper_server import free_port

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


def _hinted_command(line: str, extra: str, venv: Path) -> list[str]:
    """The command after ``install the [extra] extra: ``: this venv's pip, on the
    wheel the package was installed from (pip recorded it, PEP 610)."""
    head = f"install the [{extra}] extra: "
    assert head in line, line
    command = shlex.split(line.split(head, 1)[1])
    assert Path(command[0]).parent == venv / "bin", command  # python or python3.11
    assert command[1:4] == ["-m", "pip", "install"], command
    assert len(command) == 5 and command[4].endswith(f".whl[{extra}]"), command
    return command


def test_a_client_only_install_names_the_zookeeper_extra_and_a_command_that_installs_it(
    client_venv: Path, tmp_path: Path
) -> None:
    """Not ``pip install 'kafka-scram[zookeeper]'``, which no index answers: the
    command names the wheel, and pip resolves it (``--dry-run``: kazoo would
    be installed, nothing is)."""
    argv = ["configs", "--zookeeper", "127.0.0.1:1", "--describe", "--entity-type", "users"]
    done = _run([str(client_venv / "bin" / "kafka-scram"), *argv], tmp_path)
    assert done.returncode == 1, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(
        "kafka-scram configs: error: the ZooKeeper credential store needs kazoo: "
        "install the [zookeeper] extra: "
    ), line
    command = _hinted_command(line, "zookeeper", client_venv)
    dry = subprocess.run(
        [*command, "--dry-run"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=_installed_env(),
        check=False,
    )
    assert dry.returncode == 0, dry.stdout + dry.stderr
    (would,) = [x for x in dry.stdout.splitlines() if x.startswith("Would install")]
    assert "kazoo-" in would, dry.stdout


def test_a_client_only_install_serves_on_asyncio_and_says_so_naming_the_server_extra(
    client_venv: Path, tmp_path: Path
) -> None:
    config = tmp_path / "server.properties"
    config.write_text(
        f"listeners=SASL_PLAINTEXT://127.0.0.1:{free_port()}\n"
        f"scram.credential.store.path={tmp_path / 'credentials.db'}\n"
    )
    proc = subprocess.Popen(
        [str(client_venv / "bin" / "kafka-scram"), "serve", "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=_installed_env(),
    )
    assert proc.stdout is not None
    ready = proc.stdout.readline()
    proc.send_signal(signal.SIGTERM)
    _, log = proc.communicate(timeout=30)
    assert "kafka-scram endpoint ready" in ready, log
    lines = [line for line in log.splitlines() if "Event loop" in line]
    assert len(lines) == 1, log
    assert "asyncio's, as uvloop is not installed" in lines[0], lines
    _hinted_command(lines[0], "server", client_venv)


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
