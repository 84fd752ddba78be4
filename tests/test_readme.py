"""The README's quick-start, run as written, and the install paths it describes.

The commands are extracted from README.md's "From zero to a logged-in client"
section and run in order by ``sh`` in a copy of the tree's user-facing files,
against a real ``kafka-scram serve`` on a free port: ``make run`` stands for
the Makefile's ``run`` recipe (without the install line), a ``kafka-scram
serve`` block restarts the endpoint. So the README cannot rot.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli_process import ROOT
from tests.support.cli_process import child_env
from tests.support.zookeeper_server import free_port

README = ROOT / "README.md"
_FENCE = re.compile(r"^(?P<indent> *)```sh\n(?P<body>.*?)^(?P=indent)```$", re.M | re.S)
TEST_TOOLS = ("pytest", "mypy", "ruff", "hypothesis", "scramp")
#: The sections whose shell blocks the suite runs as written (the second in
#: tests/test_readme_cluster.py, against a real broker).
RUN_SECTIONS = ("From zero to a logged-in client", "Use it with your existing cluster")


def section_blocks(title: str) -> list[str]:
    """The shell blocks of the README's section ``title``, as a reader copies them
    from the raw file: indentation kept."""
    text = README.read_text(encoding="utf-8")
    section = text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    return [m["body"] for m in _FENCE.finditer(section)]


def quick_start_blocks() -> list[str]:
    return section_blocks(RUN_SECTIONS[0])


_HEREDOC = re.compile(r"<<(?!-)\s*(['\"]?)(?P<word>\w+)\1")


@pytest.mark.parametrize("title", RUN_SECTIONS)
def test_heredocs_end_when_copied_from_the_raw_file(title: str) -> None:
    """A here-document ends only at its word alone at the start of a line (<<- aside):
    an indented EOF inside a list item would swallow the rest of the block."""
    blocks = section_blocks(title)
    assert any("<<" in block for block in blocks)
    for block in blocks:
        for match in _HEREDOC.finditer(block):
            assert re.search(rf"^{match['word']}$", block[match.end() :], re.M), block


def make_run_recipe() -> list[str]:
    """The ``run`` target's commands, install lines dropped, make variables expanded."""
    lines = (ROOT / "Makefile").read_text().split("\nrun:", 1)[1].splitlines()[1:]
    recipe = [line.strip() for line in lines[: next(
        i for i, line in enumerate(lines) if not line.startswith("\t")
    )]]  # fmt: skip
    return [
        line.replace("$(PY)", ".venv/bin/python")
        .replace("$(VENV)", ".venv")
        # No PORT given: the configured port (which the tree fixture moved).
        .replace(" $(SERVE_PORT)", "")
        for line in recipe
        if "pip install" not in line
    ]


class Server:
    """The endpoint a quick-start block started, stopped with SIGTERM like Ctrl-C."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None

    def start(self, command: str, cwd: Path) -> None:
        self.stop()
        self.proc = subprocess.Popen(
            ["sh", "-c", f"exec {command}"],
            cwd=cwd,
            env=child_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # the first line says it is listening
        assert "kafka-scram endpoint ready" in line, self.proc.stderr and self.proc.stderr.read()

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGTERM)
            _, stderr = self.proc.communicate(timeout=30)
            assert self.proc.returncode == 0, stderr
            self.proc = None


def user_tree(path: Path) -> Path:
    """A fresh clone's user-facing files in ``path``, with the running venv as ``.venv``."""
    for name in ("config", "examples"):
        shutil.copytree(ROOT / name, path / name)
    # The venv running the tests (a worktree has none of its own); child_env puts
    # this checkout first on PYTHONPATH.
    (path / ".venv").symlink_to(sys.prefix)
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    """A fresh clone's user-facing files, with the endpoint moved to a free port."""
    port = free_port()
    user_tree(tmp_path)
    config = tmp_path / "config" / "server.properties"
    config.write_text(config.read_text().replace("127.0.0.1:9092", f"127.0.0.1:{port}"))
    yield tmp_path, port


@pytest.mark.slow
def test_quick_start_runs_as_written(tree: tuple[Path, int]) -> None:
    cwd, port = tree
    server = Server()
    outputs: list[str] = []
    try:
        for block in quick_start_blocks():
            block = block.replace("127.0.0.1:9092", f"127.0.0.1:{port}")
            if block.strip() == "make run":
                *before, serve = make_run_recipe()
                for command in before:
                    subprocess.run(["sh", "-c", command], cwd=cwd, env=child_env(), check=True)
                server.start(serve, cwd)
            elif block.lstrip().startswith(".venv/bin/kafka-scram serve"):
                server.start(block.strip(), cwd)
            else:
                done = subprocess.run(
                    ["sh", "-ec", block],
                    cwd=cwd,
                    env=child_env(),
                    input="alice-secret\n",  # what the guide types at the password prompt
                    capture_output=True,
                    text=True,
                    timeout=120,
                    check=False,
                )
                assert done.returncode == 0, (block, done.stdout, done.stderr)
                outputs.append(done.stdout)
    finally:
        server.stop()
    assert "Completed updating config for user alice." in outputs[0]
    assert "topics: []" in outputs[1]  # alice's user login
    token = (cwd / ".kafka-scram" / "alice-token.properties").read_text()
    assert "tokenauth=true" in token and 'username=""' not in token
    assert "brokers:" in outputs[-1] and "topics: []" in outputs[-1]  # the token login
    # Secrets stay under the git-ignored state directory.
    tracked = (cwd / "config" / "server.properties").read_text()
    assert not re.search(r"^\s*delegation\.token\.secret\.key", tracked, re.M)


def test_readme_installs_only_from_the_source_tree() -> None:
    for path in [README, *ROOT.glob("docs/*.md"), *ROOT.glob("examples/*.py")]:
        text = path.read_text(encoding="utf-8")
        assert "install kafka-scram" not in text, path  # the package is on no index
        assert "'kafka-scram[" not in text and " kafka-scram[" not in text, path


def test_make_run_installs_no_test_tools() -> None:
    makefile = (ROOT / "Makefile").read_text()
    target = makefile.split("$(VENV)/.run-installed:", 1)[1].split("\n\n", 1)[0]
    extras = re.findall(r"pip install -q -e '\.\[([^\]]*)\]'", target)
    assert extras, target
    optional = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    installed = [req for extra in extras[0].split(",") for req in optional[extra]]
    assert installed and not [r for r in installed for tool in TEST_TOOLS if tool in r]
    assert "run: $(VENV)/.run-installed" in makefile
    for extra in ("kafka-python", "aiokafka", "confluent", "pure-sasl", "spark"):
        assert extra in optional


def test_compatibility_notes_the_describe_difference() -> None:
    text = (ROOT / "docs" / "compatibility.md").read_text(encoding="utf-8")
    marker = "--describe` without `--owner-principal`"
    row = next(line for line in text.splitlines() if marker in line)
    assert "up to Kafka 3.4" in row and "since 3.5" in row
